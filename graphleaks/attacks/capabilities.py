"""What an attack needs from a target, what a target offers, and which attacks can run.

Each attack declares its needs (:meth:`graphleaks.attacks.base.Attack.needs`): the outputs it
reads (its ``requires``) plus the knowledge and resources its threat model assumes: the true
labels of the query nodes, node features, the graph, auxiliary data to train shadow or
reference models, the target's architecture. A target offers a set of capabilities (a
graphleaks-trained target offers all of them; a scores-only target only its exported outputs
and labels). The audit runs the attacks whose needs are met and lists the others with what
is missing; an attack the user named whose needs are unmet is refused before any work
(ART's ``_estimator_requirements``, PyG's ``ExplainerAlgorithm.supports()``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING

from graphleaks.errors import CapabilityError

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.attacks.base import Attack, Output, ThreatModel


class Capability(str, Enum):
    """One thing an attack may need from a target; the first seven mirror ``Output``."""

    LABELS = "labels"
    POSTERIORS = "posteriors"
    LOGITS = "logits"
    EMBEDDINGS = "embeddings"
    PARAMETERS = "parameters"
    FEATURE_QUERIES = "feature_queries"
    RELEASED_EMBEDDINGS = "released_embeddings"
    TRUE_LABELS = "true_labels"
    FEATURES = "features"
    GRAPH = "graph"
    REFERENCE_MODELS = "reference_models"
    ARCHITECTURE = "architecture"
    GRAPH_QUERIES = "graph_queries"

    @classmethod
    def of_output(cls, output: Output) -> Capability:
        """The capability of reading ``output``."""
        return cls(output.value)


#: Everything a target graphleaks trained itself offers (its exposure may remove outputs).
ALL_CAPABILITIES = frozenset(Capability)



def target_capabilities(exposed: Iterable[Output]) -> frozenset[Capability]:
    """What a graphleaks-trained target offers when its deployment exposes ``exposed``.

    graphleaks holds the graph, features, labels, auxiliary nodes and architecture of a
    target it trained, so only the exposed outputs can be missing.
    """
    output_values = {"labels", "posteriors", "logits", "embeddings", "parameters",
                     "feature_queries", "released_embeddings"}
    knowledge = {c for c in Capability if c.value not in output_values}
    return frozenset(knowledge | {Capability.of_output(o) for o in exposed})


_DESCRIPTIONS: dict[Capability, str] = {
    Capability.LABELS: "predicted labels",
    Capability.POSTERIORS: "posteriors",
    Capability.LOGITS: "logits",
    Capability.EMBEDDINGS: "intermediate embeddings",
    Capability.PARAMETERS: "the model's parameters",
    Capability.FEATURE_QUERIES: "queries with chosen features",
    Capability.RELEASED_EMBEDDINGS: "released node embeddings",
    Capability.TRUE_LABELS: "the query nodes' true labels",
    Capability.FEATURES: "node features",
    Capability.GRAPH: "the graph's edges",
    Capability.REFERENCE_MODELS: "auxiliary data to train shadow/reference models",
    Capability.ARCHITECTURE: "the target's architecture",
    Capability.GRAPH_QUERIES: ("queries on graphs of another size than the served one "
                               "(edges dropped or removed; a model exported with static "
                               "shapes answers only the graph it was exported with)"),
}


def describe(capabilities: Iterable[Capability]) -> str:
    """``NAME (what it is)`` for each capability, sorted, comma-separated."""
    caps = sorted(set(capabilities), key=lambda c: c.value)
    return ", ".join(f"{c.value.upper()} ({_DESCRIPTIONS[c]})" for c in caps)


def derived_needs(requires: Iterable[Output], threat_model: ThreatModel) -> frozenset[Capability]:
    """The needs implied by an attack's ``requires`` and its threat model.

    The threat model states what the adversary knows; knowledge it grants is assumed used,
    so this may over-state an attack whose configuration does not use it (such an attack
    overrides :meth:`Attack.needs`).
    """
    # an attack that declares no ``requires`` reads the outputs its threat model grants
    reads = frozenset(requires) or frozenset(threat_model.outputs)
    needs = {Capability.of_output(o) for o in reads}
    if threat_model.label_knowledge:
        needs.add(Capability.TRUE_LABELS)
    if threat_model.feature_knowledge:
        needs.add(Capability.FEATURES)
    if threat_model.graph_knowledge != "none":
        needs.add(Capability.GRAPH)
    if threat_model.shadow_data != "none":
        needs.add(Capability.REFERENCE_MODELS)
    if threat_model.architecture_knowledge:
        needs.add(Capability.ARCHITECTURE)
    return frozenset(needs)


def narrowed_threat_model(threat_model: ThreatModel, needs: Iterable[Capability]) -> ThreatModel:
    """The threat model stripped of knowledge the attack does not need (for the report).

    An attack run without its shadow calibration, for instance, should not be reported as
    an adversary holding auxiliary data and the architecture.
    """
    n = frozenset(needs)
    return dataclasses.replace(
        threat_model,
        label_knowledge=threat_model.label_knowledge and Capability.TRUE_LABELS in n,
        feature_knowledge=threat_model.feature_knowledge and Capability.FEATURES in n,
        graph_knowledge=threat_model.graph_knowledge if Capability.GRAPH in n else "none",
        shadow_data=threat_model.shadow_data if Capability.REFERENCE_MODELS in n else "none",
        architecture_knowledge=(threat_model.architecture_knowledge
                                and Capability.ARCHITECTURE in n),
    )


#: What the harness needs to pose a task's challenge (its truth), beyond the attack's needs:
#: link and reconstruction challenges are node pairs whose truth is the graph's edges.
TASK_NEEDS: dict[str, frozenset[Capability]] = {
    "link": frozenset({Capability.GRAPH}),
    "reconstruction": frozenset({Capability.GRAPH}),
}


def missing_needs(attack: Attack, offered: Iterable[Capability]) -> frozenset[Capability]:
    """What ``attack`` (and the challenge of its task) needs that ``offered`` lacks."""
    needs = attack.needs() | TASK_NEEDS.get(attack.task.value, frozenset())
    return needs - frozenset(offered)


def unmet_reason(attack: Attack, missing: Iterable[Capability], target_kind: str) -> str:
    """One line: which attack, what it needs, and which target lacks it."""
    return (f"{attack.name} needs {describe(missing)}, which {target_kind} does not offer")


def partition(
    attacks: Sequence[Attack], offered: Iterable[Capability], target_kind: str
) -> tuple[list[Attack], dict[str, str]]:
    """The attacks whose needs ``offered`` meets, and the others with the missing needs."""
    have = frozenset(offered)
    runnable: list[Attack] = []
    skipped: dict[str, str] = {}
    for attack in attacks:
        missing = missing_needs(attack, have)
        if missing:
            skipped[attack.name] = unmet_reason(attack, missing, target_kind)
        else:
            runnable.append(attack)
    return runnable, skipped


def require_all(attacks: Sequence[Attack], offered: Iterable[Capability],
                target_kind: str) -> None:
    """Refuse, before any work, named attacks whose needs are unmet.

    Raises:
        CapabilityError: Naming the first such attack and every capability it misses.
    """
    _, skipped = partition(attacks, offered, target_kind)
    if skipped:
        name, why = next(iter(skipped.items()))
        raise CapabilityError(f"{why}; drop --attack {name} or audit a target that offers it")

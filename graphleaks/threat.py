"""The adversary vocabulary a report is written in: tasks, outputs and threat models.

Torch-free on purpose: reading a report (``graphleaks check``, ``AuditReport.from_json``, the
HTML page) decodes threat models, and CI gates run ``check`` after every build, so importing
this module must not pay for torch. :mod:`graphleaks.attacks.base` re-exports every name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, get_args

from graphleaks.errors import InvalidConfigError

__all__ = ["ALL_OUTPUTS", "GRAPH_VIEWS", "THREAT_MODEL_CHOICES", "Access", "GraphKnowledge",
           "GraphView", "Output", "ShadowData", "Task", "ThreatModel"]

#: The graph a query is evaluated in (``--query-graph``); :mod:`graphleaks.models.target`
#: re-exports both names. Here so that checking the option imports no torch.
GraphView = Literal["target", "full", "partitioned", "zero_hop"]
GRAPH_VIEWS: tuple[str, ...] = ("target", "full", "partitioned", "zero_hop")


class Task(str, Enum):
    """What an attack infers."""

    MEMBERSHIP = "membership"
    LINK = "link"
    ATTRIBUTE = "attribute"
    RECONSTRUCTION = "reconstruction"
    #: whole graphs as records (graph classification): was this graph in the training set
    GRAPH_MEMBERSHIP = "graph_membership"
    #: Was this pair a training edge of a link predictor (the edge unit; issue 25)?
    EDGE_MEMBERSHIP = "edge_membership"


class Output(str, Enum):
    """What a target exposes to an adversary."""

    LABELS = "labels"
    POSTERIORS = "posteriors"
    LOGITS = "logits"
    EMBEDDINGS = "embeddings"
    PARAMETERS = "parameters"
    FEATURE_QUERIES = "feature_queries"
    RELEASED_EMBEDDINGS = "released_embeddings"


ALL_OUTPUTS = frozenset(Output)


Access = Literal["blackbox", "graybox", "whitebox"]
GraphKnowledge = Literal["none", "partial", "full"]
ShadowData = Literal["none", "same_distribution", "disjoint_subgraph"]

#: The accepted spellings of each string field of :class:`ThreatModel` (exact, lower case).
THREAT_MODEL_CHOICES: dict[str, tuple[str, ...]] = {
    "access": get_args(Access),
    "graph_knowledge": get_args(GraphKnowledge),
    "shadow_data": get_args(ShadowData),
}
_THREAT_MODEL_FLAGS = ("feature_knowledge", "label_knowledge", "architecture_knowledge",
                       "defense_knowledge")


@dataclass(frozen=True)
class ThreatModel:
    """The adversary's access and knowledge, validated when built.

    The query budget is not a field of the threat model: it belongs to the deployment. An
    audit of a served model (``graphleaks audit endpoint --budget N``) counts requests of the
    endpoint protocol, plans every attack's declared cost
    (:meth:`graphleaks.attacks.base.Attack.query_cost`) against the budget before the first
    query and refuses any query past it; its report records the budget and the queries made
    per attack (``config.queries``). In-process audits answer rows, whole graphs or model
    parameters, which no single query count measures, and state no budget.

    Attributes:
        access: ``blackbox``, ``graybox`` or ``whitebox``.
        outputs: What the adversary may read from the target.
        graph_knowledge: ``none``, ``partial`` or ``full`` knowledge of the edges.
        feature_knowledge: Whether the adversary knows the query nodes' features.
        label_knowledge: Whether the adversary knows the query nodes' true labels.
        shadow_data: ``none``, ``same_distribution`` or ``disjoint_subgraph`` (auxiliary
            nodes disjoint from everything the target used).
        architecture_knowledge: Whether the adversary knows the target's architecture and
            training hyperparameters (needed to train shadow models).
        defense_knowledge: Whether the adversary knows the target's defense mechanism and its
            parameters (Kerckhoffs's principle; only the private data and the noise stay
            secret). Shadow, reference and calibration models are then trained through the
            same defense with independent noise. False keeps the defense-unaware adversary
            (plain models on clean population data) for comparison.

    Raises:
        InvalidConfigError: For a string field outside its choices (exact spelling: ``Full``
            is refused, not normalised, so a report only ever holds the canonical value), a
            flag that is not a bool, or an output that is not an :class:`Output`.
    """

    access: Access = "blackbox"
    outputs: frozenset[Output] = frozenset({Output.POSTERIORS})
    graph_knowledge: GraphKnowledge = "none"
    feature_knowledge: bool = True
    label_knowledge: bool = False
    shadow_data: ShadowData = "none"
    architecture_knowledge: bool = False
    defense_knowledge: bool = True

    def __post_init__(self) -> None:
        # Deviation from "the constructor stores" (design rule 2): a threat model is plain data
        # written by attack authors and decoded from reports, with no config validation step
        # of its own, so the constructor is the one place every path passes through.
        for name, choices in THREAT_MODEL_CHOICES.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise InvalidConfigError(
                    f"ThreatModel.{name}={value!r} is not a choice; use one of: "
                    f"{', '.join(choices)}")
        for name in _THREAT_MODEL_FLAGS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise InvalidConfigError(f"ThreatModel.{name}={value!r} must be true or false")
        outputs = self.outputs
        if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Iterable):
            raise InvalidConfigError(f"ThreatModel.outputs={outputs!r} must be a set of "
                                     f"outputs: {', '.join(o.value for o in Output)}")
        parsed = set()
        for o in outputs:
            if isinstance(o, Output):
                parsed.add(o)
            elif isinstance(o, str) and o in Output._value2member_map_:
                parsed.add(Output(o))
            else:
                raise InvalidConfigError(f"ThreatModel.outputs holds {o!r}; use outputs "
                                         f"among: {', '.join(o.value for o in Output)}")
        object.__setattr__(self, "outputs", frozenset(parsed))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThreatModel:
        """Decode :meth:`to_dict` output, including a version-1 report's threat model.

        Version-1 reports carry ``query_budget: null`` (it was declared, never set); that key
        is dropped. Any other unknown key, or a non-null budget, is refused by name.

        Raises:
            InvalidConfigError: For an unknown key or an invalid value.
        """
        d = dict(data)
        if "query_budget" in d and d.pop("query_budget") is not None:
            raise InvalidConfigError("ThreatModel.query_budget is not supported: no attack "
                                     "ever enforced it; remove it from the threat model")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InvalidConfigError(f"ThreatModel has no field {unknown[0]!r}; its fields "
                                     f"are: {', '.join(sorted(known))}")
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        d = dataclasses.asdict(self)
        d["outputs"] = sorted(o.value for o in self.outputs)
        return d

    def describe(self) -> str:
        """One line for reports and ``graphleaks list attacks``."""
        parts = [self.access, "outputs=" + ",".join(sorted(o.value for o in self.outputs))]
        if self.label_knowledge:
            parts.append("knows query labels")
        if self.graph_knowledge != "none":
            parts.append(f"graph={self.graph_knowledge}")
        if self.shadow_data != "none":
            parts.append(f"shadow={self.shadow_data}")
        if self.architecture_knowledge:
            parts.append("knows architecture")
        parts.append("knows the defense" if self.defense_knowledge else "defense-unaware")
        return "; ".join(parts)

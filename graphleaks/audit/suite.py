"""Audit suites: which attacks a default audit runs, and at which budgets.

A default audit runs every registered attack whose required outputs the deployment exposes;
attacks that join the registry join the default audit. A suite only sets budgets: each
override applies to an attack whose ``Config`` has that field and is ignored otherwise, so
a new attack runs with its own defaults until the suite learns about it.

Example:
    >>> s = get_suite("quick")
    >>> s.config_for("lira_mia", {"num_references", "ref_epochs"})["num_references"]
    2
    >>> sorted(SUITES)
    ['quick', 'standard', 'thorough']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphleaks.errors import InvalidConfigError
from graphleaks.threat import ALL_OUTPUTS, Output

if TYPE_CHECKING:  # the attacks package imports torch and PyG: seconds a bad --suite never needs
    from graphleaks.attacks.base import Attack


@dataclass(frozen=True)
class Suite:
    """Budgets of a default audit.

    Attributes:
        name: ``quick``, ``standard`` or ``thorough``.
        n_bootstrap: Bootstrap replicates per interval.
        overrides: Config field overrides per attack name; ``"*"`` applies to every attack.
            A field an attack's config lacks is skipped.
        description: One line for ``--help`` and the report.
        canaries: Canaries of the canary audit a defended target gets by default (one per
            covered unit; each costs one extra target training).
        attack_cpu_s: Most process CPU seconds one attack's inference-API queries may take,
            estimated before it runs (queries × the target's measured cost per query); an
            attack named by the user over it is refused with the estimate, the default audit
            runs it with fewer queries (stated in its notes) or skips it.
    """

    name: str
    n_bootstrap: int
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    description: str = ""
    canaries: int = 1000
    attack_cpu_s: float = 300.0

    def config_for(self, attack: str, fields: set[str]) -> dict[str, Any]:
        """The overrides of ``attack`` restricted to the config ``fields`` it has."""
        merged = {**self.overrides.get("*", {}), **self.overrides.get(attack, {})}
        return {k: v for k, v in merged.items() if k in fields}


# Scale rules. Each is a config field of the attack, so the report's config records it, and
# the attack's notes give the value that ran whenever a rule changed anything.
#
# Attribute inference's simulated DeepWalk release costs about 11 s of CPU per walk per node
# at 100k nodes (gensim skip-gram, ~5 µs per token; 5 walks × 20 steps: 60-75 s). Its corpus
# is capped at WALK_TOKENS tokens: walks per node are lowered first (down to one walk from
# every node), then the walk length (down to 2 × window = 10). Cora (0.27M tokens), 10k
# (1M) and 100k nodes (10M) are at or under it, so their audits do not move; a 1M-node
# graph runs 1 walk of 10 steps (10M tokens instead of 100M). The price is the attack's
# power, not only its cost: at 100k nodes (CSBM, 4 classes) F1 micro was 0.338 with 5 walks
# and 0.252 with 2 and 0.250 with 1, i.e. chance, so at 1M the capped attack measures cost,
# not leakage; the notes say so by giving the corpus that ran. ``thorough`` keeps the
# attack's own, uncapped, defaults.
WALK_TOKENS = 10_000_000

# LinkTeller's ``sampler="auto"`` keeps the paper's uniform node sample wherever it is
# expected to hold at least two edges (Cora at 100 or 500 nodes, so Cora's default audit does
# not move) and seeds the sample with random private edges on sparse graphs, where 100
# uniform nodes hold none (a 100k-node CSBM: 0.5 expected) and LinkTeller would be skipped.
# Budgets were sized on bundled Cora (2,708 nodes): `standard` keeps the whole default audit
# near 30 s on two cores; the reference/shadow counts and LinkTeller's node sample dominate.
SUITES: dict[str, Suite] = {
    "quick": Suite("quick", 200, {
        "confidence_mia": {"threshold": "none"},  # skips the shadow model
        "lira_mia": {"num_references": 2, "ref_epochs": 15},
        "shadow_mia": {"num_shadows": 1},
        "linkteller": {"n_nodes": 60, "sampler": "auto"},
        "graph_reconstruction": {"max_epochs": 100},
        "embedding_cluster_mia": {"ae_epochs": 50, "kmeans_init": 2},
        "attribute_inference": {"walks_per_node": 3, "walk_length": 20,
                                "max_walk_tokens": WALK_TOKENS},
    }, "smoke test: fewest models and queries, 200 bootstrap replicates", canaries=100,
        attack_cpu_s=60.0),
    "standard": Suite("standard", 1000, {
        "lira_mia": {"num_references": 2, "ref_epochs": 30},
        "shadow_mia": {"num_shadows": 1},
        "linkteller": {"n_nodes": 100, "sampler": "auto"},
        "graph_reconstruction": {"max_epochs": 200},
        "embedding_cluster_mia": {"ae_epochs": 100, "kmeans_init": 3},
        "attribute_inference": {"walks_per_node": 5, "walk_length": 20,
                                "max_walk_tokens": WALK_TOKENS},
    }, "the default: every applicable attack at budgets sized for ~30 s on Cora",
        canaries=1000),
    "thorough": Suite("thorough", 2000, {
        "lira_mia": {"num_references": 16},
        "shadow_mia": {"num_shadows": 4},
        "linkteller": {"n_nodes": 500, "sampler": "auto"},
    }, "attack defaults or more: more reference/shadow models and queries", canaries=3000,
        attack_cpu_s=3600.0),
}
DEFAULT_SUITE = "standard"


def get_suite(name: str | Suite) -> Suite:
    """The suite called ``name``.

    Raises:
        InvalidConfigError: For an unknown name, listing the known ones.
    """
    if isinstance(name, Suite):
        return name
    key = str(name).strip().lower()
    if key not in SUITES:
        raise InvalidConfigError(f"--suite {name!r} is unknown; choose one of: "
                                 f"{', '.join(SUITES)}")
    return SUITES[key]


def applicable_attacks(exposed: frozenset[Output] = ALL_OUTPUTS) -> list[str]:
    """Registry names of every attack whose required outputs ``exposed`` grants."""
    from graphleaks.attacks import registry

    return [n for n in registry if registry.get(n).requires <= exposed]


def build_attack(name: str, suite: Suite, params: Mapping[str, Any] | None = None) -> Attack:
    """Attack ``name`` with the suite's budgets, then the user's ``params`` on top.

    ``params`` are typed values (from the resolver, TOML or Python); they are type-checked
    against the config's declared field types here, so every edge builds attacks alike.

    Raises:
        InvalidConfigError: For an unknown attack, field or a value of the wrong type.
    """
    from graphleaks._params import Owner, resolve_fields
    from graphleaks.attacks import registry
    from graphleaks.plugins import check_used

    cls = registry.get(name)
    fields = {f.name for f in dataclasses.fields(cls.Config)}
    typed = resolve_fields(Owner(cls.name, "attack", cls.Config), dict(params or {}),
                           text=False)
    attack = cls(**{**suite.config_for(cls.name, fields), **typed})
    check_used(attack, typed)  # a user's field the mode ignores; the suite's may be unused
    return attack

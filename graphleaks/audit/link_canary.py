"""One-run canary audits of a link defense in the edge unit (Steinke, Nasr, Jagielski 2023).

The auditor draws ``m`` canary edges: distinct random pairs that are not edges of the graph
and not in any list of the edge split. Each joins the split's **member edges** (the training
positives, and the message-passing graph) independently with probability 1/2 (a seeded
coin), *before* the defense runs. One defended link predictor is trained on the canaried
split, every canary is scored, the ``k`` highest scores are guessed "in" and the ``k`` lowest
"out", and the correct guesses give an ε lower bound with
:func:`graphleaks.metrics.one_run.one_run_bound` (the bound :mod:`graphleaks.audit.canary`
uses for node targets). Audited ε above the ledger's claimed ε is a violation.

How a canary is scored (``attack``):

``score``
    The trained target's pair score (logit) of the canary, queried on its served graph:
    the black-box view, for every defense.
``released``
    1 when the canary is in the graph the defense released, else 0: for EdgeRand and
    LapGraph this is the optimal test of their release (everything else is
    post-processing), so it is the tightest audit of them.
``auto``
    ``released`` when the defense released a graph, else ``score``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._arrays import unique_sorted
from graphleaks._validation import validate
from graphleaks.data.edge_splits import PAIR_LISTS, EdgeMembershipSplit, EdgeSplitConfig
from graphleaks.data.pairs import contains, edge_keys, pair_keys, sample_non_edges
from graphleaks.defenses.link import LinkDefense, get_link_defense
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import check_canary_count, guess_count, one_run_bound
from graphleaks.models.link_predictor import LinkPredictorSpec
from graphleaks.models.link_target import TrainedLinkTarget
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.report.records import CanaryAudit
from graphleaks.seeding import derive_seed

LINK_CANARY_ATTACKS = ("auto", "score", "released")


@dataclass(frozen=True)
class LinkCanaryConfig:
    """Parameters of a one-run edge canary audit of a link defense.

    Attributes:
        num_canaries: m, canary edges (each inserted with probability 1/2).
        guess_fraction: Fraction of canaries guessed on (half "in", half "out").
        attack: ``auto``, ``score`` or ``released`` (see the module docstring).
        confidence: Confidence level of the lower bound.
    """

    num_canaries: int = field(default=1000, metadata={"range": (1, 1_000_000)})
    guess_fraction: float = field(default=0.5, metadata={"range": (0.0, 1.0),
                                                          "closed": "right"})
    attack: str = field(default="auto", metadata={"choices": LINK_CANARY_ATTACKS})
    confidence: float = field(default=0.95, metadata={"range": (0.0, 1.0),
                                                      "closed": "neither"})

    def check(self) -> None:
        """Enough guesses for the confidence."""
        check_canary_count(self.num_canaries, self.guess_fraction, self.confidence,
                           most=1_000_000)


def draw_canary_edges(graph: Data, split: EdgeMembershipSplit, m: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``m`` distinct uniform pairs ``[m, 2]`` (``u < v``) that are neither edges of the
    graph nor in any pair list of ``split``, among the split's training nodes.

    Raises:
        InvalidConfigError: If the graph has too few free pairs for ``m`` canaries.
    """
    n = split.num_nodes
    taken = unique_sorted(np.concatenate(
        [edge_keys(graph.edge_index, n)]
        + [pair_keys(getattr(split, name), n) for name in PAIR_LISTS]))
    pool = split.training_nodes()
    size = n if pool is None else len(pool)
    free = size * (size - 1) // 2 - len(taken)
    if m > free // 2:  # rejection sampling needs free pairs to spare
        raise InvalidConfigError(
            f"The num_canaries parameter must be at most {max(free // 2, 0)} for an edge "
            f"audit of this graph (half its free pairs). Got {m!r} instead.")
    return sample_non_edges(m, n, taken, rng, nodes=pool)


def _with_members(graph: Data, split: EdgeMembershipSplit,
                  pairs: np.ndarray) -> tuple[Data, EdgeMembershipSplit]:
    """The graph and split with ``pairs`` added as member edges."""
    n = split.num_nodes
    keys = np.sort(np.concatenate([pair_keys(split.members, n), pair_keys(pairs, n)]))
    members = np.stack([keys // n, keys % n], axis=1)
    g = graph.clone()
    if len(pairs):
        both = torch.as_tensor(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
        g.edge_index = torch.cat([graph.edge_index, both.long()], dim=1)
    return g, dataclasses.replace(split, members=members)


def score_link_canaries(target: TrainedLinkTarget, pairs: np.ndarray,
                        attack: str) -> tuple[np.ndarray, str]:
    """Each canary's score under ``attack`` (resolving ``auto``) and the attack used."""
    if attack == "auto":
        attack = "released" if target.released_edges is not None else "score"
    if attack == "released":
        if target.released_edges is None:
            raise InvalidConfigError(
                f"The attack parameter 'released' needs a defense that releases a graph; "
                f"{target.defense} does not. Valid: auto, score.")
        n = target.split.num_nodes
        released = edge_keys(target.released_edges, n)
        return contains(released, pair_keys(pairs, n)).astype(np.float64), attack
    # Scored as one batch: under a split that drops queried pairs from the inference graph,
    # every canary is scored without itself in the message passing.
    return np.nan_to_num(target.score_pairs(pairs), nan=0.0, posinf=0.0, neginf=0.0), attack


def link_canary_audit(
    graph: Data, *, defense: str | LinkDefense = "none",
    defense_params: dict[str, Any] | None = None, spec: LinkPredictorSpec | None = None,
    split: EdgeSplitConfig | None = None, config: LinkCanaryConfig | None = None, seed: int,
    **overrides: Any,
) -> CanaryAudit:
    """Plant canary edges among the members, train one defended link target, bound its ε.

    Args:
        graph: The graph (canaries are added to a copy).
        defense: Link defense name (:data:`graphleaks.defenses.link.link_registry`) or
            instance.
        defense_params: Overrides of the defense's config (with a name).
        spec: The link predictor (default: the defense's own).
        split: How the edge split is drawn.
        config: The audit's parameters; ``overrides`` replace single fields.
        seed: Root seed of the split, canaries, coins, training and tie-breaking.
        **overrides: Fields of :class:`LinkCanaryConfig`.

    Returns:
        The :class:`~graphleaks.report.records.CanaryAudit` (unit ``edge``).

    Raises:
        InvalidConfigError: For an invalid config, too few canaries, or a defense whose
            guarantee is not in the edge unit.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> a = link_canary_audit(tiny_graph(), defense="edgerand",
        ...                       defense_params={"epsilon": 1.0},
        ...                       spec=LinkPredictorSpec(epochs=2, embedding_dim=8),
        ...                       num_canaries=20, seed=0)
        >>> a.unit, a.attack, a.claimed_epsilon, a.bound.num_guesses
        ('edge', 'released', 1.0, 10)
    """
    cfg = validate(LinkCanaryConfig(**{**asdict(config or LinkCanaryConfig()), **overrides}),
                   "link_canary_audit")
    d = defense if isinstance(defense, LinkDefense) else get_link_defense(defense,
                                                                         defense_params)
    d.validate()
    if d.privacy_unit not in (PrivacyUnit.EDGE, PrivacyUnit.NONE):
        raise InvalidConfigError(f"{d.name} protects unit {d.privacy_unit.value}, not edges; "
                                 "an edge canary audit needs an edge-level defense")
    if cfg.attack == "released" and not d.releases_graph:
        raise InvalidConfigError(f"The attack parameter 'released' needs a defense that "
                                 f"releases a graph; {d.name} does not. Valid: auto, score.")
    # a bipartite split (the user-item graph's default) draws its non-edges by node_type
    esplit = EdgeMembershipSplit.draw(graph.edge_index, graph.num_nodes, split,
                                      seed=derive_seed(seed, "split"),
                                      node_type=graph.get("node_type"))
    rng = np.random.default_rng(derive_seed(seed, "canaries"))
    m = cfg.num_canaries
    pairs = draw_canary_edges(graph, esplit, m, rng)
    coins = rng.random(m) < 0.5
    g2, split2 = _with_members(graph, esplit, pairs[coins])
    target = d.fit(g2, split2, spec=spec, seed=derive_seed(seed, "target"))
    scores, used = score_link_canaries(target, pairs, cfg.attack)
    r = guess_count(m, cfg.guess_fraction, cfg.confidence)
    led = target.ledger
    how = ("presence in the released graph" if used == "released"
           else "the target's pair score (logit)")
    bound = one_run_bound(coins, scores, k_pos=r // 2, k_neg=r - r // 2, delta=led.delta,
                          confidence=cfg.confidence, seed=derive_seed(seed, "guesses"))
    return CanaryAudit(
        unit="edge", defense=d.name, attack=used, claimed_epsilon=float(led.epsilon),
        claimed_delta=float(led.delta), bound=bound,
        violation=bool(bound.epsilon_lb > led.epsilon), num_inserted=int(coins.sum()),
        seed=seed,
        notes=(f"link target: {m} canary edges between random non-adjacent training nodes, "
               "each added to the member edges (positives and message passing) with "
               "probability 1/2",
               f"scored by {how}",
               f"{r} guesses (top {r // 2} in, bottom {r - r // 2} out), one target "
               "training"))


__all__ = ["LINK_CANARY_ATTACKS", "LinkCanaryConfig", "draw_canary_edges",
           "link_canary_audit", "score_link_canaries"]

"""One-run canary audits of a defense, per privacy unit (Steinke, Nasr, Jagielski 2023).

The auditor plants ``m`` canaries, each independently with probability 1/2, *before* the
defense runs; trains one target on the canaried graph; lets an attack score every canary;
guesses "in" on the ``k`` highest scores and "out" on the ``k`` lowest; and turns the number
of correct guesses into an ε lower bound (Steinke et al.) and a GDP μ lower bound (the one-run
f-DP analysis of Mahloujifar, Melis and Chaudhuri 2025) with
:func:`graphleaks.metrics.one_run.one_run_bound`. One audit costs one target training.

Units (the neighbouring relation the canary toggles):

* ``edge``: a canary is an edge between a random pair of non-adjacent nodes the defense treats
  as private input (two training nodes under the inductive protocol). Attacks: ``released``
  (is the pair in the released graph? optimal for edge-release mechanisms such as EdgeRand and
  LapGraph) or ``influence`` (LinkTeller's influence of one endpoint's features on the other's
  logits, through the inference API; any target). ``auto`` picks ``released`` when the
  defense releases a graph.
* ``node_feature``: a canary is a new node's feature vector, a planted pattern or its
  complement, run through the defense's local feature mechanism (LPGNN, HeteroRR) without
  training a model; attack ``released`` scores the released row. See
  :mod:`graphleaks.audit.canary_features`.
* ``node``: a canary is a new node with shuffled features (a real node's feature values in
  random order), a uniformly random label and ``canary_degree`` random edges to training nodes;
  an inserted canary is a training node. Attack ``loss``: the canary's log posterior of its
  random label, queried with its edges (a random label is fitted only by memorisation).

A unit is audited only against a defense whose guarantee covers it (node-level DP covers
edges); a non-private target (unit ``none``) can be audited for either unit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._validation import validate
from graphleaks.attacks.linkteller import influence_matrix
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.defenses import registry as defense_registry
from graphleaks.defenses._edge_release import pair_keys
from graphleaks.defenses.base import Defense
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import check_canary_count, guess_count, one_run_bound
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.report.records import CanaryAudit  # the record lives in the torch-free decoder
from graphleaks.seeding import derive_seed

UNITS = ("edge", "node", "node_feature")
ATTACKS = {"edge": ("auto", "released", "influence"), "node": ("auto", "loss"),
           "node_feature": ("auto", "released")}
COVERS = {  # which audit units a defense's stated privacy unit protects
    PrivacyUnit.EDGE: ("edge",),
    PrivacyUnit.NODE: ("edge", "node"),
    PrivacyUnit.NONE: ("edge", "node"),
    # local feature mechanisms (LPGNN, HeteroRR): graphleaks.audit.canary_features
    PrivacyUnit.NODE_FEATURE: ("node_feature",),
    PrivacyUnit.NODE_FEATURE_AND_LABEL: ("node_feature",),
}



@dataclass(frozen=True)
class CanaryConfig:
    """Parameters of a one-run canary audit.

    Attributes:
        unit: ``edge``, ``node`` or ``node_feature``.
        num_canaries: m, the number of canaries (each inserted with probability 1/2).
        guess_fraction: Fraction of canaries guessed on (half "in" from the top scores, half
            "out" from the bottom); the rest are abstentions.
        attack: How canaries are scored (see the module docstring).
        confidence: Confidence level of the lower bounds.
        canary_degree: Edges of each node canary.
        influence: LinkTeller's relative perturbation Δ for the ``influence`` attack.
    """

    unit: str = field(default="edge", metadata={"choices": UNITS})
    num_canaries: int = field(default=1000, metadata={"range": (1, 1_000_000)})
    guess_fraction: float = field(default=0.5, metadata={"range": (0.0, 1.0),
                                                          "closed": "right"})
    attack: str = field(default="auto", metadata={"choices": ("auto", "released", "influence",
                                                              "loss")})
    confidence: float = field(default=0.95, metadata={"range": (0.0, 1.0),
                                                      "closed": "neither"})
    canary_degree: int = field(default=3, metadata={"range": (0, 1000)})
    influence: float = field(default=1e-4, metadata={"range": (0.0, None), "closed": "neither"})

    def check(self) -> None:
        """Cross-field rules: the attack fits the unit, and enough guesses for the confidence."""
        if self.attack not in ATTACKS[self.unit]:
            raise InvalidConfigError(
                f"The attack parameter of a {self.unit} canary audit must be one of "
                f"{{{', '.join(ATTACKS[self.unit])}}}. Got {self.attack!r} instead.")
        check_canary_count(self.num_canaries, self.guess_fraction, self.confidence,
                           most=1_000_000)


def check_unit(defense: Defense, unit: str) -> None:
    """Refuse to audit a unit the defense's guarantee does not cover.

    Raises:
        InvalidConfigError: Naming the unit and the valid ones.
    """
    covered = COVERS.get(defense.privacy_unit, ())
    if unit not in covered:
        valid = ", ".join(covered) or "none (it states no edge or node guarantee)"
        raise InvalidConfigError(
            f"The unit parameter of the canary audit must be one the defense protects: "
            f"{defense.name} protects unit {defense.privacy_unit.value}; valid: {valid}. "
            f"Got {unit!r} instead.")
    if unit == "node_feature":
        from graphleaks.audit.canary_features import check_feature_mechanism

        check_feature_mechanism(defense)


def _edge_canaries(graph: Data, pool: np.ndarray, m: int,
                   rng: np.random.Generator) -> np.ndarray:
    """``m`` distinct non-adjacent pairs ``[m, 2]`` of ``pool`` nodes, drawn uniformly."""
    n = graph.num_nodes
    keys = pair_keys(graph.edge_index, n)
    inside = np.isin(keys // n, pool) & np.isin(keys % n, pool)
    limit = (len(pool) * (len(pool) - 1) // 2 - int(inside.sum())) // 2
    if m > limit:
        # Rejection sampling needs free pairs to spare; half of them is a safe ceiling.
        raise InvalidConfigError(
            f"The num_canaries parameter must be at most {limit} for an edge audit of this "
            f"graph (half the free pairs among its {len(pool)} private nodes). Got {m!r} "
            "instead.")
    existing = set(keys.tolist())
    chosen: dict[int, tuple[int, int]] = {}
    while len(chosen) < m:
        u, v = rng.choice(pool, 2, replace=False)
        a, b = (int(u), int(v)) if u < v else (int(v), int(u))
        key = a * n + b
        if key not in existing and key not in chosen:
            chosen[key] = (a, b)
    return np.array(list(chosen.values()), dtype=np.int64)


def _with_edges(graph: Data, pairs: np.ndarray) -> Data:
    both = torch.as_tensor(np.concatenate([pairs, pairs[:, ::-1]]).T.copy(), dtype=torch.long)
    out = graph.clone()
    out.edge_index = torch.cat([graph.edge_index, both], dim=1)
    return out


def _score_edges(target: TrainedTarget, pairs: np.ndarray, attack: str,
                 influence: float) -> tuple[np.ndarray, str]:
    if attack == "auto":
        attack = "released" if target.released_edges is not None else "influence"
    if attack == "released":
        if target.released_edges is None:
            raise InvalidConfigError(
                f"The attack parameter 'released' needs a defense that releases a graph; "
                f"{target.defense} does not. Valid: auto, influence.")
        n = target.graph.num_nodes
        released = pair_keys(target.released_edges, n)
        return np.isin(pairs[:, 0] * n + pairs[:, 1], released).astype(np.float64), attack
    nodes, inv = np.unique(pairs, return_inverse=True)
    inv = inv.reshape(-1, 2)
    x = target.served_features().float()

    def query(z: torch.Tensor, rows: np.ndarray, *, scale_node: int | None = None,
              scale: float = 1.0) -> torch.Tensor:
        return target.feature_query_rows(z, rows, view="target", scale_node=scale_node,
                                         scale=scale, local=True)

    mat = influence_matrix(query, x, nodes, delta=influence)
    # Symmetrised: the auditor may perturb either endpoint.
    scores = np.maximum(mat[inv[:, 0], inv[:, 1]], mat[inv[:, 1], inv[:, 0]])
    return np.nan_to_num(scores.astype(np.float64), nan=0.0, posinf=0.0), attack


def _node_canaries(graph: Data, pool: np.ndarray, m: int, degree: int, num_classes: int,
                   rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """Features ``[m, d]``, labels ``[m]`` and neighbour ids ``[m, degree]`` of node canaries."""
    src = rng.integers(0, graph.num_nodes, m)
    x = graph.x[torch.as_tensor(src)].clone()
    for i in range(m):  # shuffle each row: real feature values, no class signal
        x[i] = x[i][torch.as_tensor(rng.permutation(x.shape[1]))]
    y = torch.as_tensor(rng.integers(0, num_classes, m), dtype=torch.long)
    nbrs = np.stack([rng.choice(pool, degree, replace=False) for _ in range(m)]) \
        if degree else np.zeros((m, 0), dtype=np.int64)
    return x, y, nbrs


def _star_edges(ids: np.ndarray, nbrs: np.ndarray) -> torch.Tensor:
    src = np.repeat(ids, nbrs.shape[1])
    dst = nbrs.reshape(-1)
    return torch.as_tensor(np.vstack([np.r_[src, dst], np.r_[dst, src]]), dtype=torch.long)


def canary_audit(
    graph: Data, *, defense: str | Defense = "none", defense_params: dict[str, Any] | None = None,
    spec: ArchitectureSpec | None = None, split: SplitConfig | None = None,
    config: CanaryConfig | None = None, seed: int, **overrides: Any,
) -> CanaryAudit:
    """Plant canaries, train one target with the defense, and bound its ε from one run.

    Args:
        graph: The graph (canaries are added to a copy).
        defense: Registry name or instance of the defense under audit.
        defense_params: Overrides of the defense's config (with a name).
        spec: Architecture and training hyperparameters.
        split: How the membership split is drawn (as :func:`train_target` draws it).
        config: The audit's parameters; ``overrides`` replace single fields.
        seed: Root seed of canaries, coins, training and tie-breaking.
        **overrides: Fields of :class:`CanaryConfig`.

    Returns:
        The :class:`CanaryAudit`.

    Raises:
        InvalidConfigError: For an invalid config, too few canaries for the confidence, or a
            unit the defense does not protect.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> a = canary_audit(tiny_graph(), defense="edgerand", defense_params={"epsilon": 1.0},
        ...                  spec=ArchitectureSpec(epochs=5), num_canaries=20, seed=0)
        >>> a.unit, a.claimed_epsilon, a.bound.num_canaries, a.bound.num_guesses
        ('edge', 1.0, 20, 10)
    """
    cfg = validate(CanaryConfig(**{**asdict(config or CanaryConfig()), **overrides}),
                   "canary_audit")
    d = defense if isinstance(defense, Defense) else \
        defense_registry.get(defense)(**(defense_params or {}))
    validate(d.config, type(d).__name__)
    check_unit(d, cfg.unit)
    if cfg.unit == "node_feature":  # no training: the mechanism's release is audited
        from graphleaks.audit.canary_features import feature_canary_audit

        return feature_canary_audit(graph, defense=d, config=cfg, seed=seed)
    spec = spec or ArchitectureSpec()
    msplit = MembershipSplit.draw(graph.num_nodes, split, seed=derive_seed(seed, "split"))
    rng = np.random.default_rng(derive_seed(seed, "canaries"))
    coins = rng.random(cfg.num_canaries) < 0.5
    pool = msplit.train if msplit.kind == "inductive" else np.arange(graph.num_nodes)
    m = cfg.num_canaries
    train_seed = derive_seed(seed, "target")
    if cfg.unit == "edge":
        pairs = _edge_canaries(graph, pool, m, rng)
        target = d.fit(_with_edges(graph, pairs[coins]), msplit, model=spec, seed=train_seed)
        scores, used = _score_edges(target, pairs, cfg.attack, cfg.influence)
        notes = (f"{m} canary edges between random non-adjacent "
                 f"{'training ' if msplit.kind == 'inductive' else ''}nodes",)
    else:
        ncls = int(graph.y.max()) + 1
        xc, yc, nbrs = _node_canaries(graph, pool, m, cfg.canary_degree, ncls, rng)
        n = graph.num_nodes
        inserted = np.flatnonzero(coins)
        ids = n + np.arange(len(inserted))
        g2 = Data(x=torch.cat([graph.x, xc[inserted]]), y=torch.cat([graph.y, yc[inserted]]),
                  edge_index=torch.cat([graph.edge_index, _star_edges(ids, nbrs[inserted])], 1),
                  num_nodes=n + len(inserted))
        split2 = MembershipSplit(kind=msplit.kind, num_nodes=n + len(inserted),
                                 train=np.r_[msplit.train, ids], val=msplit.val,
                                 test=msplit.test, aux=msplit.aux, seed=msplit.seed)
        target = d.fit(g2, split2, model=spec, seed=train_seed)
        scores, used = _score_nodes(target, xc, yc, nbrs, coins, n), "loss"
        notes = (f"{m} canary nodes (shuffled features, random label, "
                 f"{cfg.canary_degree} random edges to training nodes)",)
    r = guess_count(m, cfg.guess_fraction, cfg.confidence)
    led = target.ledger
    bound = one_run_bound(coins, scores, k_pos=r // 2, k_neg=r - r // 2, delta=led.delta,
                          confidence=cfg.confidence, seed=derive_seed(seed, "guesses"))
    return CanaryAudit(
        unit=cfg.unit, defense=d.name, attack=used, claimed_epsilon=float(led.epsilon),
        claimed_delta=float(led.delta), bound=bound,
        violation=bool(bound.epsilon_lb > led.epsilon), num_inserted=int(coins.sum()),
        seed=seed, scope="the trained target (one training run with the canaries)",
        notes=notes + (f"{r} guesses (top {r // 2} in, bottom {r - r // 2} out), "
                       f"one target training",),
    )


@torch.no_grad()
def _score_nodes(target: TrainedTarget, xc: torch.Tensor, yc: torch.Tensor, nbrs: np.ndarray,
                 coins: np.ndarray, n: int) -> np.ndarray:
    """Log posterior of each canary's label; absent canaries are queried as new nodes."""
    inserted = np.flatnonzero(coins)
    absent = np.flatnonzero(~coins)
    base = target.served_features().float()
    new_ids = base.shape[0] + np.arange(len(absent))
    x = torch.cat([base, xc[absent].float()])
    edges = torch.cat([target.edges("target"), _star_edges(new_ids, nbrs[absent])], 1)
    logits = target.query(x, edges)[-1].double()
    pos = np.empty(len(coins), dtype=np.int64)
    pos[inserted] = n + np.arange(len(inserted))
    pos[absent] = new_ids
    logp = torch.log_softmax(logits[torch.as_tensor(pos)], 1)
    return logp.gather(1, yc.view(-1, 1)).view(-1).numpy()

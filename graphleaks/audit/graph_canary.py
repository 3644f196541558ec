"""One-run canary audit of a graph classifier's defense, in the ``graph`` unit.

Steinke, Nasr and Jagielski (2023)'s one-run audit, as :mod:`graphleaks.audit.canary` runs
it for nodes and edges, with whole graphs as canaries. The auditor makes ``m`` canary
graphs, flips a fair coin for each (seeded) and inserts the heads into the training set
*before* the defense runs; trains one target with the defense as it executes (per-graph
DP-SGD: its own sampler, clipping and noise); scores every canary by the target's log
posterior of the canary's label (a loss attack: higher = more likely trained on); guesses
"in" on the top and "out" on the bottom scores; and turns the correct guesses into an ε lower
bound with :func:`graphleaks.metrics.one_run.one_run_bound`. One audit costs one training.

Canaries (``kind``):

* ``ood`` (default): the structure of a randomly drawn graph of the set, every node given
  one random Gaussian feature vector of norm ``feature_scale * sqrt(F)`` drawn for that
  canary (no real graph looks like it), and a uniformly random label. Nothing but
  memorisation of the canary itself fits that label, which is what the coin tests.
* ``mislabelled``: a copy of a randomly drawn graph with a label other than its own.

The one-run bound is capped by the number of guesses (500 canaries, 250 guesses, all
correct: audited ε ≈ 4.4 at δ = 1e-5 and confidence 0.95), so an audit at ε = 4 or 8 can only
show that the claim is not grossly violated; a broken implementation is caught at small
claimed ε (the tests use ε = 1). Power, measured on solubility-sized sets
(``tests/audit/test_graph_canary.py``): DP-SGD with its noise divided by 30 or 100 and the
ledger unchanged is caught at claimed ε = 1 on every seed tried; divided by 10 (true ε ≈ 30)
the loss of the final model separates inserted from absent canaries (AUC ≈ 0.7) but does not
reliably push the bound past 1.

Caveat, as in every DP-SGD audit with Poisson sampling at rate ``B / N``: the inserted
canaries change N, and so the rate, slightly; the ledger accounts the rate that ran.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._validation import validate
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.defenses.graph_base import GraphDefense, graph_registry
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import min_canaries, one_run_bound
from graphleaks.models.graph_classifier import GraphClassifierSpec
from graphleaks.models.trained_graph_target import GraphSplit, TrainedGraphTarget
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.report.records import CanaryAudit
from graphleaks.seeding import derive_seed

CANARY_KINDS = ("ood", "mislabelled")


@dataclass(frozen=True)
class GraphCanaryConfig:
    """Parameters of a graph canary audit.

    Attributes:
        num_canaries: m, the number of canary graphs (each inserted with probability 1/2).
        guess_fraction: Fraction of canaries guessed on (half "in" from the top scores,
            half "out" from the bottom); the rest are abstentions.
        kind: ``ood`` or ``mislabelled`` canaries (see the module docstring).
        feature_scale: Per-entry standard deviation of an ``ood`` canary's features.
        confidence: Confidence level of the lower bounds.
    """

    num_canaries: int = field(default=500, metadata={"range": (1, 100_000)})
    guess_fraction: float = field(default=0.5, metadata={"range": (0.0, 1.0),
                                                          "closed": "right"})
    kind: str = field(default="ood", metadata={"choices": CANARY_KINDS})
    feature_scale: float = field(default=1.0, metadata={"range": (0.0, 1e6),
                                                        "closed": "right"})
    confidence: float = field(default=0.95, metadata={"range": (0.0, 1.0),
                                                      "closed": "neither"})

    def check(self) -> None:
        """Enough guesses to reach the confidence at all."""
        need = min_canaries(self.confidence)
        lo = math.ceil(need / self.guess_fraction)
        if self.num_canaries < lo:
            raise InvalidConfigError(
                f"The num_canaries parameter must be in [{lo}, 100000] for confidence "
                f"{self.confidence:g} with guess_fraction {self.guess_fraction:g} (at least "
                f"{need} guesses). Got {self.num_canaries!r} instead.")


def make_graph_canaries(graphs: GraphSet, m: int, kind: str, feature_scale: float,
                        rng: np.random.Generator) -> list[Data]:
    """``m`` canary graphs drawn from ``graphs`` (see the module docstring)."""
    k = graphs.num_classes
    out: list[Data] = []
    for _ in range(m):
        g = graphs.graphs[int(rng.integers(len(graphs)))]
        n = int(g.num_nodes)
        if kind == "ood":
            v = torch.from_numpy(rng.normal(0.0, feature_scale, g.x.shape[1])).float()
            x = v.expand(n, -1).clone()
            y = int(rng.integers(k))
        else:
            x = g.x.clone()
            y = (int(g.y) + 1 + int(rng.integers(k - 1))) % k  # any class but its own
        c = Data(x=x, edge_index=g.edge_index.clone(), y=torch.tensor([y]), num_nodes=n)
        if getattr(g, "edge_attr", None) is not None:
            c.edge_attr = g.edge_attr.clone()
        out.append(c)
    return out


@torch.no_grad()
def canary_scores(target: TrainedGraphTarget, ids: np.ndarray) -> np.ndarray:
    """Log posterior of each canary's own label (higher = more likely trained on)."""
    logp = torch.log_softmax(target.logits(ids).double(), dim=1)
    y = target.graphs.y[torch.as_tensor(ids)]
    return logp.gather(1, y.view(-1, 1)).view(-1).numpy()


def graph_canary_audit(
    graphs: GraphSet, *, defense: str | GraphDefense = "dp_sgd",
    defense_params: dict[str, Any] | None = None, spec: GraphClassifierSpec | None = None,
    split: GraphSplit | None = None, train_frac: float = 0.5,
    config: GraphCanaryConfig | None = None, seed: int, **overrides: Any,
) -> CanaryAudit:
    """Plant canary graphs, train one target with the defense, and bound its ε from one run.

    Args:
        graphs: The graph set (canaries are added to a copy of it).
        defense: Graph defense name (``dp_sgd``, ``none``) or instance under audit.
        defense_params: Config overrides of a defense given by name (``epsilon``...).
        spec: Architecture and training hyperparameters.
        split: The real graphs' split (drawn with ``train_frac`` if None; no val part).
        train_frac: Fraction of the real graphs that are members.
        config: The audit's parameters; ``overrides`` replace single fields.
        seed: Root seed of the split, canaries, coins, training and tie-breaking.
        **overrides: Fields of :class:`GraphCanaryConfig`.

    Returns:
        The :class:`~graphleaks.report.records.CanaryAudit` (unit ``graph``, attack
        ``loss``): claimed ε from the target's ledger beside the audited lower bound.

    Raises:
        InvalidConfigError: For an invalid config, too few canaries for the confidence, or a
            defense whose guarantee is not about graphs.

    Example:
        >>> from graphleaks.data.graphsets import motif_graphs
        >>> a = graph_canary_audit(motif_graphs(20, seed=0), defense_params={"epsilon": 1.0,
        ...                        "delta": 1e-3}, spec=GraphClassifierSpec(hidden=8,
        ...                        epochs=1, batch_size=8), num_canaries=30, seed=0)
        >>> a.unit, a.claimed_epsilon <= 1.0, a.bound.num_canaries, a.bound.num_guesses
        ('graph', True, 30, 15)
    """
    cfg = validate(GraphCanaryConfig(**{**asdict(config or GraphCanaryConfig()), **overrides}),
                   "graph_canary_audit")
    d = defense if isinstance(defense, GraphDefense) else \
        graph_registry.get(defense)(**(defense_params or {}))
    d.validate()
    if d.privacy_unit not in (PrivacyUnit.GRAPH, PrivacyUnit.NONE):
        raise InvalidConfigError(f"the graph canary audit tests the graph unit; {d.name} "
                                 f"protects unit {d.privacy_unit.value}")
    spec = validate(spec or GraphClassifierSpec())
    n, m = len(graphs), cfg.num_canaries
    split = split or GraphSplit.draw(n, train_frac=train_frac, val_frac=0.0,
                                     seed=derive_seed(seed, "split"))
    rng = np.random.default_rng(derive_seed(seed, "canaries"))
    coins = rng.random(m) < 0.5
    canaries = make_graph_canaries(graphs, m, cfg.kind, cfg.feature_scale, rng)
    canaried = GraphSet.from_graphs(list(graphs.graphs) + canaries, graphs.class_names,
                                    source=f"{graphs.source} + {m} canaries")
    ids = n + np.arange(m)
    # absent canaries belong to no part: they are neither trained on nor a utility figure
    split2 = GraphSplit(n + m, np.concatenate([split.members, ids[coins]]), split.val,
                        split.non_members, split.seed)
    target = d.fit(canaried, split2, model=spec, seed=derive_seed(seed, "target"))
    scores = canary_scores(target, ids)
    r = max(int(round(cfg.guess_fraction * m)), min_canaries(cfg.confidence))
    led = target.ledger
    bound = one_run_bound(coins, scores, k_pos=r // 2, k_neg=r - r // 2, delta=led.delta,
                          confidence=cfg.confidence, seed=derive_seed(seed, "guesses"))
    what = ("random-feature copies with random labels" if cfg.kind == "ood"
            else "copies with a wrong label")
    return CanaryAudit(
        unit="graph", defense=d.name, attack="loss", claimed_epsilon=float(led.epsilon),
        claimed_delta=float(led.delta), bound=bound,
        violation=bool(bound.epsilon_lb > led.epsilon), num_inserted=int(coins.sum()),
        seed=seed, notes=(f"{m} canary graphs ({what}), each inserted with probability 1/2",
                          f"{r} guesses (top {r // 2} in, bottom {r - r // 2} out), one "
                          "target training"),
    )

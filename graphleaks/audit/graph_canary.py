"""One-run canary audit of a graph classifier's defense, in the ``graph`` unit.

Steinke, Nasr and Jagielski (2023)'s one-run audit, as :mod:`graphleaks.audit.canary` runs
it for nodes and edges, with graph-unit canaries. The auditor makes ``m`` canaries, flips a
fair coin for each (seeded) and inserts the heads into the training set *before* the
defense runs; trains one target with the defense as it executes (per-graph DP-SGD: its own
sampler, clipping and noise); scores every canary; guesses "in" on the top and "out" on the
bottom scores; and turns the correct guesses into an ε lower bound with
:func:`graphleaks.metrics.one_run.one_run_bound`. One audit costs one training.

Canaries (``kind``) and their scoring (the record's ``attack`` and ``scope`` say which ran):

* ``gradient`` (white-box; what ``auto`` picks for DP-SGD): Dirac gradient canaries
  (:mod:`graphleaks.models.gradient_canaries`), training samples whose clipped gradient is
  always ``C`` on a parameter coordinate of their own, drawn by the run's own Poisson
  sampler. Attack ``update_projection``: the sum over steps of every noised gradient sum's
  value on the canary's coordinate. This audits the DP-SGD *mechanism* the ledger accounts
  (sampler, clipping, noise, composition over the executed steps), with the strongest
  canary clipping allows, so it is the most informative about the claim. It needs a defense
  that runs per-graph DP-SGD.
* ``ood`` (black-box; what ``auto`` picks for any other defense): the structure of a
  randomly drawn graph of the set, every node given one random Gaussian feature vector of
  norm ``feature_scale * sqrt(F)`` drawn for that canary (no real graph looks like it), and a
  uniformly random label. Nothing but memorisation fits that label, which is what the coin
  tests. Attack ``loss``: the final model's log posterior of the canary's label. This audits
  what the trained model reveals about input graphs, a weaker adversary than the
  mechanism's releases.
* ``mislabelled`` (black-box, attack ``loss``): a copy of a randomly drawn graph with a label
  other than its own.

The one-run bound is capped by the number of guesses and by δ (its ``2·m·δ`` term): all
correct out of 250 guesses of 500 canaries gives ε ≈ 4.4 at δ = 1e-5 but 2.8 at δ = 1e-3;
1000 canaries and 500 guesses give 5.1 at δ = 1e-5. So an audit can only exceed a claimed ε
below that cap. Power, measured on a molecule-like synthetic set
(``tests/audit/test_graph_canary.py``, ``bench/bench_graph_canary.py``): with gradient
canaries, DP-SGD whose noise is divided by 10 while the ledger still claims the calibrated ε
is caught at claimed ε = 1 and 4 on every seed; with ``ood`` canaries and the loss, noise ÷
10 (true ε ≈ 30) separates inserted from absent canaries at AUC ≈ 0.7 only and audits
0.7-0.9 against a claimed 1 (÷ 30 and ÷ 100 are caught).

Caveat, as in every DP-SGD audit with Poisson sampling at rate ``B / N``: the inserted
canaries change N, and so the rate and the step count; the ledger accounts what ran.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._validation import validate
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.defenses.graph_base import GraphDefense, graph_registry
from graphleaks.defenses.graph_dp_sgd import GraphDPSGD
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import check_canary_count, guess_count, one_run_bound
from graphleaks.models.gradient_canaries import GradientCanaryProbe, gradient_canaries
from graphleaks.models.graph_classifier import GraphClassifierSpec
from graphleaks.models.trained_graph_target import GraphSplit, TrainedGraphTarget
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.report.records import CanaryAudit
from graphleaks.seeding import derive_seed

CANARY_KINDS = ("auto", "gradient", "ood", "mislabelled")


@dataclass(frozen=True)
class GraphCanaryConfig:
    """Parameters of a graph canary audit.

    Attributes:
        num_canaries: m, the number of canary graphs (each inserted with probability 1/2).
        guess_fraction: Fraction of canaries guessed on (half "in" from the top scores,
            half "out" from the bottom); the rest are abstentions.
        kind: ``auto`` (``gradient`` for per-graph DP-SGD, else ``ood``), ``gradient``,
            ``ood`` or ``mislabelled`` canaries (see the module docstring).
        feature_scale: Per-entry standard deviation of an ``ood`` canary's features.
        confidence: Confidence level of the lower bounds.
    """

    num_canaries: int = field(default=500, metadata={"range": (1, 100_000)})
    guess_fraction: float = field(default=0.5, metadata={"range": (0.0, 1.0),
                                                          "closed": "right"})
    kind: str = field(default="auto", metadata={"choices": CANARY_KINDS})
    feature_scale: float = field(default=1.0, metadata={"range": (0.0, 1e6),
                                                        "closed": "right"})
    confidence: float = field(default=0.95, metadata={"range": (0.0, 1.0),
                                                      "closed": "neither"})

    def check(self) -> None:
        """Enough guesses to reach the confidence at all."""
        check_canary_count(self.num_canaries, self.guess_fraction, self.confidence,
                           most=100_000)


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


def gradient_canary_samples(graphs: GraphSet, m: int) -> list[Data]:
    """``m`` placeholder samples for gradient canaries: one featureless node, class 0.

    They only hold a canary's place in the training set (the trainer gives them their
    fixed gradient, never a forward pass); the graph set's checks need a valid graph.
    """
    width = graphs.num_features
    edge_width = graphs.num_edge_features
    out: list[Data] = []
    for _ in range(m):
        c = Data(x=torch.zeros(1, width), edge_index=torch.zeros(2, 0, dtype=torch.long),
                 y=torch.tensor([0]), num_nodes=1)
        if edge_width:
            c.edge_attr = torch.zeros(0, edge_width)
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
        The :class:`~graphleaks.report.records.CanaryAudit` (unit ``graph``; attack
        ``update_projection`` for gradient canaries, ``loss`` for canary graphs; its
        ``scope`` says what was audited): claimed ε from the target's ledger beside the
        audited lower bound.

    Raises:
        InvalidConfigError: For an invalid config, too few canaries for the confidence, a
            defense whose guarantee is not about graphs, or gradient canaries for a defense
            that runs no per-graph DP-SGD.

    Example:
        >>> from graphleaks.data.graphsets import motif_graphs
        >>> a = graph_canary_audit(motif_graphs(20, seed=0), defense_params={"epsilon": 1.0,
        ...                        "delta": 1e-3}, spec=GraphClassifierSpec(hidden=8,
        ...                        epochs=1, batch_size=8), num_canaries=30, seed=0)
        >>> a.unit, a.attack, a.claimed_epsilon <= 1.0, a.bound.num_guesses
        ('graph', 'update_projection', True, 15)
    """
    cfg = validate(GraphCanaryConfig(**{**asdict(config or GraphCanaryConfig()), **overrides}),
                   "graph_canary_audit")
    d = defense if isinstance(defense, GraphDefense) else \
        graph_registry.get(defense)(**(defense_params or {}))
    d.validate()
    if d.privacy_unit not in (PrivacyUnit.GRAPH, PrivacyUnit.NONE):
        raise InvalidConfigError(f"the graph canary audit tests the graph unit; {d.name} "
                                 f"protects unit {d.privacy_unit.value}")
    kind = cfg.kind if cfg.kind != "auto" else (
        "gradient" if isinstance(d, GraphDPSGD) else "ood")
    if kind == "gradient" and not isinstance(d, GraphDPSGD):
        raise InvalidConfigError(
            f"The kind parameter 'gradient' of a graph canary audit needs a defense that runs "
            f"per-graph DP-SGD; {d.name} does not. Valid: auto, ood, mislabelled.")
    spec = validate(spec or GraphClassifierSpec())
    n, m = len(graphs), cfg.num_canaries
    split = split or GraphSplit.draw(n, train_frac=train_frac, val_frac=0.0,
                                     seed=derive_seed(seed, "split"))
    rng = np.random.default_rng(derive_seed(seed, "canaries"))
    coins = rng.random(m) < 0.5
    canaries = (gradient_canary_samples(graphs, m) if kind == "gradient"
                else make_graph_canaries(graphs, m, kind, cfg.feature_scale, rng))
    canaried = GraphSet.from_graphs(list(graphs.graphs) + canaries, graphs.class_names,
                                    source=f"{graphs.source} + {m} canaries")
    ids = n + np.arange(m)
    # absent canaries belong to no part: they are neither trained on nor a utility figure
    split2 = GraphSplit(n + m, np.concatenate([split.members, ids[coins]]), split.val,
                        split.non_members, split.seed)
    train_seed = derive_seed(seed, "target")
    if kind == "gradient":
        # the checked set holds its own copies: the probe knows those objects
        probe = GradientCanaryProbe(canaried.graphs[n:], seed=derive_seed(seed, "coordinates"))
        with gradient_canaries(probe):
            target = d.fit(canaried, split2, model=spec, seed=train_seed)
        if probe.steps == 0 or (coins.any() and not probe.draws.any()):
            raise InvalidConfigError(  # a defense that bypassed the per-graph trainer
                f"the {d.name} defense ran no per-graph DP-SGD step the gradient canaries "
                "could observe; audit it with kind='ood'")
        scores = probe.scores
    else:
        target = d.fit(canaried, split2, model=spec, seed=train_seed)
        scores = canary_scores(target, ids)
    r = guess_count(m, cfg.guess_fraction, cfg.confidence)
    led = target.ledger
    bound = one_run_bound(coins, scores, k_pos=r // 2, k_neg=r - r // 2, delta=led.delta,
                          confidence=cfg.confidence, seed=derive_seed(seed, "guesses"))
    guesses = (f"{r} guesses (top {r // 2} in, bottom {r - r // 2} out), one target "
               "training")
    utility = target.utility.get("test_accuracy")
    acc = () if utility is None else (
        f"test accuracy {utility:.3f} on the real non-member graphs",)
    if kind == "gradient":
        drawn = int(probe.draws.sum())
        notes: tuple[str, ...] = (
            f"{m} Dirac gradient canaries (clipped gradient C on a parameter coordinate of "
            f"each one's own), each inserted with probability 1/2; the executed sampler drew "
            f"inserted canaries {drawn} times in {probe.steps} noised steps",
            "score: sum over steps of the noised gradient sum on the canary's coordinate "
            "(white-box update projection)", guesses) + acc
        attack = "update_projection"
        scope = ("the DP-SGD mechanism as executed: Dirac gradient canaries drawn by its own "
                 "Poisson sampler, scored by the projection of every noised gradient step on "
                 "their coordinate (white-box; sampler, clipping, noise and composition, "
                 "of which the optimiser and the final model are post-processing)")
    else:
        what = ("random-feature copies with random labels" if kind == "ood"
                else "copies with a wrong label")
        notes = (f"{m} canary graphs ({what}), each inserted with probability 1/2",
                 "score: the final model's log posterior of the canary's label (black-box "
                 "loss)", guesses) + acc
        attack = "loss"
        scope = ("the trained target: canary graphs in the input space, scored by the final "
                 "model's loss (black-box; one training run with the canaries)")
    return CanaryAudit(
        unit="graph", defense=d.name, attack=attack, claimed_epsilon=float(led.epsilon),
        claimed_delta=float(led.delta), bound=bound,
        violation=bool(bound.epsilon_lb > led.epsilon), num_inserted=int(coins.sum()),
        seed=seed, notes=notes, scope=scope,
    )

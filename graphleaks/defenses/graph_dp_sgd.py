"""DP-SGD for graph classifiers: one graph per clipped gradient (privacy unit ``graph``).

Wraps :func:`graphleaks.models.graph_dp_sgd.train_graph_dp_sgd`: per-graph gradients through
``torch.func`` (Opacus' hooks take a node row for a sample, which message passing breaks),
each clipped to ``max_grad_norm``, Gaussian noise of std ``noise_multiplier * max_grad_norm``
on every step, and Poisson batches of expected size ``spec.batch_size`` for ``spec.epochs``
passes (``spec.lr`` is Adam's rate; ``patience`` is not used: the step count is fixed, so the
ledger is known before training). The noise multiplier is calibrated to ``epsilon`` at
``delta`` for that plan, and the ledger is computed afterwards from what the sampler
*executed* (its rate and its number of draws), in the ``graph`` unit, status verified.

The neighbouring relation is add/remove one training graph: a graph reaches a step only
through its own clipped gradient, since the model sees one graph per forward pass (no batch
normalisation, no cross-graph layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from torch_geometric.data import Data

from graphleaks.defenses.graph_base import GraphDefense, GraphFit
from graphleaks.errors import InvalidConfigError
from graphleaks.models import graph_dp_sgd
from graphleaks.models.dp_sgd import DPSGDPlan
from graphleaks.models.graph_classifier import GraphClassifierSpec, new_graph_classifier
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.seeding import derive_seed

ACCOUNTANTS = ("rdp", "pld")


@dataclass(frozen=True)
class GraphDPSGDConfig:
    """Parameters of per-graph DP-SGD.

    Attributes:
        epsilon: Target ε (> 0, finite); the noise is calibrated to reach it.
        delta: Target δ in (0, 1); keep it below 1 / (number of training graphs).
        max_grad_norm: Per-graph clipping norm C.
        accountant: ``rdp`` or ``pld`` (dp_accounting), for calibration and the ledger.
    """

    epsilon: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    delta: float = field(default=1e-5, metadata={"range": (0.0, 1.0), "closed": "neither"})
    max_grad_norm: float = field(default=1.0, metadata={"range": (0.0, None),
                                                        "closed": "neither"})
    accountant: str = field(default="rdp", metadata={"choices": ACCOUNTANTS})

    def check(self) -> None:
        """ε must be finite: an infinite budget is the ``none`` defense."""
        if not math.isfinite(self.epsilon):
            raise InvalidConfigError(
                "The epsilon parameter of GraphDPSGD must be finite and > 0. Got "
                f"{self.epsilon!r} instead; for no privacy use --defense none.")


class GraphDPSGD(GraphDefense):
    """Per-graph DP-SGD (see the module docstring).

    Example:
        >>> from graphleaks.data.graphsets import motif_graphs
        >>> from graphleaks.models.trained_graph_target import GraphSplit
        >>> gs = motif_graphs(30, seed=0)
        >>> t = GraphDPSGD(epsilon=4.0, delta=1e-3).fit(
        ...     gs, GraphSplit.draw(30, seed=0), seed=0,
        ...     model=GraphClassifierSpec(hidden=8, epochs=2, batch_size=5))
        >>> t.ledger.unit.value, t.ledger.status.value, t.ledger.epsilon <= 4.0
        ('graph', 'verified', True)
    """

    name = "dp_sgd"
    privacy_unit = PrivacyUnit.GRAPH
    Config = GraphDPSGDConfig

    def plan(self, num_train: int, spec: GraphClassifierSpec) -> DPSGDPlan:
        """The Poisson plan over ``num_train`` graphs: rate ``batch_size / N``, fixed steps."""
        return DPSGDPlan(num_samples=num_train, batch_size=spec.batch_size, epochs=spec.epochs)

    def _fit(self, train: list[Data], val: list[Data], spec: GraphClassifierSpec,
             num_features: int, num_classes: int, seed: int) -> GraphFit:
        cfg: GraphDPSGDConfig = self.config
        plan = self.plan(len(train), spec)
        mult = graph_dp_sgd.calibrate_graph_noise(plan, epsilon=cfg.epsilon, delta=cfg.delta,
                                                  accountant=cfg.accountant)  # type: ignore[arg-type]
        model = new_graph_classifier(spec, num_features, num_classes, seed=seed)
        run = graph_dp_sgd.train_graph_dp_sgd(
            model, train, plan=plan, lr=spec.lr, noise_multiplier=mult,
            max_grad_norm=cfg.max_grad_norm, seed=derive_seed(seed, "dp_sgd"))
        # accounted from the run's own record of what it executed, not from the plan
        ledger = graph_dp_sgd.graph_dp_sgd_ledger(run.executed, run.noise_multiplier,
                                                  cfg.delta, accountant=cfg.accountant)  # type: ignore[arg-type]
        return GraphFit(model, ledger, {
            "epochs": spec.epochs, "expected_batch_size": spec.batch_size,
            "sampling_rate": run.executed.rate, "steps": run.executed.steps,
            "noise_multiplier": run.noise_multiplier, "max_grad_norm": run.max_grad_norm,
            "seconds": run.seconds, "cpu_seconds": run.cpu_seconds})


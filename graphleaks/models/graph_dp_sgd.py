"""Per-graph DP-SGD for graph classifiers: one graph is one sample (privacy unit ``graph``).

Opacus' per-sample hooks treat a row of a layer's input as a sample; in a graph classifier
a row is a *node* and a sample is a whole graph, and message passing mixes rows, so the
hooks give the wrong unit. Here per-graph gradients come from ``torch.func``: the loss of
one graph is a function of the parameters (``functional_call``), ``grad`` differentiates it,
and ``vmap`` maps it over the graphs of a batch. ``vmap`` needs equal shapes, so each graph
is padded to the batch's largest node and edge counts: padding nodes form a second "graph"
of their own (``batch`` = 1) whose edges join only padding nodes, so no real node sees them
and the first pooled row is exactly the graph's own (``per_sample="loop"`` computes the same
gradients one graph at a time; tests check both against the graph's gradient alone).

Each gradient is clipped to L2 norm ``max_grad_norm`` over all parameters, the clipped sum
gets Gaussian noise of std ``noise_multiplier * max_grad_norm``, and the result is divided
by the expected batch size (Opacus' ``loss_reduction="mean"``). Batches are Poisson samples
drawn by :class:`~graphleaks.models.dp_sgd.PoissonBatchSampler` from a
:class:`~graphleaks.models.dp_sgd.DPSGDPlan` over the training graphs; every drawn batch,
an empty one included, is one noised step. The ledger (:func:`graph_dp_sgd_ledger`) accounts
the sampler that ran (:class:`~graphleaks.models.dp_sgd.ExecutedSGM`), not the plan. A
white-box audit hands the trainer gradient canaries
(:mod:`graphleaks.models.gradient_canaries`): samples with a fixed clipped gradient that the
same sampler draws, and a view of every step's noised sum.

Example:
    >>> from graphleaks.models.dp_sgd import DPSGDPlan
    >>> plan = DPSGDPlan(num_samples=100, batch_size=10, epochs=5)
    >>> m = calibrate_graph_noise(plan, epsilon=4.0, delta=1e-3)
    >>> ledger = graph_dp_sgd_ledger(ExecutedSGM(plan.rate, plan.steps), m, 1e-3)
    >>> ledger.unit.value, ledger.epsilon <= 4.0, ledger.epsilon > 3.9
    ('graph', True, True)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap
from torch_geometric.data import Data

from graphleaks.models.dp_sgd import DPSGDPlan, ExecutedSGM, PoissonBatchSampler
from graphleaks.models.gradient_canaries import GradientCanaryProbe, active_probe
from graphleaks.privacy.accounting import Accountant
from graphleaks.privacy.calibration import calibrate_noise_multiplier
from graphleaks.privacy.events import (
    GaussianEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    SelfComposedEvent,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.seeding import derive_seed, torch_seeded

PerSample = Literal["vmap", "loop"]
Grads = dict[str, torch.Tensor]


@dataclass(frozen=True)
class PaddedGraphs:
    """Graphs padded to one shape for ``vmap`` (see the module docstring).

    Attributes:
        x: ``[B, N, F]`` features (zeros on padding nodes).
        edge_index: ``[B, 2, E]`` edges (padding edges loop on the last node).
        batch: ``[B, N]``: 0 for a graph's nodes, 1 for padding.
        y: ``[B]`` class ids.
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    batch: torch.Tensor
    y: torch.Tensor


def pad_graphs(graphs: Sequence[Data]) -> PaddedGraphs:
    """Pad ``graphs`` to the largest node count + 1 and the largest edge count."""
    n_max = max(int(g.num_nodes) for g in graphs) + 1  # >= 1 padding node per graph
    e_max = max(1, max(int(g.edge_index.shape[1]) for g in graphs))
    feats = int(graphs[0].x.shape[1])
    x = torch.zeros(len(graphs), n_max, feats)
    ei = torch.full((len(graphs), 2, e_max), n_max - 1, dtype=torch.long)
    batch = torch.ones(len(graphs), n_max, dtype=torch.long)
    for i, g in enumerate(graphs):
        n, e = int(g.num_nodes), int(g.edge_index.shape[1])
        x[i, :n] = g.x
        ei[i, :, :e] = g.edge_index
        batch[i, :n] = 0
    y = torch.cat([g.y.view(-1) for g in graphs])
    return PaddedGraphs(x, ei, batch, y)


def _loss_fn(model: nn.Module, num_graphs: int) -> Callable[..., torch.Tensor]:
    def loss(params: Grads, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor,
             y: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, params, (x, edge_index, batch, num_graphs))
        return F.cross_entropy(logits[:1], y.view(1), reduction="sum")

    return loss


def per_graph_gradients(model: nn.Module, graphs: Sequence[Data], *,
                        per_sample: PerSample = "vmap") -> Grads:
    """The gradient of each graph's cross-entropy loss, stacked: ``{name: [B, *shape]}``.

    Args:
        model: A graph classifier ``(x, edge_index, batch, num_graphs) -> logits`` built
            from plain torch operations (see :mod:`graphleaks.models.graph_classifier`).
        graphs: The graphs (at least one).
        per_sample: ``vmap`` (padded, one call) or ``loop`` (one ``grad`` call per graph).
    """
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    if per_sample == "vmap":
        p = pad_graphs(graphs)
        fn = vmap(grad(_loss_fn(model, 2)), in_dims=(None, 0, 0, 0, 0), randomness="different")
        out: Grads = fn(params, p.x, p.edge_index, p.batch, p.y)
        return out
    one = grad(_loss_fn(model, 1))
    rows = [one(params, g.x, g.edge_index, torch.zeros(int(g.num_nodes), dtype=torch.long),
                g.y.view(-1)) for g in graphs]
    return {k: torch.stack([r[k] for r in rows]) for k in params}


def clip_and_sum(grads: Grads, max_grad_norm: float) -> Grads:
    """Clip each sample's gradient (all parameters together) to ``max_grad_norm``; sum."""
    names = list(grads)
    b = grads[names[0]].shape[0]
    norms = torch.stack([grads[k].reshape(b, -1).norm(dim=1) for k in names], 1).norm(dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return {k: torch.einsum("b,b...->...", factor, grads[k]) for k in names}


@dataclass(frozen=True)
class GraphDPSGDRun:
    """What a per-graph DP-SGD run executed.

    Attributes:
        executed: The sampler's rate and the number of noised steps (what the ledger
            accounts).
        noise_multiplier: σ / C of the Gaussian noise added to every step.
        max_grad_norm: The per-graph clipping norm C.
        seconds: Wall-clock training time.
        cpu_seconds: Process CPU time of training.
    """

    executed: ExecutedSGM
    noise_multiplier: float
    max_grad_norm: float
    seconds: float
    cpu_seconds: float


def train_graph_dp_sgd(
    model: nn.Module, train: Sequence[Data], *, plan: DPSGDPlan, lr: float,
    noise_multiplier: float, max_grad_norm: float, seed: int,
    per_sample: PerSample = "vmap", probe: GradientCanaryProbe | None = None,
) -> GraphDPSGDRun:
    """Train ``model`` with per-graph DP-SGD (Adam on the noised mean gradient).

    Args:
        model: A graph classifier (see :func:`per_graph_gradients`).
        train: The training graphs: the samples the plan is over.
        plan: Poisson rate and step count; ``plan.num_samples`` must be ``len(train)``.
        lr: Adam learning rate.
        noise_multiplier: Noise std divided by ``max_grad_norm``.
        max_grad_norm: Per-graph clipping norm.
        seed: Seeds the sampler (``sampling``), the noise (``noise``) and dropout.
        per_sample: How per-graph gradients are computed (``vmap`` or ``loop``).
        probe: Gradient canaries of a white-box audit (see
            :mod:`graphleaks.models.gradient_canaries`); None uses the probe active in
            this context, if any. Its samples in ``train`` get their fixed clipped
            gradient instead of a forward pass, and it sees every step's noised sum.

    Returns:
        A :class:`GraphDPSGDRun` whose ``executed`` record is what the ledger accounts.

    Raises:
        ValueError: If the plan is not over ``len(train)`` graphs.
    """
    if plan.num_samples != len(train):
        raise ValueError(f"DP-SGD plan is for {plan.num_samples} graphs, training has "
                         f"{len(train)}")
    wall, cpu = time.perf_counter(), time.process_time()
    sampler = PoissonBatchSampler(plan.num_samples, plan.rate, plan.steps,
                                  torch.Generator().manual_seed(derive_seed(seed, "sampling")))
    noise_gen = torch.Generator().manual_seed(derive_seed(seed, "noise"))
    params = [p for p in model.parameters() if p.requires_grad]
    names = [k for k, p in model.named_parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    expected = max(1.0, plan.rate * plan.num_samples)
    probe = probe if probe is not None else active_probe()
    if probe is not None:
        probe.bind(sum(p.numel() for p in params))
    with torch_seeded(derive_seed(seed, "train")):
        model.train()
        for idx in sampler:
            hits: list[int] = []
            if probe is not None:  # canary samples never reach the model
                marks = [probe.canary_of(train[int(i)]) for i in idx]
                hits = [j for j in marks if j is not None]
                idx = idx[torch.as_tensor([j is None for j in marks], dtype=torch.bool)]
            if len(idx):
                summed = clip_and_sum(per_graph_gradients(
                    model, [train[int(i)] for i in idx], per_sample=per_sample), max_grad_norm)
            else:  # an empty batch is still a step: pure noise
                summed = {k: torch.zeros_like(p) for k, p in zip(names, params, strict=True)}
            if probe is not None:
                summed = _with_canaries(probe, summed, names, hits, max_grad_norm)
            noised: Grads = {}
            for k, p in zip(names, params, strict=True):
                noise = torch.normal(0.0, noise_multiplier * max_grad_norm, size=p.shape,
                                     generator=noise_gen)
                noised[k] = summed[k] + noise
                p.grad = noised[k] / expected
            if probe is not None:
                probe.observe(torch.cat([noised[k].reshape(-1) for k in names]))
            opt.step()
    model.eval()
    return GraphDPSGDRun(ExecutedSGM(rate=sampler.rate, steps=sampler.draws),
                         float(noise_multiplier), float(max_grad_norm),
                         time.perf_counter() - wall, time.process_time() - cpu)


def _with_canaries(probe: GradientCanaryProbe, summed: Grads, names: list[str],
                   hits: list[int], max_grad_norm: float) -> Grads:
    """The clipped sum with the drawn canaries' gradients added, in the flat order the
    probe's coordinates index (``names``' order, each parameter flattened)."""
    flat = torch.cat([summed[k].reshape(-1) for k in names]).clone()
    probe.add_canaries(flat, hits, max_grad_norm)
    out: Grads = {}
    start = 0
    for k in names:
        n = summed[k].numel()
        out[k] = flat[start:start + n].view_as(summed[k])
        start += n
    return out


def graph_dp_sgd_event(executed: ExecutedSGM, noise_multiplier: float) -> PrivacyEvent:
    """The event of a run: ``steps`` Poisson-sampled Gaussian releases at the run's rate."""
    return SelfComposedEvent(PoissonSampledEvent(executed.rate, GaussianEvent(noise_multiplier)),
                             executed.steps)


def graph_dp_sgd_ledger(executed: ExecutedSGM, noise_multiplier: float, delta: float, *,
                        accountant: Accountant = "rdp") -> PrivacyLedger:
    """The ledger of a per-graph DP-SGD run, in the ``graph`` unit, from what it executed.

    Sound for add/remove-one-graph neighbours: each graph enters a step only through its
    own clipped gradient (the model sees one graph per forward pass), and batches are the
    executed Poisson samples.
    """
    return PrivacyLedger.from_event(
        PrivacyUnit.GRAPH, graph_dp_sgd_event(executed, noise_multiplier), delta,
        accountant=accountant, status=GuaranteeStatus.VERIFIED,
        notes=("per-graph DP-SGD: one graph per clipped gradient, Poisson sampling as "
               "executed",))


def calibrate_graph_noise(plan: DPSGDPlan, *, epsilon: float, delta: float,
                          accountant: Accountant = "rdp") -> float:
    """The smallest noise multiplier whose ledger for ``plan`` stays within ``epsilon``.

    Raises:
        InvalidConfigError: If ε or δ is out of range or unreachable.
    """
    return _calibrated(plan.rate, plan.steps, epsilon, delta, accountant)


@functools.lru_cache(maxsize=256)
def _calibrated(rate: float, steps: int, epsilon: float, delta: float,
                accountant: Accountant) -> float:
    # a pure function of its arguments, and seconds of bisection over the accountant: an
    # audit that retrains the same plan (canary audits, seeds of one grid) calibrates once
    return calibrate_noise_multiplier(
        lambda m: graph_dp_sgd_event(ExecutedSGM(rate, steps), m), epsilon, delta,
        accountant=accountant)

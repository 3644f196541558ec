"""DP-SGD on per-row examples: the plan both training and accounting read, its Poisson
sampler, and the trainers (DP-SGD and its non-private full-batch counterpart).

Not specific to one defense: GAP's node-level DP trains its encoder and classifier with it,
and a graph-classification or per-edge DP-SGD defense can reuse it. The unit clipped is one
row of the training inputs (see :func:`train_dp_sgd`); the privacy accounting of a plan
belongs to the defense that chose the unit.

Example:
    >>> plan = DPSGDPlan(num_samples=13, batch_size=5, epochs=2)
    >>> plan.rate, plan.steps_per_epoch, plan.steps
    (0.38461538461538464, 3, 6)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from graphleaks.seeding import derive_seed, torch_seeded


def train_full_batch(
    net: nn.Module, inputs: torch.Tensor, y: torch.Tensor, train: torch.Tensor,
    val: torch.Tensor, *, epochs: int, lr: float, weight_decay: float, seed: int,
    select_on_val: bool,
) -> int:
    """Adam full batch (no privacy); keep the best-val-accuracy weights when allowed.

    The non-private counterpart of :func:`train_dp_sgd`, for the parts of a model that see
    no private unit (GAP's encoder and classifier under edge-level DP).

    Returns:
        The epoch whose weights are kept.
    """
    opt = torch.optim.Adam(list(net.parameters()), lr=lr, weight_decay=weight_decay)
    best_acc, best_epoch, best_state = -1.0, epochs, None
    with torch_seeded(seed):
        for epoch in range(1, epochs + 1):
            net.train()
            opt.zero_grad()
            loss = F.cross_entropy(net(inputs[train]), y[train])
            loss.backward()
            opt.step()
            if select_on_val and len(val):
                net.eval()
                with torch.no_grad():
                    acc = (net(inputs[val]).argmax(1) == y[val]).float().mean().item()
                if acc > best_acc:
                    best_acc, best_epoch = acc, epoch
                    best_state = {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return best_epoch


@dataclass(frozen=True)
class DPSGDPlan:
    """The one record that both DP-SGD training executes and the ledger accounts.

    Poisson sampling at rate ``q = B/N`` (each training node joins a step's batch
    independently with probability q) for ``⌈N/B⌉`` steps per epoch. Training consumes the plan
    through :class:`PoissonBatchSampler`, and the defense's accounting (GAP's
    :func:`graphleaks.defenses.gap.ndp_event`) accounts the same plan, so the
    sampler, rate and step count cannot drift apart (issue 15: the former code accounted
    ``q = B/N`` and ``⌊N/B⌋`` steps while Opacus ran ``1/⌈N/B⌉`` and ``⌈N/B⌉``).

    Attributes:
        num_samples: N, the number of training nodes.
        batch_size: B, the expected batch size (capped at N).
        epochs: Passes over the data, in expectation.
    """

    num_samples: int
    batch_size: int
    epochs: int

    @property
    def rate(self) -> float:
        """The Poisson sampling rate q = min(B, N) / N."""
        return min(self.batch_size, self.num_samples) / self.num_samples

    @property
    def steps_per_epoch(self) -> int:
        """⌈N / B⌉ steps per epoch."""
        return -(-self.num_samples // min(self.batch_size, self.num_samples))

    @property
    def steps(self) -> int:
        """Total steps, every one of them noised and accounted (empty batches included)."""
        return self.epochs * self.steps_per_epoch


class PoissonBatchSampler:
    """Yields ``steps`` Poisson batches of ``range(n)`` at ``rate``; counts what it drew.

    Attributes:
        rate: The sampling rate actually used.
        draws: How many batches were drawn so far (the executed step count).
    """

    def __init__(self, n: int, rate: float, steps: int, generator: torch.Generator) -> None:
        self.n, self.rate, self.steps, self.generator = int(n), float(rate), int(steps), generator
        self.draws = 0

    def __len__(self) -> int:
        return self.steps

    def __iter__(self) -> Iterator[torch.Tensor]:
        for _ in range(self.steps):
            mask = torch.rand(self.n, generator=self.generator, dtype=torch.float64) < self.rate
            self.draws += 1
            yield mask.nonzero().view(-1)


@dataclass(frozen=True)
class ExecutedSGM:
    """What a DP-SGD run executed: the sampler's rate and the number of noised steps."""

    rate: float
    steps: int


def train_dp_sgd(
    net: nn.Module, inputs: torch.Tensor, y: torch.Tensor, train: torch.Tensor, *,
    plan: DPSGDPlan, lr: float, noise_multiplier: float, max_grad_norm: float, seed: int,
) -> ExecutedSGM:
    """DP-SGD (Opacus per-sample clipping and noise) driven by ``plan``'s Poisson sampler.

    The unit clipped is one **row** of ``inputs[train]`` with its label: each row's gradient
    is clipped to ``max_grad_norm`` before the batch's sum is noised. GAP's node-level DP
    passes one row per training node (its aggregated features); a caller protecting another
    unit (a graph in graph classification, an edge in link prediction) must pass one row
    per unit, so that one unit changes exactly one clipped gradient.

    Every drawn batch is one noised optimiser step, including an empty one (pure noise):
    skipping empty batches would make the update sequence depend on whether a node was
    sampled. Returns the executed sampler record, which tests compare with the ledger.
    """
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    if plan.num_samples != len(train):
        raise ValueError(f"DP-SGD plan is for {plan.num_samples} nodes, training has {len(train)}")
    gen = torch.Generator().manual_seed(derive_seed(seed, "sampling"))
    noise_gen = torch.Generator().manual_seed(derive_seed(seed, "noise"))
    xs, ys = inputs[train].detach(), y[train]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus' "secure RNG off": we seed on purpose
        gsm = GradSampleModule(net, loss_reduction="sum")
        opt = DPOptimizer(torch.optim.Adam(net.parameters(), lr=lr),
                          noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                          expected_batch_size=max(1, round(plan.rate * plan.num_samples)),
                          loss_reduction="mean", generator=noise_gen)
        sampler = PoissonBatchSampler(plan.num_samples, plan.rate, plan.steps, gen)
        with torch_seeded(seed):
            gsm.train()
            for idx in sampler:
                opt.zero_grad()
                F.cross_entropy(gsm(xs[idx]), ys[idx], reduction="sum").backward()
                opt.step()
    gsm._close()
    net.eval()
    return ExecutedSGM(rate=sampler.rate, steps=sampler.draws)

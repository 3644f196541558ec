"""Dirac gradient canaries: a white-box probe of per-graph DP-SGD as it executes.

Steinke, Nasr and Jagielski (NeurIPS 2023, white-box one-run audit) and Nasr et al.
("Tight auditing of differentially private machine learning", USENIX Security 2023) audit
DP-SGD with canaries that are *gradients*, not inputs: canary ``j`` is a training sample
whose per-sample gradient is always ``C·e_{c_j}`` (the clipping norm times the unit vector of
its own parameter coordinate ``c_j``), so it has exactly the largest influence clipping
allows. The canary samples sit in the training list like graphs; the executed Poisson
sampler draws them like any graph, and every step that draws canary ``j`` adds ``C`` to
coordinate ``c_j`` of the clipped sum before the Gaussian noise. The auditor, who sees every
step's privatised release (the noised sum), scores canary ``j`` by the sum over steps of
that release's coordinate ``c_j`` (its projection on the canary's direction): an inserted
canary adds ``C`` times the number of steps that drew it, an absent one nothing.

This audits the mechanism the ledger accounts (sampler, per-sample clipping, noise and
their composition over the executed steps), not the optimiser: Adam only post-processes
the releases. The real graphs' clipped gradients on a canary's coordinate are part of the
noise the auditor faces, so the score is valid (the bound holds for any score) if not
optimal.

The trainer (:func:`graphleaks.models.graph_dp_sgd.train_graph_dp_sgd`) consults the probe
given to it, or the one made active with :func:`gradient_canaries`, so an audit can run a
defense's own ``fit`` unchanged and still observe the run.

Example:
    >>> import numpy as np, torch
    >>> from torch_geometric.data import Data
    >>> samples = [Data(x=torch.zeros(1, 2), edge_index=torch.zeros(2, 0, dtype=torch.long),
    ...                 y=torch.tensor([0])) for _ in range(3)]
    >>> probe = GradientCanaryProbe(samples, seed=0)
    >>> probe.bind(10)
    >>> len(set(probe.coordinates.tolist())), probe.canary_of(samples[1]), probe.steps
    (3, 1, 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import torch

from graphleaks.errors import InvalidConfigError

_ACTIVE: ContextVar[GradientCanaryProbe | None] = ContextVar("gradient_canaries", default=None)


class GradientCanaryProbe:
    """Canary samples with fixed clipped gradients, and the auditor's view of the run.

    Attributes:
        coordinates: Flat parameter coordinate of each canary (set by :meth:`bind`).
        scores: Per canary, the sum over steps of the noised sum's value at its coordinate.
        draws: Per canary, how many executed steps drew it (zero for an absent canary).
        steps: Noised steps observed.
    """

    def __init__(self, samples: Sequence[Any], *, seed: int) -> None:
        """Canary ``j`` is the object ``samples[j]``, recognised by identity in the training
        list (a copy of it would be a graph, so the trainer is given the objects themselves).

        Args:
            samples: The canary sample objects, placed in the training set by the auditor.
            seed: Seeds the draw of the canaries' coordinates.
        """
        self._index = {id(s): j for j, s in enumerate(samples)}
        self._samples = list(samples)  # keeps the ids alive and unique
        self._seed = int(seed)
        m = len(samples)
        self.coordinates = np.zeros(0, dtype=np.int64)
        self.scores = np.zeros(m)
        self.draws = np.zeros(m, dtype=np.int64)
        self.steps = 0

    @property
    def num_canaries(self) -> int:
        """Number of canary samples."""
        return len(self._samples)

    def bind(self, num_parameters: int) -> None:
        """Draw distinct coordinates among the model's ``num_parameters`` trainable ones.

        Raises:
            InvalidConfigError: If the model has fewer coordinates than canaries.
        """
        m = self.num_canaries
        if m > num_parameters:
            raise InvalidConfigError(
                f"The num_canaries parameter of a gradient canary audit must be at most "
                f"{num_parameters} for this model (one parameter coordinate per canary). Got "
                f"{m!r} instead; use fewer canaries or a wider model.")
        rng = np.random.default_rng(self._seed)
        self.coordinates = np.sort(rng.choice(num_parameters, m, replace=False)).astype(np.int64)

    def canary_of(self, sample: Any) -> int | None:
        """The canary index of a training sample, None for a real graph."""
        return self._index.get(id(sample))

    def add_canaries(self, flat_sum: torch.Tensor, canaries: Sequence[int],
                     max_grad_norm: float) -> None:
        """Add each drawn canary's clipped gradient ``C·e_c`` to a step's flat clipped sum."""
        for j in canaries:
            flat_sum[int(self.coordinates[j])] += max_grad_norm
            self.draws[j] += 1

    def observe(self, flat_noised: torch.Tensor) -> None:
        """Record one step's privatised release at the canaries' coordinates."""
        idx = torch.as_tensor(self.coordinates)
        self.scores += flat_noised.detach()[idx].double().numpy()
        self.steps += 1


def active_probe() -> GradientCanaryProbe | None:
    """The probe made active by :func:`gradient_canaries` in this context, if any."""
    return _ACTIVE.get()


@contextmanager
def gradient_canaries(probe: GradientCanaryProbe) -> Iterator[GradientCanaryProbe]:
    """Make ``probe`` the one every per-graph DP-SGD run in this context consults."""
    token = _ACTIVE.set(probe)
    try:
        yield probe
    finally:
        _ACTIVE.reset(token)

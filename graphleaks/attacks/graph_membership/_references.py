"""What LiRA and RMIA over graphs share: the reference budget and the reference queries."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.errors import InvalidConfigError
from graphleaks.models.graph_target import copy_logits


@dataclass(frozen=True)
class GraphReferenceConfig:
    """The reference models of LiRA and RMIA over graphs.

    Attributes:
        variant: ``offline`` (each candidate scored against the references that did not
            train on it) or ``online`` (against those that did, too).
        num_references: Reference classifiers, each trained on a random half of the
            candidate graphs (complementary pairs: each candidate is IN exactly half).
        ref_epochs: Epochs of each reference (no early stopping).
    """

    variant: str = field(default="offline", metadata={"choices": ("offline", "online")})
    num_references: int = field(default=8, metadata={"range": (2, 1024)})
    ref_epochs: int = field(default=100, metadata={"range": (1, 100_000)})

    def check(self) -> None:
        """Paired halves need an even count, so each candidate is IN exactly half.

        Raises:
            InvalidConfigError: Naming ``num_references``.
        """
        if self.num_references % 2:
            raise InvalidConfigError(f"The num_references parameter must be even (paired "
                                     f"halves). Got {self.num_references!r} instead.")


def reference_log_posteriors(models: list[nn.Module], graphs: list[Data]) -> np.ndarray:
    """``[k, n, C]`` log posteriors of every reference on ``graphs`` (float64)."""
    return np.stack([torch.log_softmax(copy_logits(m, graphs).double(), dim=1).numpy()
                     for m in models])


def true_class(logp: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``logp[..., i, labels[i]]`` along the last two axes."""
    return np.take_along_axis(logp, labels.reshape(*([1] * (logp.ndim - 2)), -1, 1),
                              axis=-1)[..., 0]

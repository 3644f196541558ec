"""Fresh models for the adversary: graphleaks' GNNs, or copies of a user's own model.

Shadow and reference models (:mod:`graphleaks.attacks._shadow`) are built here from the
target's :class:`~graphleaks.models.gnn.ArchitectureSpec`. For a model graphleaks did not
build, that spec is a :class:`UserArchitecture`: fresh copies come from the user's
``model_factory`` (trained by their ``train_fn`` when given), or from a reset deep copy of the
model trained by graphleaks' generic full-batch trainer
(:func:`graphleaks.models.training.train_node_classifier`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.protocol import as_logits
from graphleaks.models.training import train_node_classifier
from graphleaks.seeding import derive_seed, torch_seeded

#: ``train_fn(model, data, train_mask)``: the user's own training loop.
TrainFn = Callable[[nn.Module, Data, torch.Tensor], Any]

SHADOW_FACTORY = "model_factory"
SHADOW_GENERIC = "generic trainer (reset copy of the model)"
SURROGATE_NOTE = "architecture unknown, surrogate GCN"


class AsLogits(nn.Module):
    """A model whose outputs are probabilities or log-probabilities, read as logits."""

    def __init__(self, inner: nn.Module, output: str) -> None:
        super().__init__()
        self.inner = inner
        self.output = output

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits (a vector whose softmax is the inner model's posterior)."""
        return as_logits(self.inner(x, edge_index), self.output)


@dataclass(frozen=True)
class UserArchitecture(ArchitectureSpec):
    """The architecture of a model graphleaks did not build: how to make fresh copies.

    The inherited fields (``lr``, ``weight_decay``, ``epochs``, ``patience``) configure the
    generic trainer when no ``train_fn`` is given.

    Attributes:
        factory: Returns a fresh, untrained model of the target's class.
        train_fn: ``train_fn(model, data, train_mask)`` trains it in place; None uses the
            generic trainer.
        output: The models' output kind (see :mod:`graphleaks.models.protocol`).
        model_class: Qualified class name, for the report.
        source: How fresh models are obtained (for the report).
    """

    factory: Callable[[], nn.Module] | None = field(default=None, compare=False)
    train_fn: TrainFn | None = field(default=None, compare=False)
    output: str = "logits"
    model_class: str = ""
    source: str = SHADOW_FACTORY

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary for the report (no callables)."""
        out: dict[str, Any] = {"arch": "user", "model_class": self.model_class,
                               "output": self.output, "shadow_models": self.source}
        if self.train_fn is None:
            out.update(lr=self.lr, weight_decay=self.weight_decay, epochs=self.epochs,
                       patience=self.patience)
        else:
            out["train_fn"] = getattr(self.train_fn, "__qualname__", type(self.train_fn).__name__)
        return out


@dataclass(frozen=True)
class SurrogateArchitecture(ArchitectureSpec):
    """A graphleaks GCN standing in for an architecture nobody can rebuild (the report says so)."""

    def to_dict(self) -> dict[str, Any]:
        """The surrogate's fields, marked as a surrogate for an unknown architecture."""
        return {**super().to_dict(), "arch": "unknown", "surrogate": self.arch,
                "note": SURROGATE_NOTE}


def fresh_model(spec: ArchitectureSpec, in_dim: int, num_classes: int, *, seed: int) -> nn.Module:
    """An untrained model of ``spec`` (initialised under ``seed``), returning logits.

    Raises:
        InvalidConfigError: If a user factory fails or builds something that is not a module.
    """
    from graphleaks.errors import InvalidConfigError

    with torch_seeded(seed):
        if not isinstance(spec, UserArchitecture):
            return GNN(in_dim, num_classes, spec)
        assert spec.factory is not None
        try:
            model = spec.factory()
        except Exception as exc:  # the user's code: name it, whatever it raised
            raise InvalidConfigError(f"model_factory() failed ({type(exc).__name__}: {exc}); "
                                     "pass a callable that returns a fresh model") from exc
    if not isinstance(model, nn.Module):
        raise InvalidConfigError(f"model_factory() returned {type(model).__name__}, not a "
                                 "torch.nn.Module")
    return model if spec.output == "logits" else AsLogits(model, spec.output)


def fit_model(
    spec: ArchitectureSpec, x: torch.Tensor, edge_index: torch.Tensor, y: torch.Tensor,
    train_nodes: np.ndarray, num_classes: int, *, seed: int, epochs: int, patience: int,
    val_nodes: np.ndarray | None = None,
) -> nn.Module:
    """Build a fresh model of ``spec`` and train it on ``train_nodes``; eval mode, logits.

    graphleaks' GNNs and user models without ``train_fn`` train with the generic full-batch
    trainer (Adam, cross-entropy, early stopping on ``val_nodes``); a ``train_fn`` gets the
    model, the graph and a boolean training mask.

    Args:
        spec: Architecture (a :class:`UserArchitecture` for a user's model).
        x: Node features.
        edge_index: The graph the model trains with.
        y: Labels.
        train_nodes: Nodes in the loss.
        num_classes: Output width.
        seed: Seeds initialisation (``init``) and training (``train``).
        epochs: Epoch cap of the generic trainer.
        patience: Early-stopping patience (0: none).
        val_nodes: Early-stopping nodes, or None.
    """
    model = fresh_model(spec, int(x.shape[1]), num_classes, seed=derive_seed(seed, "init"))
    if isinstance(spec, UserArchitecture) and spec.train_fn is not None:
        inner = model.inner if isinstance(model, AsLogits) else model
        mask = torch.zeros(int(x.shape[0]), dtype=torch.bool)
        mask[torch.as_tensor(np.asarray(train_nodes, dtype=np.int64))] = True
        data = Data(x=x, edge_index=edge_index, y=y, train_mask=mask, num_nodes=int(x.shape[0]))
        with torch_seeded(derive_seed(seed, "train")):
            spec.train_fn(inner, data, mask)
        model.eval()
        return model
    train_node_classifier(model, x, edge_index, y, train_nodes, val_edges=edge_index,
                          val_nodes=val_nodes, lr=spec.lr, weight_decay=spec.weight_decay,
                          epochs=epochs, patience=patience, seed=derive_seed(seed, "train"))
    return model

"""Full-batch training with validation-based early stopping, and utility metrics."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from graphleaks._progress import progress
from graphleaks.seeding import torch_seeded


@dataclass(frozen=True)
class TrainingLog:
    """What happened during training."""

    epochs_run: int
    best_epoch: int
    best_val_accuracy: float


def train_node_classifier(
    model: nn.Module,
    x: torch.Tensor,
    train_edges: torch.Tensor,
    y: torch.Tensor,
    train_nodes: np.ndarray,
    *,
    val_edges: torch.Tensor | None = None,
    val_nodes: np.ndarray | None = None,
    lr: float,
    weight_decay: float,
    epochs: int,
    patience: int,
    seed: int,
    targets: torch.Tensor | None = None,
) -> TrainingLog:
    """Train ``model`` full-batch with Adam and keep the weights of the best validation epoch.

    Args:
        model: A module mapping ``(x, edge_index)`` to logits.
        x: Node features.
        train_edges: The graph the loss is computed on.
        y: Labels used for validation accuracy.
        train_nodes: Nodes in the loss.
        val_edges: Graph for validation (defaults to ``train_edges``).
        val_nodes: Early-stopping nodes; without them the last epoch is kept.
        lr: Learning rate.
        weight_decay: Weight decay.
        epochs: Maximum epochs.
        patience: Stop after this many epochs without a better validation accuracy
            (0: never stop early).
        seed: Seeds initialisation-independent randomness (dropout) during training.
        targets: Training targets, if they differ from ``y`` (e.g. privatised labels).

    Returns:
        A :class:`TrainingLog`.
    """
    targets = y if targets is None else targets
    val_edges = train_edges if val_edges is None else val_edges
    tr = torch.as_tensor(train_nodes, dtype=torch.long, device=x.device)
    va = (torch.as_tensor(val_nodes, dtype=torch.long, device=x.device)
          if val_nodes is not None else None)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best_acc, best_epoch, best_state = -1.0, 0, None
    epoch = 0
    with torch_seeded(seed):
        for epoch in progress(range(1, epochs + 1), desc="training"):
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x, train_edges)[tr], targets[tr])
            loss.backward()
            opt.step()
            if va is None or len(va) == 0:
                continue
            model.eval()
            with torch.no_grad():
                acc = float((model(x, val_edges)[va].argmax(1) == y[va]).float().mean())
            if acc > best_acc:
                best_acc, best_epoch = acc, epoch
                best_state = copy.deepcopy(model.state_dict())
            elif patience and epoch - best_epoch >= patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return TrainingLog(epochs_run=epoch, best_epoch=best_epoch or epoch,
                       best_val_accuracy=max(best_acc, 0.0))

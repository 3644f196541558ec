"""Models a user might hand ``graphleaks audit model --task link`` by mistake (importable by
``--model-class``)."""

from __future__ import annotations

import torch


class PerNodeScorer(torch.nn.Module):
    """Takes ``(x, edge_index, pairs)`` but returns one score per *node* (a node model
    wrapped with a pairs argument it ignores)."""

    def __init__(self, in_dim: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(in_dim, 1)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                pairs: torch.Tensor) -> torch.Tensor:
        return self.lin(x)[:, 0]

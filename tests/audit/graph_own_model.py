"""A user's own PyG graph classifier, written to be exported (shared by graph-audit tests).

``UserGIN`` pools with the graph count taken from ``batch`` as
:func:`graphleaks.models.graph_export.num_graphs_of` does, so ``torch.export`` keeps the
number of graphs symbolic; ``NodeRows`` forgot its pooling (one row per node).
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.nn import GINConv, global_mean_pool

from graphleaks.models.graph_export import num_graphs_of
from graphleaks.models.graph_target import batch_graphs


class UserGIN(nn.Module):
    """Two GINConv layers, mean pooling into ``readout``, a linear head."""

    def __init__(self, in_dim: int, classes: int) -> None:
        super().__init__()
        self.conv1 = GINConv(nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, 16)))
        self.conv2 = GINConv(nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)))
        self.readout = nn.Identity()
        self.out = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                batch: torch.Tensor) -> torch.Tensor:
        h = self.conv2(self.conv1(x, edge_index).relu(), edge_index).relu()
        pooled = global_mean_pool(h, batch, num_graphs_of(batch))
        return self.out(self.readout(pooled))


class NodeRows(nn.Module):
    """A graph classifier that forgot to pool: one output row per node."""

    def __init__(self, in_dim: int, classes: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, classes)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                batch: torch.Tensor) -> torch.Tensor:
        return self.lin(x) + 0 * batch.unsqueeze(1)


def train_user_gin(graphs, labels: torch.Tensor, *, epochs: int = 30) -> UserGIN:  # noqa: ANN001
    """The user's own loop: full-batch Adam on ``graphs`` (seeded)."""
    torch.manual_seed(0)
    model = UserGIN(int(graphs[0].x.shape[1]), int(labels.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, ei, b = batch_graphs(graphs)
    for _ in range(epochs):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x, ei, b), labels).backward()
        opt.step()
    return model.eval()

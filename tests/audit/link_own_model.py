"""A user's own PyG link predictor, as a user writes it: a layer graphleaks does not ship, its
own training loop, PyG's ``edge_label_index`` layout (``[2, P]``).

``MeanSkip`` is a mean-aggregation layer with a skip connection written on PyG's
``MessagePassing`` (no graphleaks class); ``UserLinkModel`` stacks two of them and scores a
pair by the inner product of its endpoints' embeddings. ``train_user_model`` is the user's
own loop: BCE on the training edges against uniformly drawn negatives, from a seeded
``torch.Generator``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch_geometric.nn import MessagePassing


class MeanSkip(MessagePassing):
    """``W_self x_i + W_nbr mean_j x_j``."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__(aggr="mean")
        self.lin_self = torch.nn.Linear(in_dim, out_dim)
        self.lin_nbr = torch.nn.Linear(in_dim, out_dim, bias=False)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.lin_self(x) + self.propagate(edge_index, x=self.lin_nbr(x))


class UserLinkModel(torch.nn.Module):
    """Two MeanSkip layers and a dot-product decoder over ``edge_label_index`` ``[2, P]``."""

    def __init__(self, in_dim: int, hidden: int = 32, out_dim: int = 16) -> None:
        super().__init__()
        self.conv1 = MeanSkip(in_dim, hidden)
        self.conv2 = MeanSkip(hidden, out_dim)

    def encode(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                edge_label_index: torch.Tensor) -> torch.Tensor:
        z = self.encode(x, edge_index)
        return (z[edge_label_index[0]] * z[edge_label_index[1]]).sum(-1)


def train_user_model(x: torch.Tensor, train_edges: torch.Tensor, *, epochs: int = 300,
                     seed: int = 0) -> UserLinkModel:
    """The user's loop: full batch, one uniform negative per training edge and epoch.

    Args:
        x: Node features.
        train_edges: ``[2, M]`` training edges (each undirected edge once).
        epochs: Epochs (no early stopping: the user overfits on purpose).
        seed: Seeds the initialisation and the negatives.
    """
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = UserLinkModel(x.shape[1])
    mp = torch.cat([train_edges, train_edges.flip(0)], dim=1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    n, m = x.shape[0], train_edges.shape[1]
    for _ in range(epochs):
        model.train()
        neg = torch.randint(0, n, (2, m), generator=gen)
        pairs = torch.cat([train_edges, neg], dim=1)
        target = torch.cat([torch.ones(m), torch.zeros(m)])
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(x, mp, pairs), target)
        loss.backward()
        opt.step()
    model.eval()
    return model

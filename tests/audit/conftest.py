"""Fixtures of the audit tests: a user's own model, as a user writes it.

PyG layers graphleaks does not ship, and the user's own training loop.

The class lives in a module written to a temporary folder and put on ``sys.path``, as a
user's package is (``--model-class usernet:SGNet``).
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

USER_MODULE = textwrap.dedent('''
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import GINConv, SGConv


    class SGNet(torch.nn.Module):
        """SGConv (K=2) then a GIN layer: neither is a graphleaks architecture."""

        def __init__(self, in_dim, hidden, out_dim):
            super().__init__()
            self.conv1 = SGConv(in_dim, hidden, K=2)
            self.conv2 = GINConv(torch.nn.Linear(hidden, out_dim))

        def forward(self, x, edge_index):
            return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)


    class ProbNet(SGNet):
        """The same network returning probabilities."""

        def forward(self, x, edge_index):
            return torch.softmax(super().forward(x, edge_index), dim=1)


    def train(model, data, train_mask, epochs=150):
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
        for _ in range(epochs):
            model.train()
            opt.zero_grad()
            F.cross_entropy(model(data.x, data.edge_index)[train_mask],
                            data.y[train_mask]).backward()
            opt.step()
        model.eval()
''')


@dataclass
class UserSetup:
    """A trained user model, its graph and membership, and its saved files."""

    module: object
    model: torch.nn.Module
    graph: object
    members: np.ndarray
    non_members: np.ndarray
    kwargs: dict
    folder: Path

    def write_graph(self, folder: Path) -> list[str]:
        """Write the graph as the CLI reads it; returns its ``--edges/--features/--labels``."""
        g = self.graph
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "edges.csv").write_text(
            "src,dst\n" + "\n".join(f"{a},{b}" for a, b in g.edge_index.numpy().T))
        np.save(folder / "x.npy", g.x.numpy())
        (folder / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
        return ["--edges", str(folder / "edges.csv"), "--features", str(folder / "x.npy"),
                "--labels", str(folder / "y.csv")]


def make_user_setup(folder: Path) -> UserSetup:
    """Train the user's model (overfit: few members, wide layer) and import its module."""
    from graphleaks.data.synthetic import csbm

    (folder / "usernet16.py").write_text(USER_MODULE)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    import importlib

    mod = importlib.import_module("usernet16")
    g = csbm(240, num_classes=3, num_features=16, feature_signal=0.5, seed=1)
    rng = np.random.default_rng(0)
    perm = rng.permutation(240)
    members, non_members = np.sort(perm[:40]), np.sort(perm[40:80])
    kwargs = {"in_dim": 16, "hidden": 64, "out_dim": 3}
    torch.manual_seed(0)
    model = mod.SGNet(**kwargs)
    mask = torch.zeros(240, dtype=torch.bool)
    mask[torch.as_tensor(members)] = True
    mod.train(model, g, mask)
    return UserSetup(mod, model, g, members, non_members, kwargs, folder)


@pytest.fixture(scope="session")
def user_setup(tmp_path_factory: pytest.TempPathFactory) -> UserSetup:
    """One trained user model for every foreign-model test (training is the slow part)."""
    return make_user_setup(tmp_path_factory.mktemp("user"))

"""A new user's own model and string-id graph, as the user writes them (issue 24 item 7).

A GATv2 + jumping-knowledge network (layers graphleaks does not ship) in the user's own
module, trained by the user's loop, on a graph whose nodes are named ``acct_NNN`` in an
order unrelated to any numbering. ``write_files`` writes the graph as such a user exports
it: an edge list and keyed feature and label tables with header rows, and member and
non-member files of string ids with pandas' index header.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

OWN_MODULE = textwrap.dedent('''
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import GATv2Conv, JumpingKnowledge


    class GATJK(torch.nn.Module):
        """Two GATv2 layers, their outputs concatenated (jumping knowledge), then a head."""

        def __init__(self, in_dim, hidden, out_dim):
            super().__init__()
            self.conv1 = GATv2Conv(in_dim, hidden)
            self.conv2 = GATv2Conv(hidden, hidden)
            self.jk = JumpingKnowledge("cat")
            self.lin = torch.nn.Linear(2 * hidden, out_dim)

        def forward(self, x, edge_index):
            h1 = F.relu(self.conv1(x, edge_index))
            h2 = F.relu(self.conv2(h1, edge_index))
            return self.lin(self.jk([h1, h2]))


    class PairScorer(torch.nn.Module):
        """A link-prediction model: one score per edge of the graph it is given."""

        def __init__(self, in_dim):
            super().__init__()
            self.lin = torch.nn.Linear(in_dim, 8)

        def forward(self, x, edge_index):
            h = self.lin(x)
            return (h[edge_index[0]] * h[edge_index[1]]).sum(-1)


    class GraphClassifier(torch.nn.Module):
        """A graph-classification model: one row for the whole graph."""

        def __init__(self, in_dim, out_dim):
            super().__init__()
            self.lin = torch.nn.Linear(in_dim, out_dim)

        def forward(self, x, edge_index):
            return self.lin(x).mean(0, keepdim=True)


    def train(model, data, train_mask, epochs=120):
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
        for _ in range(epochs):
            model.train()
            opt.zero_grad()
            F.cross_entropy(model(data.x, data.edge_index)[train_mask],
                            data.y[train_mask]).backward()
            opt.step()
        model.eval()
''')

MODULE_NAME = "ownnet24"


@dataclass
class OwnSetup:
    """The trained model, its graph (numbered as the user's Python code numbers it), the
    user's string ids and the membership."""

    module: object
    model: torch.nn.Module
    graph: object
    names: list[str]
    members: np.ndarray
    non_members: np.ndarray
    kwargs: dict

    def write_files(self, folder: Path) -> dict[str, Path]:
        """The graph and the membership as files keyed by the user's string ids."""
        g, names = self.graph, self.names
        folder.mkdir(parents=True, exist_ok=True)
        ei = g.edge_index.numpy()
        (folder / "edges.csv").write_text(
            "source,target\n" + "\n".join(f"{names[a]},{names[b]}" for a, b in ei.T) + "\n")
        order = sorted(range(len(names)), key=lambda i: names[i])  # not the edge-list order
        width = g.x.shape[1]
        (folder / "features.csv").write_text(
            "node_id," + ",".join(f"f{j}" for j in range(width)) + "\n"
            + "\n".join(names[i] + "," + ",".join(repr(float(v)) for v in g.x[i].tolist())
                        for i in order) + "\n")
        (folder / "labels.csv").write_text(
            "node_id,label\n" + "\n".join(f"{names[i]},{int(g.y[i])}" for i in order) + "\n")
        for what, ids in (("members", self.members), ("non_members", self.non_members)):
            # what pandas.Series(ids).to_csv() writes: an index header, index, id
            (folder / f"{what}.csv").write_text(
                ",0\n" + "\n".join(f"{k},{names[i]}" for k, i in enumerate(ids)) + "\n")
        return {"edges": folder / "edges.csv", "features": folder / "features.csv",
                "labels": folder / "labels.csv", "members": folder / "members.csv",
                "non_members": folder / "non_members.csv"}


def make_own_setup(folder: Path) -> OwnSetup:
    """Train the user's GATv2-JK on a small CSBM whose nodes carry string names."""
    from graphleaks.data.synthetic import csbm

    (folder / f"{MODULE_NAME}.py").write_text(OWN_MODULE)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    import importlib

    mod = importlib.import_module(MODULE_NAME)
    g = csbm(120, num_classes=3, num_features=8, feature_signal=0.5, seed=4)
    rng = np.random.default_rng(24)
    names = [f"acct_{k:03d}" for k in rng.permutation(1000)[:120]]
    perm = rng.permutation(120)
    # as many members as non-members: the balanced challenge holds every one of them
    members, non_members = np.sort(perm[:30]), np.sort(perm[30:60])
    kwargs = {"in_dim": 8, "hidden": 32, "out_dim": 3}
    torch.manual_seed(0)
    model = mod.GATJK(**kwargs)
    mask = torch.zeros(120, dtype=torch.bool)
    mask[torch.as_tensor(members)] = True
    mod.train(model, g, mask)
    g.node_names = names
    return OwnSetup(mod, model, g, names, members, non_members, kwargs)

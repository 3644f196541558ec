"""TrainedTarget: the model widths, read from the model or measured from its output."""

from __future__ import annotations

import dataclasses

from torch import nn


def test_widths_come_from_the_model(trained_target, small_graph):
    assert trained_target.num_features == small_graph.num_features
    assert trained_target.num_classes == int(small_graph.y.max()) + 1


class _NoWidths(nn.Module):
    """A user's model: no ``in_dim``/``out_dim`` attributes."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        del edge_index
        return self.lin(x)


def test_a_model_without_widths_is_measured(trained_target, small_graph):
    foreign = dataclasses.replace(trained_target,
                                  model=_NoWidths(small_graph.num_features, 3).eval(),
                                  interface=None)  # re-derived from the new model
    assert foreign.num_classes == 3
    assert foreign.num_features == small_graph.num_features


def test_foreign_feature_queries_are_a_float64_forward_of_the_scaled_features():
    """A model without graphleaks' local update answers each query with a float64 forward
    of the features with one row scaled (in their own dtype): the scratch copies the queries
    reuse give exactly that, and the caller's features are never changed."""
    import copy

    import numpy as np
    import torch
    from torch_geometric.nn import SGConv

    from graphleaks.audit.model_audit import model_target
    from graphleaks.data.synthetic import csbm

    g = csbm(60, num_classes=3, num_features=8, seed=0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = SGConv(8, 3, K=2).eval()
    t = model_target(model, g, np.arange(20), np.arange(20, 40))
    ref = copy.deepcopy(model).double()
    rows = np.array([3, 0, 17, 59])
    for x in (g.x.clone(), g.x.double()):
        before = x.clone()
        for v, s in ((None, 1.0), (5, 1.0001), (17, 1.0001), (5, 1.5)):
            got = t.feature_query_rows(x, rows, scale_node=v, scale=s)
            z = x.clone()
            if v is not None:
                z[v] = x[v] * s
            with torch.no_grad():
                want = ref(z.double(), g.edge_index)[torch.as_tensor(rows)]
            assert got.dtype == torch.float64
            assert torch.equal(got, want), (x.dtype, v, s)
        assert torch.equal(x, before)
    # local=False: the API at the model's own precision (float32)
    got = t.feature_query_rows(g.x, rows, scale_node=5, scale=2.0, local=False)
    z = g.x.clone()
    z[5] *= 2.0
    with torch.no_grad():
        assert torch.equal(got, model(z, g.edge_index)[torch.as_tensor(rows)].double())

import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ARCHITECTURES, GNN, ArchitectureSpec


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_architecture_trains_and_exposes_layers(arch, graph):
    t = train_target(graph, spec=ArchitectureSpec(arch=arch, hidden=(16,), epochs=30), seed=0)
    layers = t.query(graph.x, graph.edge_index)
    assert len(layers) == 2 and layers[-1].shape == (graph.num_nodes, 3)
    assert t.embeddings(t.split.train, layer=0).shape[0] == len(t.split.train)
    assert 0.0 <= t.utility["test_accuracy"] <= 1.0


def test_training_is_deterministic(graph):
    a = train_target(graph, spec=ArchitectureSpec(epochs=20), seed=3)
    b = train_target(graph, spec=ArchitectureSpec(epochs=20), seed=3)
    assert torch.equal(a.logits(), b.logits())


def test_mlp_ignores_edges(graph):
    model = GNN(8, 3, ArchitectureSpec(arch="mlp")).eval()
    empty = torch.empty(2, 0, dtype=torch.long)
    assert torch.equal(model(graph.x, graph.edge_index), model(graph.x, empty))


def test_learns_an_informative_graph():
    from graphleaks.data.synthetic import csbm

    g = csbm(300, num_classes=3, num_features=16, feature_signal=3.0, homophily=0.9, seed=1)
    t = train_target(g, spec=ArchitectureSpec(epochs=100), seed=0)
    assert t.utility["test_accuracy"] > 0.8


@pytest.mark.parametrize("bad", [{"arch": "transformer"}, {"dropout": 1.0}, {"hidden": [0]},
                                 {"lr": -1}, {"nonsense": 1}])
def test_invalid_spec(bad):
    with pytest.raises(InvalidConfigError):
        ArchitectureSpec.from_dict(bad)


def test_unknown_view(graph):
    t = train_target(graph, spec=ArchitectureSpec(epochs=2), seed=0)
    with pytest.raises(InvalidConfigError, match="graph view"):
        t.logits(view="nope")


def _pyg_gcn_logits(model, x, edge_index):
    """The same stack evaluated through PyG's own GCNConv message passing."""
    h = x
    for i, layer in enumerate(model.layers):
        h = layer(h, edge_index)
        if i < len(model.layers) - 1:
            h = torch.relu(h)
    return h


def test_gcn_sparse_path_matches_pyg_message_passing(graph):
    model = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(16,))).eval()
    with torch.no_grad():
        ours = model(graph.x, graph.edge_index)
        pyg = _pyg_gcn_logits(model, graph.x, graph.edge_index)
    assert torch.allclose(ours, pyg, atol=1e-5)


def test_gcn_adjacency_cache_follows_the_graph(graph):
    model = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(16,))).eval()
    edges = graph.edge_index.clone()
    with torch.no_grad():
        before = model(graph.x, edges)
        other = edges[:, : edges.shape[1] // 2].clone()
        assert torch.allclose(model(graph.x, other), _pyg_gcn_logits(model, graph.x, other),
                              atol=1e-5)
        edges[1] = edges[1].flip(0)  # in place: the cached matrix must not be reused
        assert torch.allclose(model(graph.x, edges), _pyg_gcn_logits(model, graph.x, edges),
                              atol=1e-5)
        assert not torch.allclose(model(graph.x, edges), before)


def test_gcn_first_layer_propagates_features_once_and_follows_them(graph):
    """(Â X) W, with Â X remembered, equals Â (X W) up to rounding, gradients included."""
    torch.manual_seed(0)
    model = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(16,), dropout=0.0))
    x = graph.x.clone()
    out = model(x, graph.edge_index)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref = _pyg_gcn_logits(model, x, graph.edge_index)
    ref.square().sum().backward()
    assert torch.allclose(out, ref, atol=1e-5)
    for g, p in zip(grads, model.parameters(), strict=True):
        assert torch.allclose(g, p.grad, atol=1e-4)
    ax = model._adjacency.propagated(graph.edge_index, x)
    assert model._adjacency.propagated(graph.edge_index, x) is ax  # remembered
    with torch.no_grad():
        x.mul_(2.0)  # in place: Â X must be recomputed
        assert torch.allclose(model(x, graph.edge_index),
                              _pyg_gcn_logits(model, x, graph.edge_index), atol=1e-5)


def test_gcn_wide_features_keep_the_per_call_product(graph):
    """Features wider than the first layer keep Â (X W): no remembered Â X."""
    model = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(4,))).eval()
    with torch.no_grad():
        out = model(graph.x, graph.edge_index)
    assert model._adjacency._ax is None
    assert torch.allclose(out, _pyg_gcn_logits(model, graph.x, graph.edge_index), atol=1e-5)


def test_gcn_models_share_one_normalisation_per_graph(graph):
    """Models given the same edge tensor share Â, Âᵀ and Â X (the same objects, the same
    outputs as a fresh build); a modified tensor is rebuilt, a dead one is let go."""
    import gc

    import graphleaks.models.gnn as gnn

    gc.collect()
    before = (len(gnn._SHARED_MATRICES), len(gnn._SHARED_PROPAGATED))
    torch.manual_seed(0)
    a = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(16,))).eval()
    b = GNN(8, 3, ArchitectureSpec(arch="gcn", hidden=(16,))).eval()
    edges, x = graph.edge_index.clone(), graph.x.clone()
    with torch.no_grad():
        out_a, out_b = a(x, edges), b(x, edges)
    assert b._adjacency._matrices is a._adjacency._matrices
    assert b._adjacency._ax is a._adjacency._ax
    assert torch.allclose(out_a, _pyg_gcn_logits(a, x, edges), atol=1e-5)
    assert torch.allclose(out_b, _pyg_gcn_logits(b, x, edges), atol=1e-5)
    fresh = gnn._normalize(edges, graph.num_nodes, x.dtype)
    for m, f in zip(a._adjacency._matrices, fresh, strict=True):
        assert torch.equal(m.to_dense(), f.to_dense())
    with torch.no_grad():
        edges[1] = edges[1].flip(0)  # in place: neither model may reuse the old matrices
        assert torch.allclose(b(x, edges), _pyg_gcn_logits(b, x, edges), atol=1e-5)
        assert torch.allclose(a(x, edges), _pyg_gcn_logits(a, x, edges), atol=1e-5)
    assert b._adjacency._matrices is a._adjacency._matrices
    assert edges in gnn._SHARED_MATRICES and x in gnn._SHARED_PROPAGATED
    del edges, x, a, b
    gc.collect()
    assert (len(gnn._SHARED_MATRICES), len(gnn._SHARED_PROPAGATED)) == before

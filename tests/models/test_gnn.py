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

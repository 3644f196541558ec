"""The target-model protocol: output kinds, hooked embedding layers, one path for every model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import APPNP

from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.protocol import (
    ModelInterface,
    as_logits,
    check_outputs,
    forward_layers,
    reset_copy,
)


class AppnpNet(torch.nn.Module):
    """A linear encoder, then APPNP propagation (no ``embed()``, unlike graphleaks' GNN)."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = torch.nn.Linear(8, 16)
        self.head = torch.nn.Linear(16, 3)
        self.prop = APPNP(K=3, alpha=0.1)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.prop(self.head(F.relu(self.enc(x))), edge_index)


@pytest.fixture
def graph():  # noqa: ANN201
    torch.manual_seed(0)
    return torch.randn(30, 8), torch.randint(0, 30, (2, 90))


def test_hooked_layer_is_the_submodules_output(graph) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    net = AppnpNet().eval()
    iface = ModelInterface.of(net, embedding_layers=["enc"])
    layers = forward_layers(net, iface, *graph)
    torch.testing.assert_close(layers[0], net.enc(graph[0]))
    torch.testing.assert_close(layers[-1], net(*graph))
    assert not net.enc._forward_hooks  # hooks are removed after the pass


def test_graphleaks_gnn_is_read_through_the_same_hooks(small_graph) -> None:  # noqa: ANN001
    from graphleaks.models.gnn import GNN, ArchitectureSpec

    torch.manual_seed(0)
    gnn = GNN(small_graph.num_features, 3, ArchitectureSpec(hidden=(16, 8))).eval()
    iface = ModelInterface.of(gnn)
    assert iface.embedding_layers == ("hidden_out.0", "hidden_out.1")
    hooked = forward_layers(gnn, iface, small_graph.x, small_graph.edge_index)
    for a, b in zip(hooked, gnn.embed(small_graph.x, small_graph.edge_index), strict=True):
        torch.testing.assert_close(a, b)


def test_a_target_without_embedding_layers_never_serves_logits_as_embeddings(
        trained_target) -> None:  # noqa: ANN001
    bare = dataclasses.replace(trained_target, interface=ModelInterface())
    with pytest.raises(CapabilityError, match="declares no embedding layers"):
        bare.embeddings(np.arange(3), layer=0)
    # the logits stay available by their explicit index
    torch.testing.assert_close(bare.embeddings(np.arange(3), layer=-1),
                               trained_target.logits(np.arange(3)))
    # and the record's caches are its own
    assert bare._caches is not trained_target._caches


def test_trained_target_is_frozen(trained_target) -> None:  # noqa: ANN001
    with pytest.raises(dataclasses.FrozenInstanceError):
        trained_target.defense = "gap"  # type: ignore[misc]


@pytest.mark.parametrize("kind", ["probabilities", "log_probabilities"])
def test_output_kinds_become_logits_with_the_same_posterior(kind: str) -> None:
    logits = torch.randn(5, 4)
    p = torch.softmax(logits, 1)
    out = p if kind == "probabilities" else torch.log(p)
    torch.testing.assert_close(torch.softmax(as_logits(out, kind), 1), p)


def test_check_outputs_refuses_width_nan_and_unnormalised_probabilities() -> None:
    with pytest.raises(DataError, match="4 columns but the labels have 3"):
        check_outputs(torch.zeros(5, 4), ModelInterface(), 3)
    with pytest.raises(DataError, match="NaN"):
        check_outputs(torch.full((5, 3), float("nan")), ModelInterface(), 3)
    with pytest.raises(DataError, match="do not sum to 1"):
        check_outputs(torch.rand(5, 3) + 1, ModelInterface(output="probabilities"), 3)


def test_interface_validation() -> None:
    with pytest.raises(InvalidConfigError, match="unknown model output"):
        ModelInterface.of(AppnpNet(), output="scores")
    with pytest.raises(InvalidConfigError, match="no submodule 'conv1'"):
        ModelInterface.of(AppnpNet(), embedding_layers=["conv1"])
    with pytest.raises(InvalidConfigError, match="torch.nn.Module"):
        ModelInterface.of(lambda x, e: x, embedding_layers=["enc"])


def test_reset_copy_reinitialises_every_parameter_or_gives_up() -> None:
    torch.manual_seed(0)
    net = AppnpNet()
    torch.manual_seed(1)
    fresh = reset_copy(net)
    assert fresh is not None
    assert not torch.equal(fresh.enc.weight, net.enc.weight)

    class Raw(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))

    assert reset_copy(Raw()) is None

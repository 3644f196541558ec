"""``--embedding-layer`` on ONNX models (named values exposed as extra outputs, in memory)
and its one-line refusal on ``.pt2`` programs, naming the route that works."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch_geometric.nn import GCNConv

from graphleaks.errors import InvalidConfigError
from graphleaks.models.protocol import ModelInterface, forward_layers


class TwoLayer(torch.nn.Module):
    """A user's two-layer GCN: ``conv1`` outputs the node embeddings."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = GCNConv(8, 16)
        self.conv2 = GCNConv(16, 3)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.conv2(torch.relu(self.conv1(x, edge_index)), edge_index)


def _graph():
    g = torch.Generator().manual_seed(0)
    return torch.randn(25, 8, generator=g), torch.randint(0, 25, (2, 60), generator=g)


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory) -> tuple[Path, TwoLayer]:
    pytest.importorskip("onnxruntime", reason="needs graphleaks[onnx]")
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")
    from torch.export import Dim

    torch.manual_seed(0)
    net = TwoLayer().eval()
    path = tmp_path_factory.mktemp("onnx") / "net.onnx"
    torch.onnx.export(net, _graph(), str(path), dynamo=True, verbose=False,
                      dynamic_shapes=({0: Dim("n", min=2)}, {1: Dim("e", min=2)}))
    return path, net


def _hooked(net: TwoLayer, x: torch.Tensor, ei: torch.Tensor) -> torch.Tensor:
    seen = {}
    h = net.conv1.register_forward_hook(lambda _m, _i, o: seen.setdefault("e", o))
    try:
        net(x, ei)
    finally:
        h.remove()
    return seen["e"]


def test_onnx_embedding_layer_is_the_submodule_output(onnx_file):
    from graphleaks.models.foreign import load_onnx

    path, net = onnx_file
    before = path.read_bytes()
    model = load_onnx(path)
    iface = ModelInterface.of(model, "logits", ("conv1",))
    x, ei = _graph()
    emb, logits = forward_layers(model, iface, x, ei)
    with torch.no_grad():
        torch.testing.assert_close(emb, _hooked(net, x, ei), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(logits, net(x, ei), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(model(x, ei), net(x, ei), rtol=1e-4, atol=1e-5)
    assert path.read_bytes() == before  # exposed in memory: the file is untouched


def test_onnx_unknown_layer_is_one_line(onnx_file):
    from graphleaks.models.foreign import load_onnx

    with pytest.raises(InvalidConfigError, match="no submodule or value 'conv9'") as err:
        ModelInterface.of(load_onnx(onnx_file[0]), "logits", ("conv9",))
    assert "\n" not in str(err.value)


def test_cli_onnx_embedding_layer_runs_the_white_box_attack(onnx_file, tmp_path):
    import json

    import numpy as np
    from typer.testing import CliRunner

    from graphleaks.cli import app

    path, _ = onnx_file
    x, ei = _graph()
    y = torch.arange(25) % 3
    np.savetxt(tmp_path / "e.csv", ei.numpy().T, fmt="%d", delimiter=",",
               header="src,dst", comments="")
    np.save(tmp_path / "x.npy", x.numpy())
    np.savetxt(tmp_path / "y.csv", y.numpy(), fmt="%d")
    (tmp_path / "m.txt").write_text("\n".join(map(str, range(1, 12))) + "\n")
    (tmp_path / "n.txt").write_text("\n".join(map(str, range(12, 24))) + "\n")
    r = CliRunner().invoke(app, [
        "audit", "model", str(path), "--edges", str(tmp_path / "e.csv"), "--features",
        str(tmp_path / "x.npy"), "--labels", str(tmp_path / "y.csv"), "--members",
        str(tmp_path / "m.txt"), "--non-members", str(tmp_path / "n.txt"),
        "--embedding-layer", "conv1", "--attack", "graph_reconstruction", "--suite", "quick",
        "--n-bootstrap", "20", "--quiet", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [a["attack"] for a in rep["attacks"]] == ["graph_reconstruction"]
    assert rep["config"]["embedding_layers"] == ["conv1"]


def test_pt2_embedding_layer_refused_naming_the_state_dict_route(tmp_path):
    from graphleaks.models.foreign import export_pt2, load_pt2

    net = TwoLayer().eval()
    x, ei = _graph()
    export_pt2(net, x, ei, tmp_path / "net.pt2")
    with pytest.raises(InvalidConfigError) as err:
        ModelInterface.of(load_pt2(tmp_path / "net.pt2"), "logits", ("conv1",))
    line = str(err.value)
    assert "\n" not in line and "torch.save(model.state_dict(), 'model.pt')" in line
    assert "--model-class package.module:Class --embedding-layer conv1" in line

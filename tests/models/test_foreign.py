"""Saved foreign models: each loader round-trips a real file and refuses a malicious one.

Every malicious file carries a pickle payload that would create a marker file when
unpickled; the marker must never appear, and the loader must raise one GraphleaksError line.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import SGConv

from graphleaks.errors import DataError, GraphleaksError, InvalidConfigError
from graphleaks.models.foreign import (
    export_pt2,
    import_class,
    load_model_file,
    load_onnx,
    load_pt2,
    read_state_dict,
)


class Net(torch.nn.Module):
    """A small model of a PyG layer graphleaks does not ship."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = SGConv(8, 3, K=2)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.conv(x, edge_index), dim=1)


class _Payload:
    """Unpickling this object creates ``path`` (what an attacker's code would do)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # noqa: ANN204
        return (open, (str(self.path), "w"))


@pytest.fixture
def graph():  # noqa: ANN201
    torch.manual_seed(0)
    return torch.randn(40, 8), torch.randint(0, 40, (2, 120))


@pytest.fixture
def pt2_file(tmp_path: Path, graph) -> Path:  # noqa: ANN001
    torch.manual_seed(0)
    return export_pt2(Net().eval(), *graph, tmp_path / "net.pt2")


def _rewrite(src: Path, dst: Path, edit) -> Path:  # noqa: ANN001
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            zout.writestr(item, edit(item.filename, zin.read(item.filename)))
    return dst


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_pt2_round_trip_on_another_graph_size(pt2_file: Path, graph) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    net = Net().eval()
    loaded = load_pt2(pt2_file)
    x, ei = torch.randn(25, 8), torch.randint(0, 25, (2, 60))
    torch.testing.assert_close(loaded(x, ei), net(x, ei), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(loaded(*graph), net(*graph), rtol=1e-5, atol=1e-5)


def test_pt2_with_a_pickled_weight_is_refused_and_never_unpickled(pt2_file, tmp_path):  # noqa: ANN001
    marker = tmp_path / "pwned"

    def edit(name: str, data: bytes) -> bytes:
        if name.endswith("model_weights_config.json"):
            cfg = json.loads(data)
            for meta in cfg["config"].values():
                meta["use_pickle"] = True
            return json.dumps(cfg).encode()
        if "/data/weights/weight_" in name:
            return pickle.dumps(_Payload(marker))
        return data

    evil = _rewrite(pt2_file, tmp_path / "evil.pt2", edit)
    with pytest.raises(DataError, match="pickled") as exc:
        load_pt2(evil)
    _one_line(exc)
    assert not marker.exists()


def test_pt2_with_an_opaque_constant_is_refused(pt2_file, tmp_path):  # noqa: ANN001
    marker = tmp_path / "pwned"

    def edit(name: str, data: bytes) -> bytes:
        if name.endswith("model_constants_config.json"):
            cfg = json.loads(data)
            cfg["config"]["evil"] = {"path_name": "opaque_obj_0", "is_param": False,
                                     "use_pickle": False, "tensor_meta": None}
            return json.dumps(cfg).encode()
        return data

    evil = _rewrite(pt2_file, tmp_path / "evil.pt2", edit)
    with zipfile.ZipFile(evil, "a") as z:
        prefix = z.namelist()[0].split("/")[0]
        z.writestr(f"{prefix}/data/constants/opaque_obj_0", pickle.dumps(_Payload(marker)))
    with pytest.raises(DataError, match="pickled") as exc:
        load_pt2(evil)
    _one_line(exc)
    assert not marker.exists()


def test_pt2_sample_inputs_are_never_read(pt2_file, tmp_path, graph):  # noqa: ANN001
    # torch.export.load would fall back to torch.load(weights_only=False) on these bytes
    marker = tmp_path / "pwned"

    def edit(name: str, data: bytes) -> bytes:
        return pickle.dumps(_Payload(marker)) if "sample_inputs" in name else data

    evil = _rewrite(pt2_file, tmp_path / "evil.pt2", edit)
    loaded = load_pt2(evil)
    assert loaded(*graph).shape == (40, 3)
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"not a zip at all", b"PK\x03\x04garbage"])
def test_corrupt_pt2_is_one_line(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(content)
    with pytest.raises(DataError) as exc:
        load_pt2(bad)
    _one_line(exc)


def test_state_dict_pt_with_a_pickle_payload_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "weights.pt"
    torch.save({"conv.lin.weight": _Payload(marker)}, evil)
    with pytest.raises(DataError, match="safely") as exc:
        read_state_dict(evil)
    _one_line(exc)
    assert not marker.exists()


def test_safetensors_holding_a_pickle_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "weights.safetensors"
    evil.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(DataError) as exc:
        read_state_dict(evil)
    _one_line(exc)
    assert not marker.exists()


def test_state_dict_round_trip_through_safetensors_and_pt(tmp_path: Path, graph) -> None:  # noqa: ANN001
    from safetensors.torch import save_file

    torch.manual_seed(0)
    net = Net().eval()
    save_file(net.state_dict(), tmp_path / "w.safetensors")
    torch.save(net.state_dict(), tmp_path / "w.pt")
    for name in ("w.safetensors", "w.pt"):
        model, factory = load_model_file(tmp_path / name,
                                         model_class=f"{__name__}:Net")
        torch.testing.assert_close(model(*graph), net(*graph))
        assert isinstance(factory(), Net)


@pytest.mark.parametrize("spec,match", [
    ("no_such_package_xyz.mod:Net", "cannot be imported"),
    ("json:loads", "not a torch.nn.Module class"),
    ("missing-colon", "package.module:Class"),
])
def test_bad_model_class_is_one_line(spec: str, match: str) -> None:
    with pytest.raises(InvalidConfigError, match=match) as exc:
        import_class(spec)
    _one_line(exc)


def test_model_kwargs_must_be_a_json_object_that_builds(tmp_path: Path) -> None:
    torch.save(Net().state_dict(), tmp_path / "w.pt")
    for kwargs, match in (("{bad json", "not valid JSON"), ("[1]", "JSON object"),
                          ('{"nope": 1}', "failed")):
        with pytest.raises(InvalidConfigError, match=match):
            load_model_file(tmp_path / "w.pt", model_class=f"{__name__}:Net",
                            model_kwargs=kwargs)


def test_unknown_format_and_missing_class_are_refused(tmp_path: Path) -> None:
    (tmp_path / "m.pkl").write_bytes(b"x")
    with pytest.raises(InvalidConfigError, match="unknown format"):
        load_model_file(tmp_path / "m.pkl")
    torch.save(Net().state_dict(), tmp_path / "w.pt")
    with pytest.raises(InvalidConfigError, match="--model-class"):
        load_model_file(tmp_path / "w.pt")


def test_onnx_round_trip_and_malicious_file(tmp_path: Path, graph) -> None:  # noqa: ANN001
    pytest.importorskip("onnxruntime", reason="needs graphleaks[onnx]")
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")
    from torch.export import Dim

    torch.manual_seed(0)
    net = Net().eval()
    path = tmp_path / "net.onnx"
    torch.onnx.export(net, graph, str(path), dynamo=True, verbose=False,
                      dynamic_shapes=({0: Dim("n", min=2)}, {1: Dim("e", min=2)}))
    model = load_onnx(path)
    x, ei = torch.randn(25, 8), torch.randint(0, 25, (2, 60))
    torch.testing.assert_close(model(x, ei), net(x, ei), rtol=1e-4, atol=1e-5)
    with pytest.raises(DataError, match="rejected") as exc:  # wrong feature width
        model(torch.randn(25, 5), ei)
    _one_line(exc)
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.onnx"
    evil.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(GraphleaksError) as exc:
        load_onnx(evil)
    _one_line(exc)
    assert not marker.exists()

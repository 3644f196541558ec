"""Contract over every model reader: a forged file is refused with one line that never
quotes its content.

Each forged file carries a secret token where a reader's own error message would quote it
(an operator name, a pickle global, a dtype string, a tensor name), and a pickle payload
where one fits; the CLI must exit 2 with one ``error:`` line naming the file, never print
the token, never create the marker, and leave the sandbox unchanged.
"""

from __future__ import annotations

import json
import pickle
import struct
import sys
import types
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

TOKEN = "SECRETTOKENd41d8cd9neverprinted"


class _Payload:
    """Unpickling this creates ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # noqa: ANN204
        return (open, (str(self.path), "w"))


def _pt2_forged_op(s: Path, marker: Path) -> Path:
    program = {"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [
        {"target": f"torch.ops.{TOKEN}.x.default", "inputs": [], "outputs": [],
         "metadata": {}}]}}, "schema_version": {"major": 8, "minor": 20}}
    p = s / "forged.pt2"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("m/archive_version", "0")
        z.writestr("m/models/model.json", json.dumps(program))
        z.writestr("m/data/weights/model_weights_config.json", json.dumps({"config": {}}))
        z.writestr("m/data/constants/model_constants_config.json", json.dumps({"config": {}}))
        z.writestr("m/data/sample_inputs/model.pt", pickle.dumps(_Payload(marker)))
    return p


def _pt2_pickled_weight(s: Path, marker: Path) -> Path:
    p = s / "forged.pt2"
    meta = {"path_name": "weight_0", "is_param": True, "use_pickle": True, "tensor_meta": None}
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("m/archive_version", "0")
        z.writestr("m/models/model.json", json.dumps({TOKEN: 1}))
        z.writestr("m/data/weights/model_weights_config.json",
                   json.dumps({"config": {TOKEN: meta}}))
        z.writestr("m/data/constants/model_constants_config.json", json.dumps({"config": {}}))
        z.writestr("m/data/weights/weight_0", pickle.dumps(_Payload(marker)))
    return p


def _onnx_unknown_op(s: Path, marker: Path) -> Path:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    node = helper.make_node(TOKEN, ["x", "ei"], ["y"], domain=TOKEN)
    graph = helper.make_graph(
        [node], TOKEN,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8]),
         helper.make_tensor_value_info("ei", TensorProto.INT64, [2, "e"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(TOKEN, 1)])
    p = s / "forged.onnx"
    onnx.save(model, str(p))
    return p


def _onnx_pickle(s: Path, marker: Path) -> Path:
    p = s / "forged.onnx"
    p.write_bytes(pickle.dumps(_Payload(marker)) + TOKEN.encode())
    return p


def _safetensors_bad_dtype(s: Path, marker: Path) -> Path:
    header = json.dumps({"w": {"dtype": TOKEN, "shape": [1], "data_offsets": [0, 4]}}).encode()
    p = s / "forged.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    return p


def _safetensors_unexpected_key(s: Path, marker: Path) -> Path:
    import torch
    from safetensors.torch import save_file

    p = s / "forged.safetensors"
    save_file({"weight": torch.zeros(3, 8), "bias": torch.zeros(3), TOKEN: torch.zeros(1)},
              str(p))
    return p


def _pt_pickle_global(s: Path, marker: Path) -> Path:
    import torch

    module = types.ModuleType(TOKEN)
    cls = type(TOKEN, (_Payload,), {"__module__": TOKEN})
    module.__dict__[TOKEN] = cls
    sys.modules[TOKEN] = module
    try:
        p = s / "forged.pt"
        torch.save({"weight": cls(marker)}, p)
    finally:
        del sys.modules[TOKEN]
    return p


FORGED: dict[str, Callable[[Path, Path], Path]] = {
    "pt2-unknown-namespace": _pt2_forged_op,
    "pt2-pickled-weight": _pt2_pickled_weight,
    "onnx-unknown-op": _onnx_unknown_op,
    "onnx-pickle": _onnx_pickle,
    "safetensors-bad-dtype": _safetensors_bad_dtype,
    "safetensors-unexpected-key": _safetensors_unexpected_key,
    "pt-pickle-global": _pt_pickle_global,
}


@pytest.mark.parametrize("case", list(FORGED))
def test_a_forged_model_file_is_refused_without_quoting_it(hostile, case):
    if case.startswith("onnx"):
        pytest.importorskip("onnxruntime", reason="needs graphleaks[onnx]")
    marker = hostile.root / "PWNED"
    opts = hostile.write_graph(hostile.root / "graph")
    (hostile.root / "m.txt").write_text("node_id\n" + "\n".join(map(str, range(20))))
    (hostile.root / "n.txt").write_text("\n".join(map(str, range(20, 40))))
    path = FORGED[case](hostile.root, marker)
    extra = []
    if path.suffix in (".safetensors", ".pt"):
        extra = ["--model-class", "torch.nn:Linear",
                 "--model-kwargs", '{"in_features": 8, "out_features": 3}']
    line = hostile.refused("audit", "model", path, *extra, *opts, "--members",
                           hostile.root / "m.txt", "--non-members", hostile.root / "n.txt",
                           "--out", "out", "--n-bootstrap", "20",
                           absent=(TOKEN, "PWNED"))
    assert path.name in line
    assert not marker.exists()

"""A ``.pt2`` from a stranger runs nothing and touches nothing (issue 23).

Every hostile file is a real ``torch.export`` program of a small PyG model with its JSON
edited inside the zip: a code payload in each field torch ``sympify``\\ s, side-effecting
ATen operators (``from_file`` + ``fill_`` on the fake HOME's ``.bashrc``), custom and
higher-order operators, lying or compressed tensor records, and memory bombs. Each case runs
the CLI in-process and checks the refusal contract (exit 2, one ``error:`` line, no
traceback), that a marker file never appears, that the planted secret is never printed, and
that the sandbox, fake HOME included, is byte-for-byte unchanged.
"""

from __future__ import annotations

import json
import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, GCNConv, SAGEConv

from graphleaks.errors import DataError
from graphleaks.models.foreign import export_pt2, load_pt2
from graphleaks.models.pt2_safety import (
    ALIASING_OPS,
    INPLACE_OPS,
    PURE_OPS,
    parse_sym_expr,
    print_sym_expr,
    read_safe_pt2,
)

SECRET = "SECRET-pt2-d41d8cd9-never-printed"


class Net(torch.nn.Module):
    """Two GCN layers (its export carries pow_, masked_fill_ and scatter_add_)."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = GCNConv(8, 16)
        self.c2 = GCNConv(16, 3)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.c2(F.relu(self.c1(x, edge_index)), edge_index), dim=1)


def _graph(n: int = 40, e: int = 120) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 8, generator=g), torch.randint(0, n, (2, e), generator=g)


@pytest.fixture(scope="session")
def net() -> Net:
    torch.manual_seed(0)
    return Net().eval()


@pytest.fixture(scope="session")
def clean_pt2(tmp_path_factory: pytest.TempPathFactory, net: Net) -> Path:
    """A dynamic-shape export (graphleaks' export_pt2) outside every sandbox."""
    return export_pt2(net, *_graph(), tmp_path_factory.mktemp("pt2") / "net.pt2")


@pytest.fixture
def sandbox(hostile):
    """The hostile sandbox with a graph, a fake HOME holding a secret, and a marker path."""
    home = hostile.root / "home"
    (home / ".bashrc").write_text(f"export TOKEN={SECRET}\n")
    (hostile.root / "secret.txt").write_text(SECRET + "\n")
    opts = hostile.write_graph(hostile.root / "graph")
    (hostile.root / "graph" / "members.txt").write_text(
        "node_id\n" + "\n".join(map(str, range(20))))
    (hostile.root / "graph" / "non_members.txt").write_text(
        "\n".join(map(str, range(20, 40))))
    opts += ["--members", str(hostile.root / "graph" / "members.txt"),
             "--non-members", str(hostile.root / "graph" / "non_members.txt")]
    return hostile, opts, hostile.root / "PWNED", home / ".bashrc"


def _rewrite(src: Path, dst: Path, edit: Callable[[str, bytes], bytes | None], *,
             compress: Callable[[str], bool] = lambda name: False) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = edit(item.filename, zin.read(item.filename))
            if data is not None:
                method = zipfile.ZIP_DEFLATED if compress(item.filename) else zipfile.ZIP_STORED
                zout.writestr(item.filename, data, compress_type=method)
    return dst


def _edit_program(src: Path, dst: Path, edit: Callable[[dict], object]) -> Path:
    def apply(name: str, data: bytes) -> bytes:
        if name.endswith("models/model.json"):
            doc = json.loads(data)
            edit(doc)
            return json.dumps(doc).encode()
        return data

    return _rewrite(src, dst, apply)


def _edit_weights(src: Path, dst: Path, edit: Callable[[dict, dict], object]) -> Path:
    """``edit(config, records)``: records maps a weight file name to its bytes."""
    with zipfile.ZipFile(src) as z:
        cfg_name = next(n for n in z.namelist() if n.endswith("model_weights_config.json"))
        cfg = json.loads(z.read(cfg_name))
        folder = cfg_name.rsplit("/", 1)[0] + "/"
        records = {n[len(folder):]: z.read(n) for n in z.namelist()
                   if n.startswith(folder) and n != cfg_name}
    edit(cfg, records)

    def apply(name: str, data: bytes) -> bytes | None:
        if name == cfg_name:
            return json.dumps(cfg).encode()
        if name.startswith(folder):
            return records.pop(name[len(folder):], None)
        return data

    _rewrite(src, dst, apply)
    with zipfile.ZipFile(dst, "a") as z:  # records the edit added
        for rec, data in records.items():
            z.writestr(folder + rec, data)
    return dst


def _payload(marker: Path) -> str:
    return (f"(__import__('pathlib').Path({str(marker)!r}).touch() or "
            "Symbol('s77', positive=True, integer=True))")


def _audit(opts: list[str], model: Path) -> list[str]:
    return ["audit", "model", str(model), *opts, "--out", "out", "--n-bootstrap", "20",
            "--attack", "confidence_mia"]


def _refused(sandbox, evil: Path, match: str | None = None) -> str:
    hostile, opts, marker, bashrc = sandbox
    before = bashrc.read_bytes()
    line = hostile.refused(*_audit(opts, evil), match=match,
                           absent=(SECRET, "__import__", "PWNED", "pathlib"))
    assert not marker.exists()
    assert bashrc.read_bytes() == before
    assert evil.name in line
    return line


# ---------------------------------------------------------------- positive cases


class _Layers(torch.nn.Module):
    def __init__(self, conv: type) -> None:
        super().__init__()
        kw = {"heads": 2, "concat": False} if conv is GATConv else {}
        self.c1 = conv(8, 16, **kw)
        self.c2 = conv(16, 3, **kw)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        h = F.dropout(F.relu(self.c1(x, edge_index)), p=0.5, training=self.training)
        return F.log_softmax(self.c2(h, edge_index), dim=1)


@pytest.mark.parametrize("conv", [GCNConv, pytest.param(SAGEConv, marks=pytest.mark.slow),
                                  pytest.param(GATConv, marks=pytest.mark.slow)])
def test_dynamic_and_static_exports_load_and_agree_with_the_module(tmp_path, conv):
    torch.manual_seed(0)
    net = _Layers(conv).eval()
    dynamic = export_pt2(net, *_graph(), tmp_path / "dynamic.pt2")
    static = tmp_path / "static.pt2"
    torch.export.save(torch.export.export(net, _graph()), str(static))
    for path, graphs in ((dynamic, [_graph(), _graph(25, 60)]), (static, [_graph()])):
        loaded = load_pt2(path)
        for x, ei in graphs:
            torch.testing.assert_close(loaded(x, ei), net(x, ei), rtol=1e-5, atol=1e-5)


def test_torch_only_sympifies_text_graphleaks_printed(clean_pt2, monkeypatch):
    import sympy

    safe = read_safe_pt2(clean_pt2)
    printed = set()

    def collect(obj):
        if isinstance(obj, dict):
            if "expr_str" in obj:
                printed.add(obj["expr_str"])
            for v in obj.values():
                collect(v)
        elif isinstance(obj, list):
            for v in obj:
                collect(v)

    collect(safe.program)
    seen = []
    real = sympy.sympify

    def spy(a, *args, **kwargs):
        if isinstance(a, str):
            seen.append(a)
        return real(a, *args, **kwargs)

    monkeypatch.setattr(sympy, "sympify", spy)
    load_pt2(clean_pt2)
    assert seen, "the dynamic export should carry symbolic sizes"
    assert set(seen) <= printed


@pytest.mark.parametrize("text", [
    "Symbol('s77', positive=True, integer=True)",
    "Max(Integer(1), Add(Symbol('s77', positive=True, integer=True), Symbol('u0', "
    "integer=True)))",
    "GreaterThan(Symbol('u0', integer=True), Integer(0))",
    "s0 + 2*s1 - (s2 // 3)",
    "Min(s0, Integer(-4))",
])
def test_grammar_accepts_what_torch_prints_and_reprints_it(text):
    import sympy

    expr = parse_sym_expr(text)
    again = print_sym_expr(parse_sym_expr(print_sym_expr(expr)))
    assert again == print_sym_expr(expr)
    assert sympy.sympify(again) == sympy.sympify(text)


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "Symbol('s0').__class__", "s0 ** 99999999",
    "Pow(s0, Integer(9999999))", "Symbol('x; import os')", "Integer(1" + "0" * 40 + ")",
    "Add(" * 40 + "s0" + ", s1)" * 40, "lambda: 0", "s0 if s1 else s2", "Symbol('s0', evil=True)",
    "[s0 for s0 in ()]", "s0 + 'a'", "Float('nan')",
])
def test_grammar_refuses_everything_else(tmp_path, text):
    from graphleaks.models.pt2_safety import _Refused

    with pytest.raises(_Refused) as info:
        parse_sym_expr(text)
    assert text[:12] not in str(info.value)


def test_allow_list_classification_matches_torch_schemas():
    # every allowed op exists in this torch; an op whose schema writes an argument is
    # in-place; an op whose schema returns an alias of an input is listed as aliasing
    for name in PURE_OPS | ALIASING_OPS | INPLACE_OPS:
        packet, overload = name.rsplit(".", 1)
        schema = getattr(getattr(torch.ops.aten, packet), overload)._schema
        writes = any(a.alias_info is not None and a.alias_info.is_write
                     for a in schema.arguments)
        aliases = any(r.alias_info is not None for r in schema.returns)
        assert writes == (name in INPLACE_OPS), name
        if aliases and not writes:
            assert name in ALIASING_OPS, name
    assert not (PURE_OPS & ALIASING_OPS) and not (PURE_OPS & INPLACE_OPS)


def test_the_sympify_payload_is_live_in_torch_own_reader(clean_pt2, tmp_path):
    # proves the hostile cases below are real: torch.export.load runs the payload
    marker = tmp_path / "PWNED"

    def edit(doc):
        doc["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][0]["as_expr"][
            "expr_str"] = _payload(marker)

    evil = _edit_program(clean_pt2, tmp_path / "evil.pt2", edit)
    try:
        torch.export.load(str(evil))
    except Exception:  # noqa: S110 - only the side effect matters here
        pass
    assert marker.exists()
    marker.unlink()
    with pytest.raises(DataError):
        load_pt2(evil)
    assert not marker.exists()


# ---------------------------------------------------------------- code in symbolic sizes


def _first_expr(table: dict) -> dict:
    for v in table.values():
        if isinstance(v, dict) and "as_expr" in v:
            return v["as_expr"]
    raise AssertionError("no symbolic value")


SYMPIFIED = {
    "tensor size": lambda g: g["tensor_values"]["x"]["sizes"][0]["as_expr"],
    "tensor stride": lambda g: next(m["strides"][0]["as_expr"]
                                    for m in g["tensor_values"].values()
                                    if "as_expr" in m["strides"][0]),
    "storage offset": lambda g: next(m["storage_offset"]["as_expr"]
                                     for m in g["tensor_values"].values()
                                     if "as_expr" in m["storage_offset"]),
    "sym int value": lambda g: _first_expr(g["sym_int_values"]),
    "sym bool value": lambda g: _first_expr(g["sym_bool_values"]),
}


@pytest.mark.parametrize("field", list(SYMPIFIED))
def test_code_in_a_sympified_field_never_runs(sandbox, clean_pt2, field):
    hostile, _, marker, _ = sandbox

    def edit(doc):
        SYMPIFIED[field](doc["graph_module"]["graph"])["expr_str"] = _payload(marker)

    evil = _edit_program(clean_pt2, hostile.root / "evil.pt2", edit)
    assert "grammar" in _refused(sandbox, evil)


def test_code_in_a_sym_float_value_never_runs(sandbox, clean_pt2):
    hostile, _, marker, _ = sandbox

    def edit(doc):
        doc["graph_module"]["graph"]["sym_float_values"]["f0"] = {
            "as_expr": {"expr_str": _payload(marker), "hint": None}}

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="grammar")


def test_code_in_a_range_constraint_key_never_runs(sandbox, clean_pt2):
    hostile, _, marker, _ = sandbox

    def edit(doc):
        doc["range_constraints"][_payload(marker)] = {"min_val": 2, "max_val": None}

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="range constraint")


def test_guard_code_is_refused(sandbox, clean_pt2):
    hostile, _, marker, _ = sandbox

    def edit(doc):
        doc["guards_code"] = [f"__import__('pathlib').Path({str(marker)!r}).touch()"]

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="guard code")


def test_code_in_names_and_metadata_is_refused_or_dropped(sandbox, clean_pt2):
    hostile, _, marker, _ = sandbox

    def edit(doc):
        node = doc["graph_module"]["graph"]["nodes"][0]
        node["name"] = f"x = __import__('pathlib').Path({str(marker)!r}).touch()"

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="identifier")


# ---------------------------------------------------------------- side-effecting operators


def _node(target: str, inputs: list[tuple[str, dict]], out: str) -> dict:
    kinds = {"dtype": 2}  # keyword-only arguments
    return {"target": target,
            "inputs": [{"name": n, "arg": a, "kind": kinds.get(n, 1)} for n, a in inputs],
            "outputs": [{"as_tensor": {"name": out}}], "metadata": {}, "name": out,
            "is_hop_single_tensor_return": None}


def _meta(n: int, dtype: int = 1) -> dict:
    return {"dtype": dtype, "sizes": [{"as_int": n}], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": 1}],
            "storage_offset": {"as_int": 0}, "layout": 7}


def _prepend(doc: dict, nodes: list[dict], metas: dict[str, dict]) -> None:
    g = doc["graph_module"]["graph"]
    g["nodes"][:0] = nodes
    g["tensor_values"].update(metas)


def _from_file_fill(path: Path) -> Callable[[dict], None]:
    def edit(doc):
        _prepend(doc, [
            _node("torch.ops.aten.from_file.default",
                  [("filename", {"as_string": str(path)}), ("shared", {"as_bool": True}),
                   ("size", {"as_int": 8}), ("dtype", {"as_scalar_type": 1})], "ff"),
            _node("torch.ops.aten.fill_.Scalar",
                  [("self", {"as_tensor": {"name": "ff"}}), ("value", {"as_int": 65})], "ff2"),
        ], {"ff": _meta(8), "ff2": _meta(8)})
    return edit


def test_from_file_is_refused_by_name_and_home_is_untouched(sandbox, clean_pt2):
    hostile, _, _, bashrc = sandbox
    evil = _edit_program(clean_pt2, hostile.root / "evil.pt2", _from_file_fill(bashrc))
    line = _refused(sandbox, evil, match="aten.from_file is not allowed (file I/O)")
    assert str(bashrc) not in line


def test_the_from_file_payload_is_live_in_torch_own_reader(clean_pt2, tmp_path):
    # proves the case above is real: torch's reader rewrites the file at the first call
    victim = tmp_path / "victim"
    victim.write_bytes(b"original")
    evil = _edit_program(clean_pt2, tmp_path / "evil.pt2", _from_file_fill(victim))
    try:
        torch.export.load(str(evil)).module()(*_graph())
    except Exception:  # noqa: S110 - only the side effect matters here
        pass
    assert victim.read_bytes() != b"original"
    with pytest.raises(DataError, match="from_file"):
        load_pt2(evil)


@pytest.mark.parametrize(("target", "match"), [
    ("torch.ops.aten.copy_.default", "aten.copy_ is not allowed"),
    ("torch.ops.aten.set_.source_Tensor", "aten.set_ is not allowed"),
    ("torch.ops.aten.resize_.default", "aten.resize_ is not allowed"),
    ("torch.ops.aten.empty.memory_format", "uninitialised memory"),
    ("torch.ops.aten.add.out", "out= operator"),
    ("torch.ops.aten.definitely_not_an_op_PWNED.default", "outside graphleaks' allow-list"),
    ("torch.ops.evil_ns.pwn.default", "custom operator"),
    ("torch.ops.higher_order.cond", "higher-order operator"),
    ("builtins.exec", "outside graphleaks' allow-list"),
    ("_operator.attrgetter", "outside graphleaks' allow-list"),
    ("torch.save", "outside graphleaks' allow-list"),
])
def test_operators_outside_the_allow_list_are_refused(sandbox, clean_pt2, target, match):
    hostile = sandbox[0]

    def edit(doc):
        _prepend(doc, [_node(target, [("self", {"as_tensor": {"name": "x"}})], "evil")],
                 {"evil": _meta(8, 7)})

    line = _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
                    match=match)
    assert "definitely_not" not in line and "evil_ns" not in line


@pytest.mark.parametrize("victim", ["input", "weight", "view of input", "view of weight"])
def test_in_place_writes_to_inputs_weights_and_their_views_are_refused(sandbox, clean_pt2,
                                                                       victim):
    hostile = sandbox[0]

    def edit(doc):
        g = doc["graph_module"]["graph"]
        source = "x" if "input" in victim else g["inputs"][0]["as_tensor"]["name"]
        nodes, metas = [], {}
        if victim.startswith("view"):
            nodes.append(_node("torch.ops.aten.select.int",
                               [("self", {"as_tensor": {"name": source}}),
                                ("dim", {"as_int": 0}), ("index", {"as_int": 0})], "v"))
            metas["v"] = _meta(8, 7)
            source = "v"
        nodes.append(_node("torch.ops.aten.fill_.Scalar",
                           [("self", {"as_tensor": {"name": source}}),
                            ("value", {"as_int": 0})], "w"))
        metas["w"] = _meta(8, 7)
        _prepend(doc, nodes, metas)

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="aten.fill_ writes to an input")


def test_mutation_outputs_are_refused(sandbox, clean_pt2):
    hostile = sandbox[0]

    def edit(doc):
        sig = doc["graph_module"]["signature"]
        sig["output_specs"].append({"user_input_mutation": {
            "arg": {"name": "log_softmax"}, "user_input_name": "x"}})

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="mutates")


# ---------------------------------------------------------------- tensors and memory


def test_compressed_tensor_record_is_refused(sandbox, clean_pt2):
    hostile = sandbox[0]
    evil = _rewrite(clean_pt2, hostile.root / "evil.pt2", lambda n, d: d,
                    compress=lambda n: "/data/weights/weight_" in n)
    _refused(sandbox, evil, match="compressed")


@pytest.mark.parametrize("delta", [-4, 4])
def test_a_record_whose_length_lies_is_refused(sandbox, clean_pt2, delta):
    hostile = sandbox[0]

    def edit(cfg, records):
        name = next(iter(cfg["config"].values()))["path_name"]
        data = records[name]
        records[name] = data[:delta] if delta < 0 else data + b"\0" * delta

    _refused(sandbox, _edit_weights(clean_pt2, hostile.root / "evil.pt2", edit),
             match="length does not match")


def test_a_small_file_declaring_a_1gib_tensor_is_refused(sandbox, clean_pt2):
    # torch's reader would call torch.zeros(declared shape) for an empty record
    hostile = sandbox[0]

    def edit(cfg, records):
        meta = next(iter(cfg["config"].values()))
        meta["tensor_meta"]["sizes"] = [{"as_int": 2**28}]
        meta["tensor_meta"]["strides"] = [{"as_int": 1}]
        records[meta["path_name"]] = b""

    evil = _edit_weights(clean_pt2, hostile.root / "evil.pt2", edit)
    assert evil.stat().st_size < 200_000
    _refused(sandbox, evil, match="length does not match")


def test_declared_intermediates_past_the_memory_limit_are_refused(sandbox, clean_pt2):
    hostile = sandbox[0]

    def edit(doc):
        g = doc["graph_module"]["graph"]
        g["tensor_values"]["huge"] = _meta(2**29, 7)  # 2 GiB of float32

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="limit")


def test_an_allocation_past_the_memory_limit_is_refused(sandbox, clean_pt2):
    hostile = sandbox[0]

    def edit(doc):
        _prepend(doc, [_node("torch.ops.aten.new_zeros.default",
                             [("self", {"as_tensor": {"name": "x"}}),
                              ("size", {"as_ints": [2**20, 2**20]})], "big")],
                 {"big": _meta(8, 7)})

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="limit")


def test_a_program_json_bomb_is_never_inflated(sandbox, clean_pt2):
    hostile = sandbox[0]

    def edit(name, data):
        return data + b" " * (32 * 1024**2) if name.endswith("models/model.json") else data

    evil = _rewrite(clean_pt2, hostile.root / "evil.pt2", edit,
                    compress=lambda n: n.endswith("models/model.json"))
    assert evil.stat().st_size < 400_000
    _refused(sandbox, evil, match="larger than")


def test_deeply_nested_program_json_is_refused(sandbox, clean_pt2):
    hostile = sandbox[0]

    def edit(doc):
        doc["graph_module"]["graph"]["nodes"][0]["deep"] = json.loads("[" * 500 + "]" * 500)

    _refused(sandbox, _edit_program(clean_pt2, hostile.root / "evil.pt2", edit),
             match="nested")


def test_overlapping_zip_entries_are_refused(sandbox, clean_pt2):
    hostile = sandbox[0]
    evil = hostile.root / "evil.pt2"
    shutil.copy(clean_pt2, evil)
    data = bytearray(evil.read_bytes())
    # point the second central-directory record at the first entry's local header
    with zipfile.ZipFile(evil) as z:
        pos = z.start_dir  # type: ignore[attr-defined]
    records = []
    while data[pos:pos + 4] == b"PK\x01\x02":
        records.append(pos)
        n, m, k = struct.unpack("<HHH", data[pos + 28:pos + 34])
        pos += 46 + n + m + k
    assert len(records) > 2
    data[records[1] + 42:records[1] + 46] = data[records[0] + 42:records[0] + 46]
    evil.write_bytes(bytes(data))
    _refused(sandbox, evil)


def test_a_pickled_sample_input_is_still_never_read(clean_pt2, tmp_path):
    marker = tmp_path / "PWNED"
    payload = (b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")

    def edit(name, data):
        return payload if "sample_inputs" in name else data

    loaded = load_pt2(_rewrite(clean_pt2, tmp_path / "evil.pt2", edit))
    assert loaded(*_graph()).shape == (40, 3)
    assert not marker.exists()


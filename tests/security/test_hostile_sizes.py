"""Small hostile files that would cost gigabytes, nest too deep, or forge what graphleaks writes.

Every input here is a few kilobytes; each must be refused (exit 2, one ``error:`` line, no
traceback, nothing written) before anything sized by its claims is allocated.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile

import numpy as np
import pytest
import torch

SECRET_ID = "918273645"


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (118 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()


def _set_member_size(path, size):
    """Rewrite a one-member zip's uncompressed size (local header and central directory)."""
    raw = bytearray(path.read_bytes())
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    struct.pack_into("<I", raw, local + 22, size)
    struct.pack_into("<I", raw, central + 24, size)
    path.write_bytes(bytes(raw))


@pytest.fixture
def scores_export(hostile):
    """A valid scores-only export: scores.npz for nodes 0..19, members 0..9."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=20)
    np.savez(hostile.root / "scores.npz", scores=p, labels=p.argmax(1),
             node_ids=np.arange(20))
    (hostile.root / "members.txt").write_text("node_id\n" + "\n".join(map(str, range(10))) + "\n")
    return hostile.root


def _audit_scores(scores, members):
    return ("audit", "scores", scores, "--members", members, "--out", "rep",
            "--n-bootstrap", "20")


def test_valid_scores_export_is_audited(hostile, scores_export):
    # the baseline of the refusals below: the same command with honest files works
    r = hostile.run(*_audit_scores(scores_export / "scores.npz", scores_export / "members.txt"))
    assert r.exit_code == 0, r.output


def test_npz_member_declaring_a_huge_shape_is_refused(hostile, scores_export):
    # 2 KB on disk; numpy would allocate the declared 16 TB before reading a byte of data
    path = hostile.root / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("scores.npy", _npy_header((10**12, 2)) + b"\0" * 4096)
        zf.writestr("labels.npy", _npy_header((20,), "<i8") + b"\0" * 160)
    hostile.refused(*_audit_scores(path, scores_export / "members.txt"),
                    match="bomb.npz")


def test_npz_member_decompressing_past_the_bound_is_refused(hostile, scores_export):
    # the zip directory says the member expands to 3 GB, matching its header: consistent, but
    # past the decompressed-size bound, so it is refused before anything is inflated
    path = hostile.root / "bomb.npz"
    rows = 187_500_000  # 128-byte header + rows * 16 bytes = 3_000_000_128
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("scores.npy", _npy_header((rows, 2)) + b"\0" * 4096)
    _set_member_size(path, 128 + rows * 16)
    with zipfile.ZipFile(path) as zf:
        assert zf.infolist()[0].file_size == 3_000_000_128
    line = hostile.refused(*_audit_scores(path, scores_export / "members.txt"),
                           match="bomb.npz")
    assert "decompressed" in line


def test_npz_member_expanding_past_the_ratio_is_refused(hostile, scores_export):
    # a consistent, genuinely deflated member of zeros: 64 MiB from a ~64 kB file, under the
    # size bound but far past the expansion ratio, refused before numpy inflates it
    path = hostile.root / "bomb.npz"
    rows = 4 << 20  # 64 MiB of float64 pairs
    header = _npy_header((rows, 2))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("scores.npy", "w", force_zip64=True) as fh:
            fh.write(header)
            zero = b"\0" * (1 << 20)
            for _ in range(16 * rows // (1 << 20)):
                fh.write(zero)
    assert path.stat().st_size < 1 << 20
    line = hostile.refused(*_audit_scores(path, scores_export / "members.txt"),
                           match="bomb.npz")
    assert "expands" in line


@pytest.mark.parametrize("which", ["members", "embeddings"])
def test_npy_header_with_a_huge_shape_is_refused(hostile, scores_export, which):
    path = hostile.root / "forged.npy"
    path.write_bytes(_npy_header((10**15, 64), "<i8") + b"\0" * 64)
    if which == "members":
        args = _audit_scores(scores_export / "scores.npz", path)
    else:
        (hostile.root / "attr.csv").write_text("0,1\n1,0\n")
        args = ("audit", "embeddings", path, "--attributes",
                hostile.root / "attr.csv", "--out", "rep")
    line = hostile.refused(*args, match="forged.npy")
    assert "forged" in line and str(10**15) not in line


def test_embed_edge_to_node_ten_to_the_fifteen_is_refused(hostile):
    edges = hostile.root / "e.csv"
    edges.write_text(f"0,1\n1,2\n2,{10**15}\n")
    line = hostile.refused("embed", "--out", "emb", "--edges", edges, "--dimensions", "4",
                           match="e.csv")
    assert "0..n-1" in line and str(10**15) not in line


def test_embed_still_accepts_ids_with_gaps(hostile):
    edges = hostile.root / "e.csv"
    edges.write_text("0,1\n1,2\n2,500\n")  # isolated ids below the bound stay allowed
    r = hostile.run("embed", "--out", "emb", "--edges", edges, "--dimensions", "4",
                    "--walks-per-node", "1", "--walk-length", "5")
    assert r.exit_code == 0, r.output
    assert np.load(hostile.root / "emb" / "embeddings.npy").shape == (501, 4)


def test_deeply_nested_model_kwargs_is_refused(hostile, graph_dir):
    # 100k "[" raised RecursionError (exit 1); it must be an option error like any other
    torch.save({}, hostile.root / "w.pt")
    (hostile.root / "m.txt").write_text("node_id\n" + "0\n1\n")
    (hostile.root / "n.txt").write_text("2\n3\n")
    hostile.refused("audit", "model", hostile.root / "w.pt", "--model-class",
                    "torch.nn:Linear", "--model-kwargs", "[" * 100_000,
                    *hostile.graph_opts(graph_dir), "--members", hostile.root / "m.txt",
                    "--non-members", hostile.root / "n.txt", "--out", "rep",
                    match="--model-kwargs")


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deep_report_json_is_refused_by_check(hostile, depth):
    # 100 levels parse (below Python's recursion limit) but are refused by depth;
    # 100k levels would raise RecursionError inside the parser
    path = hostile.root / "report.json"
    path.write_text('{"kind": "graphleaks-audit-report", "x": ' + "[" * depth + "]" * depth
                    + "}")
    line = hostile.refused("check", path, match="report.json")
    assert "nested" in line


def test_oversized_report_json_is_refused_by_check(hostile, monkeypatch):
    from graphleaks.report import report

    monkeypatch.setattr(report, "MAX_REPORT_BYTES", 1024)  # stands in for 256 MB
    path = hostile.report(hostile.root, padding="x" * 2048)
    hostile.refused("check", path, match="report.json")


# ---------------------------------------------------------------- bundle contents


def _retensor(hostile, bundle, edit):
    """Rewrite the bundle's graph.safetensors with ``edit`` applied; fix the checksum and the
    fingerprint, as a forger would, so only the content checks stand in the way."""
    from safetensors.torch import load_file, save_file
    from torch_geometric.data import Data

    from graphleaks.data.graph import fingerprint

    path = bundle / "graph.safetensors"
    tensors = load_file(str(path))
    edit(tensors)
    save_file(tensors, str(path))
    fp = fingerprint(Data(x=tensors["x"], edge_index=tensors["edge_index"],
                          y=tensors.get("y")))

    def fix(m):
        m["sha256"]["graph.safetensors"] = hashlib.sha256(path.read_bytes()).hexdigest()
        m["fingerprint"] = fp

    hostile.edit_manifest(bundle, fix)


def _edge_out_of_range(t):
    t["edge_index"][1, 0] = t["x"].shape[0] + 5


def _float_edges(t):
    t["edge_index"] = t["edge_index"].double() + 0.5


def _label_past_classes(t):
    t["y"][0] = 7  # the model has 3 outputs


def _nan_features(t):
    t["x"][3, 2] = float("nan")


@pytest.mark.parametrize(("edit", "match"), [
    (_edge_out_of_range, "edge_index refers to node ids outside"),
    (_float_edges, "edge_index is not an integer tensor"),
    (_label_past_classes, "classes"),
    (_nan_features, "NaN"),
])
def test_bundle_graph_is_validated_after_its_checksum(hostile, bundle, edit, match):
    # the untouched bundle audits; each corruption keeps a valid checksum and is refused
    _retensor(hostile, bundle, edit)
    line = hostile.refused("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20",
                           "--attack", "confidence_mia", match=match)
    assert "bundle" in line


def test_untouched_bundle_graph_passes_the_same_checks(hostile, bundle):
    _retensor(hostile, bundle, lambda t: None)
    r = hostile.run("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20",
                    "--attack", "confidence_mia")
    assert r.exit_code == 0, r.output


# ---------------------------------------------------------------- what graphleaks writes


@pytest.mark.parametrize("node", ['"user\n5 0.1 0.2 0.3 0.4"', "user 17"])
def test_embed_refuses_ids_word2vec_text_cannot_hold(hostile, node):
    # a line break would forge a row of embeddings.txt; a space would shift a row's values
    edges = hostile.root / "e.csv"
    edges.write_text(f"source,target\nalice,bob\nbob,{node}\n")
    line = hostile.refused("embed", "--out", "emb", "--edges", edges, "--dimensions", "4",
                           match="data row 2")
    assert "user" not in line


def test_scores_csv_cells_never_run_as_formulas(tmp_path):
    import csv
    import io

    from graphleaks.report.scores import CandidateTable, scores_csv

    table = CandidateTable(
        attack="=HYPERLINK(\"http://x\")", task="membership", nodes=np.array([0, 1]),
        scores=np.array([-0.5, 0.25]), labels=np.array([1, 0]), degree=np.array([2, 3]),
        cls=np.array(["@SUM(A1)", "+1"], dtype=object),
        part=np.array(["train", "-test"], dtype=object))
    rows = list(csv.DictReader(io.StringIO(scores_csv([table]))))
    assert rows[0]["attack"] == "'=HYPERLINK(\"http://x\")"
    assert [r["class"] for r in rows] == ["'@SUM(A1)", "'+1"]
    assert rows[1]["part"] == "'-test"
    assert rows[0]["score"] == "-0.5"  # numbers are data: never prefixed


def test_results_csv_cells_never_run_as_formulas():
    from graphleaks.sweep.results_store import to_csv

    text = to_csv([{"config_hash": "abc", "status": "failed", "error": "=cmd|' /C calc'!A0",
                    "train_s": -1.0}], [])
    assert ",'=cmd|" in text and ",-1.0" in text


# ---------------------------------------------------------------- messages


def test_unscored_member_is_named_by_position_not_id(hostile, scores_export):
    members = hostile.root / "members.txt"
    members.write_text("node_id\n" + "0\n1\n" + SECRET_ID + "\n")
    line = hostile.refused(*_audit_scores(scores_export / "scores.npz", members),
                           match="no score row", absent=(SECRET_ID,))
    assert "entry 3" in line


def test_node_id_file_messages_never_quote_ids(hostile, scores_export):
    members = hostile.root / "members.txt"
    members.write_text("node_id\n" + "0\n" + SECRET_ID + "\n" + SECRET_ID + "\n")
    hostile.refused(*_audit_scores(scores_export / "scores.npz", members),
                    match="more than once", absent=(SECRET_ID,))


def test_edge_past_the_features_is_not_quoted(hostile, graph_dir):
    edges = hostile.root / "e.csv"
    edges.write_text(f"0,1\n1,{SECRET_ID}\n")
    hostile.refused("train", "--out", "b", "--edges", edges, "--features",
                    graph_dir / "x.npy", match="e.csv", absent=(SECRET_ID,))


def test_score_labels_out_of_range_are_not_quoted(hostile, scores_export):
    path = hostile.root / "s.csv"
    path.write_text("node_id,label,p0,p1\n0,0,0.5,0.5\n1," + SECRET_ID + ",0.5,0.5\n")
    hostile.refused(*_audit_scores(path, scores_export / "members.txt"), match="s.csv",
                    absent=(SECRET_ID,))


def test_npz_array_names_are_not_quoted(hostile, scores_export):
    path = hostile.root / "s.npz"
    np.savez(path, **{"SECRET_NAME_" + SECRET_ID: np.zeros(3)})
    hostile.refused(*_audit_scores(path, scores_export / "members.txt"), match="s.npz",
                    absent=(SECRET_ID,))


def test_read_json_bounded_unit():
    from graphleaks._limits import json_depth, read_json_bounded
    from graphleaks.errors import DataError

    assert json_depth({"a": [1, {"b": []}]}) == 4 and json_depth(5) == 0
    with pytest.raises(DataError, match="larger than 10 bytes"):
        read_json_bounded("[" + "1," * 10 + "1]", "x", max_bytes=10)
    with pytest.raises(DataError, match="not valid JSON"):
        read_json_bounded("[1,", "x")
    assert read_json_bounded("[[1]]", "x", max_depth=2) == [[1]]
    with pytest.raises(DataError, match="nested deeper than 2"):
        read_json_bounded("[[[1]]]", "x", max_depth=2)

"""Input parsing is exact: BOMs, headers, row counts, degenerate labels, forged .npy files."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.data.files import load_graph_files
from graphleaks.errors import DataError

BOM = "\ufeff"


def _files(tmp, *, bom_edges=False, bom_features=False, header=False):
    """A 4-node path graph whose first edge (0, 3) exists nowhere else in the file."""
    edges = ("source,target\n" if header else "") + "0,3\n0,1\n1,2\n"
    (tmp / "e.csv").write_text((BOM if bom_edges else "") + edges, encoding="utf-8")
    feats = "1,0\n0,1\n1,1\n0,0\n"
    (tmp / "x.csv").write_text((BOM if bom_features else "") + feats, encoding="utf-8")
    (tmp / "y.csv").write_text("0\n1\n0\n1\n")
    return tmp / "e.csv", tmp / "x.csv", tmp / "y.csv"


@pytest.mark.parametrize("header", [False, True])
def test_bom_never_drops_the_first_edge(tmp_path, header):
    e, x, y = _files(tmp_path, bom_edges=True, header=header)
    g = load_graph_files(e, features=x, labels=y)
    pairs = set(map(tuple, g.edge_index.t().tolist()))
    assert (0, 3) in pairs and g.edge_index.size(1) == 6


def test_bom_never_drops_the_first_feature_row(tmp_path):
    e, x, y = _files(tmp_path, bom_features=True)
    g = load_graph_files(e, features=x, labels=y)
    assert g.num_nodes == 4 and g.x[0].tolist() == [1.0, 0.0]


def test_a_mixed_first_row_is_data_not_a_header(tmp_path):
    e, x, y = _files(tmp_path)
    e.write_text("a,3\n0,1\n1,2\n")
    with pytest.raises(DataError, match="row 1"):
        load_graph_files(e, features=x, labels=y)


def test_feature_row_mismatch_names_the_feature_file(tmp_path):
    e, x, y = _files(tmp_path)
    (tmp_path / "y.csv").write_text("0\n1\n0\n1\n0\n")
    with pytest.raises(DataError, match="x.csv") as info:
        load_graph_files(e, features=x, labels=y)
    assert "5" in str(info.value) and "4" in str(info.value)


def test_edges_past_the_feature_rows_name_the_feature_file(tmp_path):
    e, x, y = _files(tmp_path)
    x.write_text("1,0\n0,1\n1,1\n")
    with pytest.raises(DataError, match="x.csv"):
        load_graph_files(e, features=x)


@pytest.mark.parametrize(("labels", "match"), [
    (lambda y: np.zeros_like(y), "class"),
])
def test_single_class_graph_is_refused(hostile, labels, match):
    opts = hostile.write_graph(hostile.root / "g", labels=labels)
    hostile.refused("train", "--out", "b", "--epochs", "2", *opts, match=match)
    hostile.refused("audit", "--out", "r", *opts, match=match)


def test_members_all_one_class_is_refused(hostile):
    # two classes in the graph, but only the members' labels matter: all 0 except one node
    def labels(y):
        out = np.zeros_like(y)
        out[-1] = 1
        return out

    from graphleaks.data.splits import MembershipSplit, SplitConfig
    from graphleaks.seeding import derive_seed

    split = MembershipSplit.draw(60, SplitConfig(), seed=derive_seed(0, "split"))
    assert 59 not in split.train.tolist()  # the one node of class 1 is no member
    opts = hostile.write_graph(hostile.root / "g", labels=labels)
    hostile.refused("train", "--out", "b", "--epochs", "2", *opts, match="class")


def test_no_members_is_refused(hostile, graph_dir):
    hostile.refused("train", "--out", "b", "--train-frac", "0.001",
                    *hostile.graph_opts(graph_dir), match="split")


def _npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (118 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()


@pytest.mark.parametrize(("content", "match"), [
    (_npy_header((3_000_000_000, 8)) + b"\x00" * 64, "forged"),
    (_npy_header((4, 2), "|O") + b"\x00" * 64, "pickled"),
    (b"\x93NUMPY\x01\x00\xff\xff{'descr': SECRET", "not a valid"),
    (b"not an npy file", "not a valid"),
])
def test_forged_npy_features(hostile, graph_dir, content, match):
    (hostile.root / "x.npy").write_bytes(content)
    hostile.refused("train", "--out", "b", "--edges", graph_dir / "edges.csv", "--features",
                    "x.npy", match=match, absent=("SECRET",))

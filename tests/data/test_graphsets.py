"""Graph sets: the record and its check, motif graphs, the TU reader, the reloadable record."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

from graphleaks.data.graphsets import GraphSet, GraphSetRef, motif_graphs, read_tu_folder
from graphleaks.data.graphsets.motifs import MOTIFS
from graphleaks.errors import DataError, InvalidConfigError

SECRET = "GRAPHSETSECRET9"


def _g(n: int, edges: list[tuple[int, int]], label: int) -> Data:
    ei = torch.tensor(edges, dtype=torch.long).t() if edges else torch.empty(2, 0, dtype=torch.long)
    return Data(x=torch.ones(n, 2), edge_index=ei, y=torch.tensor([label]), num_nodes=n)


# ---------------------------------------------------------------- record


def test_a_checked_set_has_canonical_shapes_and_counts() -> None:
    gs = GraphSet.from_graphs([_g(3, [(0, 1), (1, 0)], 0), _g(1, [], 1)], ["a", "b"])
    assert len(gs) == 2 and gs.num_classes == 2 and gs.num_features == 2
    assert gs.y.tolist() == [0, 1] and gs.class_counts() == [1, 1]
    assert gs[1].edge_index.shape == (2, 0)  # a single atom: no edges, still a graph
    sub = gs.subset([1])
    assert len(sub) == 1 and sub.y.tolist() == [1]


@pytest.mark.parametrize(("graphs", "fragment"), [
    ([_g(0, [], 0), _g(2, [], 1)], "graph 0 is empty"),
    ([_g(2, [(0, 5)], 0), _g(2, [], 1)], "graph 0: an edge refers to a node outside"),
    ([_g(2, [], 0), _g(2, [], 7)], "graph 1: the label must be one class id in 0..1"),
    ([], "holds no graphs"),
])
def test_bad_graphs_are_refused_by_index(graphs: list[Data], fragment: str) -> None:
    with pytest.raises(DataError, match=fragment):
        GraphSet.from_graphs(graphs, ["a", "b"])


def test_feature_widths_must_agree() -> None:
    other = Data(x=torch.ones(2, 3), edge_index=torch.empty(2, 0, dtype=torch.long),
                 y=torch.tensor([1]), num_nodes=2)
    with pytest.raises(DataError, match="graph 1 has 3 feature columns"):
        GraphSet.from_graphs([_g(2, [], 0), other], ["a", "b"])


def test_the_fingerprint_follows_the_content() -> None:
    a = motif_graphs(10, seed=0)
    assert a.fingerprint() == motif_graphs(10, seed=0).fingerprint()
    assert a.fingerprint() != motif_graphs(10, seed=1).fingerprint()
    assert a.fingerprint() != a.subset(list(range(9))).fingerprint()


# ---------------------------------------------------------------- motif graphs


def test_motif_graphs_are_seeded_balanced_and_hold_their_motif() -> None:
    gs = motif_graphs(40, num_classes=4, seed=3)
    again = motif_graphs(40, num_classes=4, seed=3)
    assert all(torch.equal(a.edge_index, b.edge_index) for a, b in zip(gs, again, strict=True))
    assert gs.class_counts() == [10, 10, 10, 10]
    assert gs.class_names == tuple(m[0] for m in MOTIFS)
    for g in gs:
        n, e = int(g.num_nodes), g.edge_index.shape[1] // 2
        motif = MOTIFS[int(g.y)][1]
        # a tree on the base nodes (n_base - 1 edges), the motif, one joining edge
        n_motif = 1 + max(max(p) for p in motif)
        assert e == (n - n_motif - 1) + len(motif) + 1
        # the only cycles are the motif's: cyclomatic number = motif's edges - nodes + 1
        assert e - n + 1 == len(motif) - n_motif + 1


def test_motif_parameters_are_checked() -> None:
    with pytest.raises(InvalidConfigError, match="num_classes"):
        motif_graphs(10, num_classes=9, seed=0)
    with pytest.raises(InvalidConfigError, match="base_nodes"):
        motif_graphs(10, base_nodes=(5, 2), seed=0)


# ---------------------------------------------------------------- TU folders


def _write_tu(root: Path, name: str = "TOY", **override: str) -> Path:
    folder = root / name
    folder.mkdir()
    files = {
        # graph 1: triangle of nodes 1-3; graph 2: edge 4-5; graph 3: single node 6
        "A": "1, 2\n2, 1\n2, 3\n3, 2\n1, 3\n3, 1\n4, 5\n5, 4\n",
        "graph_indicator": "1\n1\n1\n2\n2\n3\n",
        "graph_labels": "-1\n1\n-1\n",
        "node_labels": "0\n2\n0\n1\n1\n2\n",
    }
    files.update(override)
    for part, text in files.items():
        if text:
            (folder / f"{name}_{part}.txt").write_text(text)
    return folder


def test_a_tu_folder_is_read_into_graphs(tmp_path: Path) -> None:
    gs = read_tu_folder(_write_tu(tmp_path))
    assert len(gs) == 3 and gs.class_names == ("-1", "1") and gs.y.tolist() == [0, 1, 0]
    assert [int(g.num_nodes) for g in gs] == [3, 2, 1]
    assert gs[0].edge_index.shape[1] == 6 and gs[2].edge_index.shape[1] == 0
    assert gs.num_features == 3  # one-hot node labels 0, 1, 2
    assert gs[1].x.argmax(1).tolist() == [1, 1]


def test_tu_attributes_and_one_direction_edges(tmp_path: Path) -> None:
    folder = _write_tu(tmp_path, A="1, 2\n2, 3\n4, 5\n", node_labels="",
                       node_attributes="0.5, 1\n1, 1\n2, 1\n3, 1\n4, 1\n5, 1\n")
    gs = read_tu_folder(folder)
    assert gs.num_features == 2 and gs[0].x[0].tolist() == [0.5, 1.0]
    assert gs[0].edge_index.shape[1] == 4  # made undirected


@pytest.mark.parametrize(("override", "fragment"), [
    ({"A": "1, 2\n2, 1\n7, 6\n"}, "_A.txt line 3 names a node outside 1..6"),
    ({"graph_indicator": "1\n1\n1\n3\n3\n3\n"}, "graph_indicator.txt line 4 breaks the order"),
    ({"graph_indicator": "1\n1\n1\n2\n2\n4\n"}, "graph ids .* must run from 1"),
    ({"graph_indicator": "1\n2\n1\n2\n2\n3\n"}, "graph_indicator.txt line 3 breaks the order"),
    ({"A": "1, 4\n"}, "_A.txt line 1 joins nodes of two different graphs"),
    ({"graph_labels": "1\n1\n"}, "must run from 1 to the number of lines"),
    ({"graph_labels": "1\n1\n1\n"}, "holds a single class"),
    ({"node_labels": "0\n1\n"}, "node_labels.txt has 2 lines for 6 nodes"),
    ({"A": f"1, 2\n{SECRET}, 3\n"}, "_A.txt: line 2 holds a value that is not an integer"),
    ({"graph_labels": f"1\n{SECRET}\n-1\n"}, "line 2 holds a value that is not an integer"),
    ({"A": "1, 2, 3\n"}, "line 1 has 3 value"),
    ({"graph_labels": ""}, "graph_labels.txt is missing"),
])
def test_inconsistent_tu_folders_are_refused_without_quoting(
        tmp_path: Path, override: dict[str, str], fragment: str) -> None:
    with pytest.raises(DataError, match=fragment) as exc:
        read_tu_folder(_write_tu(tmp_path, **override))
    assert SECRET not in str(exc.value) and "\n" not in str(exc.value)


def test_binary_tu_files_are_refused(tmp_path: Path) -> None:
    folder = _write_tu(tmp_path)
    (folder / "TOY_A.txt").write_bytes(b"\xff\xfe" + SECRET.encode() + b"\x00\x81")
    with pytest.raises(DataError, match="not a UTF-8 text file") as exc:
        read_tu_folder(folder)
    assert SECRET not in str(exc.value)


def test_too_many_node_label_values_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    import graphleaks.data.graphsets.tu as tu

    monkeypatch.setattr(tu, "MAX_CATEGORIES", 2)
    with pytest.raises(DataError, match="3 distinct values, over the limit of 2"):
        read_tu_folder(_write_tu(tmp_path))


def test_oversized_tu_files_are_refused_before_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphleaks.data.graphsets.tu as tu

    monkeypatch.setattr(tu, "MAX_GRAPH_SET_FILE_BYTES", 8)
    with pytest.raises(DataError, match="over the 8-byte limit"):
        read_tu_folder(_write_tu(tmp_path))


# ---------------------------------------------------------------- the record of a set


def test_a_motif_record_round_trips_and_reloads_the_same_set() -> None:
    ref = GraphSetRef.motif(num_graphs=12, num_classes=3, seed=5)
    gs = ref.load()
    pinned = ref.pinned(gs)
    back = GraphSetRef.from_dict(pinned.to_dict())
    assert back == pinned and back.load().fingerprint() == gs.fingerprint()


def test_a_tu_record_loads_from_the_data_root(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "TUDataset").mkdir()
    folder = _write_tu(tmp_path / "TUDataset")
    ref = GraphSetRef.tu("TOY")
    assert ref.load(data_root=tmp_path).fingerprint() == read_tu_folder(folder).fingerprint()
    monkeypatch.delenv("GRAPHLEAKS_DATA", raising=False)
    with pytest.raises(DataError, match="needs a data root"):
        ref.load()


def test_a_mismatched_fingerprint_is_refused() -> None:
    ref = GraphSetRef.from_dict({"kind": "motif", "params": {
        "num_graphs": 6, "num_classes": 2, "base_lo": 2, "base_hi": 4, "seed": 0},
        "fingerprint": "0" * 16})
    with pytest.raises(DataError, match="not the set this record was made from"):
        ref.load()


@pytest.mark.parametrize("raw", [
    {"kind": "motif", "params": {"num_graphs": 10**9, "num_classes": 2, "base_lo": 1,
                                 "base_hi": 2, "seed": 0}},
    {"kind": "motif", "params": {"num_graphs": 5, "seed": 0}},
    {"kind": "tu", "name": "../etc"},
    {"kind": "file", "name": "/etc/passwd"},
    {"kind": "solubility", "name": "all"},
    {"kind": "elsewhere"},
    {"kind": "tu", "name": "X", "extra": 1},
    {"kind": "file", "name": "a.smi", "params": {"on_invalid": "maybe"}},
    "motif",
])
def test_forged_records_are_refused(raw: object) -> None:
    with pytest.raises(DataError):
        GraphSetRef.from_dict(raw)

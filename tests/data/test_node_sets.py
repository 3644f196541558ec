import numpy as np
import pytest

from graphleaks.data import node_sets
from graphleaks.data.node_sets import check_membership, read_node_ids
from graphleaks.errors import DataError


def test_text_one_per_line_and_csv_first_column(tmp_path):
    p = tmp_path / "m.txt"
    p.write_text("# members\n3\n0\n\n7\n")
    assert read_node_ids(p).tolist() == [3, 0, 7]
    q = tmp_path / "m.csv"
    q.write_text("5,1,0.3\n2,0,0.7\n")
    assert read_node_ids(q, num_nodes=6).tolist() == [5, 2]


@pytest.mark.parametrize("content,ids", [
    ("node_id\n3\n0\n", [3, 0]),  # a named column
    (",0\n0,3\n1,0\n", [3, 0]),  # pandas Series.to_csv(): index column, then the ids
    (",node_id\n0,5\n1,2\n", [5, 2]),  # pandas DataFrame.to_csv() with its index
    ("node_id,label\n4,1\n", [4]),  # further columns after the id are ignored
    ("\ufeffnode_id\n1\n", [1]),  # a byte-order mark never hides the header
])
def test_one_header_row_is_accepted(tmp_path, content, ids):
    p = tmp_path / "m.csv"
    p.write_text(content, encoding="utf-8")
    assert read_node_ids(p, num_nodes=6).tolist() == ids


def test_pandas_index_header_over_several_columns_is_refused(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text(",node_id,label\n0,5,1\n")
    with pytest.raises(DataError, match="pandas index header"):
        read_node_ids(p)


def test_string_ids_through_the_graph_id_table(tmp_path):
    index = {"alice": 0, "bob": 1, "carol": 2}
    p = tmp_path / "m.txt"
    p.write_text("node_id\ncarol\nalice\n")
    assert read_node_ids(p, 3, index=index).tolist() == [2, 0]
    p.write_text("carol\nmallory\n")
    with pytest.raises(DataError, match="line 2 is not an id of the graph") as exc:
        read_node_ids(p, 3, index=index)
    assert "mallory" not in str(exc.value)
    q = tmp_path / "m.npy"
    np.save(q, np.array([0, 1]))
    with pytest.raises(DataError, match="strings; give a text file"):
        read_node_ids(q, 3, index=index)


def test_npy_ints_and_column_vector(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, np.array([4, 1, 2], dtype=np.int32))
    out = read_node_ids(p, 5)
    assert out.dtype == np.int64 and out.tolist() == [4, 1, 2]
    np.save(p, np.array([[4], [1]], dtype=np.int64))
    assert read_node_ids(p).tolist() == [4, 1]


@pytest.mark.parametrize("content,match", [
    ("1\n2.5\n", "not an integer"),
    ("node_id\nid\n1\n", "line 2 is not an integer"),  # one header row, never two
    ("1\nnode_id\n2\n", "line 2 is not an integer"),  # a header is the first line only
    ("1\n-2\n", "negative"),
    ("1\n2\n1\n", "more than once"),
    ("1\n10\n", "outside 0..9"),
    ("# only a comment\n", "no node ids"),
])
def test_bad_text_files(tmp_path, content, match):
    p = tmp_path / "ids.txt"
    p.write_text(content)
    with pytest.raises(DataError, match=match) as exc:
        read_node_ids(p, num_nodes=10)
    msg = str(exc.value)
    assert "\n" not in msg and str(p) in msg


def test_empty_missing_and_oversized(tmp_path, monkeypatch):
    p = tmp_path / "e.txt"
    p.write_text("")
    with pytest.raises(DataError, match="empty"):
        read_node_ids(p)
    with pytest.raises(DataError, match="does not exist"):
        read_node_ids(tmp_path / "nope.txt")
    p.write_text("1\n2\n3\n")
    monkeypatch.setattr(node_sets, "MAX_NODE_ID_FILE_BYTES", 4)
    with pytest.raises(DataError, match="limit"):
        read_node_ids(p)


@pytest.mark.parametrize("arr,match", [
    (np.array([1.0, 2.5]), "integers"),
    (np.array([True, False]), "mask"),
    (np.zeros((2, 2), dtype=np.int64), "1-D"),
])
def test_bad_npy(tmp_path, arr, match):
    p = tmp_path / "ids.npy"
    np.save(p, arr)
    with pytest.raises(DataError, match=match):
        read_node_ids(p)


def test_pickled_npy_refused(tmp_path):
    p = tmp_path / "ids.npy"
    np.save(p, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="pickled"):
        read_node_ids(p)


def test_binary_text_refused_without_quoting(tmp_path):
    p = tmp_path / "ids.txt"
    p.write_bytes(b"\xff\xfe\x00secret")
    with pytest.raises(DataError, match="cannot read") as exc:
        read_node_ids(p)
    assert "secret" not in str(exc.value)


def test_check_membership_accepts_and_refuses():
    check_membership(np.array([0, 1]), np.array([2, 3]), 4)
    with pytest.raises(DataError, match="overlap"):
        check_membership(np.array([0, 1]), np.array([1, 3]), 4)
    with pytest.raises(DataError, match="empty"):
        check_membership(np.array([], dtype=np.int64), np.array([1]), 4)
    with pytest.raises(DataError, match="0..3"):
        check_membership(np.array([0, 4]), np.array([1]), 4)
    with pytest.raises(DataError, match="duplicates"):
        check_membership(np.array([0, 0]), np.array([1]), 4)
    with pytest.raises(DataError, match="integer"):
        check_membership(np.array([0.0]), np.array([1]), 4)

"""The ``0`` header pandas writes above an unnamed column, told from node id 0 or refused."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.data.node_sets import read_node_ids
from graphleaks.errors import DataError


def _pd():
    # pandas is no dependency of graphleaks: the files it writes are checked where it is
    # installed, and the same lines, written by hand, are checked everywhere below
    return pytest.importorskip("pandas")


def _pandas(tmp_path, ids, **kwargs):
    p = tmp_path / "ids.csv"
    _pd().Series(ids).to_csv(p, index=False, **kwargs)
    return p


def test_pandas_header_0_is_read_as_a_header_when_node_0_follows(tmp_path):
    p = _pandas(tmp_path, [4, 0, 9])
    assert p.read_text().splitlines()[0] == "0"  # what pandas writes: the column name 0
    assert read_node_ids(p, 10).tolist() == [4, 0, 9]


def test_pandas_header_0_without_node_0_is_refused_not_guessed(tmp_path):
    p = _pandas(tmp_path, [4, 2, 9])
    with pytest.raises(DataError, match=r"node-id file .*line 1 is 0.*header such as node_id"):
        read_node_ids(p, 10)


def test_plain_list_starting_with_node_0_is_refused_not_dropped(tmp_path):
    p = tmp_path / "ids.txt"
    p.write_text("0\n3\n5\n")  # node 0 first: must never be lost as a header
    with pytest.raises(DataError, match="line 1 is 0") as err:
        read_node_ids(p, 10)
    assert str(err.value).count("\n") == 0


@pytest.mark.parametrize("text,ids", [
    ("node_id\n0\n3\n5\n", [0, 3, 5]),       # the fix the message names: node 0 kept
    ("0\n", [0]),                             # one line: a header over nothing is no file
    ("3\n0\n5\n", [3, 0, 5]),                 # node 0 later: no header question
    ("0\n4\n0\n9\n", [4, 0, 9]),              # what Series([4, 0, 9]).to_csv writes
    ("0,7\n3,1\n", [0, 3]),                   # two columns: not pandas' one-column header
    ("# members\n0\n0\n", [0]),               # the later 0 shows the first is the header
])
def test_files_that_decide_for_themselves(tmp_path, text, ids):
    p = tmp_path / "ids.txt"
    p.write_text(text)
    assert read_node_ids(p, 10).tolist() == ids


def test_named_pandas_header_still_read(tmp_path):
    p = _pandas(tmp_path, [4, 2, 9], header=["node_id"])
    assert read_node_ids(p, 10).tolist() == [4, 2, 9]
    q = tmp_path / "idx.csv"
    _pd().Series([4, 2, 9]).to_csv(q)  # with pandas' index column: ",0" header
    assert read_node_ids(q, 10).tolist() == [4, 2, 9]


def test_npy_ids_starting_with_0_unaffected(tmp_path):
    np.save(tmp_path / "ids.npy", np.array([0, 3, 5]))
    assert read_node_ids(tmp_path / "ids.npy", 10).tolist() == [0, 3, 5]


def test_string_id_graph_with_a_node_named_0(tmp_path):
    index = {"0": 0, "a": 1, "b": 2}
    p = tmp_path / "ids.txt"
    p.write_text("0\na\nb\n")
    with pytest.raises(DataError, match="line 1 is 0"):
        read_node_ids(p, 3, index=index)
    p.write_text("0\na\n0\n")
    assert read_node_ids(p, 3, index=index).tolist() == [1, 0]
    # a graph without a node "0": the 0 line can only be a header, as before
    p.write_text("0\na\nb\n")
    assert read_node_ids(p, 3, index={"a": 1, "b": 2, "c": 0}).tolist() == [1, 2]

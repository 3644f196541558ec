"""An edge list's first row of words: header or edge, never silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphleaks.data.files import load_edge_list, node_index
from graphleaks.errors import DataError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "e.csv"
    path.write_text(text)
    return path


def test_a_string_id_edge_list_without_header_keeps_its_first_edge(tmp_path):
    path = _write(tmp_path, "alice,bob\nbob,carol\ncarol,alice\n")
    assert list(node_index(path)) == ["alice", "bob", "carol"]
    assert load_edge_list(path).tolist() == [[0, 1], [1, 2], [2, 0]]


@pytest.mark.parametrize("header", ["source,target", "user,friend", "Src,Dst"])
def test_a_known_header_over_string_ids_is_a_header(tmp_path, header):
    path = _write(tmp_path, f"{header}\nalice,bob\nbob,carol\n")
    assert list(node_index(path)) == ["alice", "bob", "carol"]
    assert len(load_edge_list(path)) == 2


def test_any_words_over_integer_ids_are_a_header(tmp_path):
    path = _write(tmp_path, "person_a,person_b\n0,1\n1,2\n")
    assert load_edge_list(path).tolist() == [[0, 1], [1, 2]]


def test_an_ambiguous_first_row_is_refused_not_dropped(tmp_path):
    # a lone edge whose ids appear nowhere else looks exactly like an unknown header
    path = _write(tmp_path, "person_a,person_b\nalice,bob\nbob,carol\n")
    with pytest.raises(DataError, match="header row source,target") as info:
        node_index(path)
    assert "person_a" not in str(info.value)

"""Progress bars: off by default, one shared display for nested loops, stderr only."""

from __future__ import annotations

from graphleaks._progress import progress, progress_display


def test_progress_is_a_plain_iteration_outside_a_display(capsys):
    assert list(progress(range(3), desc="x")) == [0, 1, 2]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_nested_loops_share_one_display_and_stdout_stays_clean(capsys):
    # rich allows one live display at a time; nested bars must not open a second one
    with progress_display(True):
        got = [(i, j) for i in progress(range(2), desc="outer")
               for j in progress(range(3), desc="inner")]
    assert len(got) == 6
    assert capsys.readouterr().out == ""


def test_disabled_display_shows_nothing(capsys):
    with progress_display(False):
        assert list(progress([1, 2], desc="x")) == [1, 2]
    assert capsys.readouterr().err == ""

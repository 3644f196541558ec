"""Precision/recall/F1 at k."""

from __future__ import annotations

import pytest

from graphleaks.errors import DataError
from graphleaks.metrics.ranking import (
    density_ks,
    f1_at_k,
    precision_at_k,
    recall_at_k,
)


def test_at_k_values() -> None:
    s = [0.9, 0.8, 0.7, 0.1]
    y = [1, 0, 1, 1]
    assert precision_at_k(s, y, 2) == 0.5
    assert recall_at_k(s, y, 2) == pytest.approx(1 / 3)
    assert f1_at_k(s, y, 2) == pytest.approx(0.4)
    assert precision_at_k(s, y, 10) == pytest.approx(0.3)  # k capped by n, divided by k


def test_bad_inputs() -> None:
    with pytest.raises(DataError):
        precision_at_k([1.0], [1, 0], 1)
    with pytest.raises(DataError):
        precision_at_k([1.0], [1], 0)


def test_density_ks_rounds_to_one_digit() -> None:
    ks = density_ks(130, 124750)
    assert ks[1.0] == 125 and ks[0.25] == 32 and ks[4.0] == 499

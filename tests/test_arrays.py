"""graphleaks._arrays: unique_sorted equals np.unique on integer keys."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks._arrays import unique_sorted


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_unique_sorted_equals_np_unique(dtype: type) -> None:
    rng = np.random.default_rng(0)
    for n, hi in [(0, 5), (1, 5), (7, 3), (1000, 50), (5000, 2**31 - 1)]:
        hi = min(hi, np.iinfo(dtype).max)
        a = rng.integers(0, hi, n).astype(dtype)
        got = unique_sorted(a)
        np.testing.assert_array_equal(got, np.unique(a))
        assert got.dtype == a.dtype


def test_unique_sorted_leaves_its_input_alone() -> None:
    a = np.array([3, 1, 3, 2])
    unique_sorted(a)
    assert a.tolist() == [3, 1, 3, 2]

"""Array helpers shared across the package.

Example:
    >>> import numpy as np
    >>> unique_sorted(np.array([5, 1, 5, 3, 1])).tolist()
    [1, 3, 5]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def unique_sorted(values: npt.ArrayLike) -> np.ndarray:
    """The sorted distinct values of a 1-D integer array: ``np.unique(values)``, faster.

    Plain ``np.unique`` on integers takes a hash-table path in numpy 2.4 that is 20–50× slower
    than a sort on millions of values (10.6 s against 0.4 s for 10M int64 edge keys), and the
    edge keys of a 1M-node graph are sorted several times per audit. Floats and NaN are not
    this helper's business: it is for integer keys only.
    """
    a = np.sort(np.asarray(values).ravel())
    if len(a) == 0:
        return a
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]

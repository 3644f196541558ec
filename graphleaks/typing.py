"""Type aliases shared across graphleaks."""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt
import torch

NodeIds = npt.NDArray[np.int64]
"""A 1-D array of node indices."""

Scores = npt.NDArray[np.float64]
"""A 1-D array of attack scores; higher means more likely positive."""

EdgeIndex = torch.Tensor
"""A ``[2, E]`` long tensor of directed edges."""

ArrayLike = Union[npt.NDArray[np.generic], torch.Tensor, list[float]]  # noqa: UP007

"""Noise primitives shared by the defenses: Gaussian, Laplace and k-ary randomized response.

Every sampler draws from an explicitly passed generator (``torch.Generator`` or
``numpy.random.Generator``) and never touches global RNG state. Continuous noise is drawn in
float64 and cast to the requested dtype.

These samplers are research-grade: like every floating-point Laplace/Gaussian sampler they
are exposed to Mironov's floating-point attack (CCS 2012; see
https://github.com/IBM/differential-privacy-library/issues/19) and are not hardened against
timing side channels. They are meant for auditing, not for production releases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import torch

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy.events import _check_int, _check_real, _fail

__all__ = [
    "gaussian_noise",
    "laplace_noise",
    "randomized_response",
    "rr_keep_probability",
    "rr_matrix",
]

Shape = int | Sequence[int] | torch.Size
_Values = TypeVar("_Values", npt.NDArray[np.integer], torch.Tensor)


def _shape(owner: str, shape: Shape) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for dim in dims:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 0:
            raise _fail(owner, "shape", "a sequence of non-negative integers", shape)
    return dims


def _check_torch_generator(owner: str, generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise _fail(owner, "generator", "a torch.Generator (global RNG is never used)", generator)
    return generator


def gaussian_noise(
    shape: Shape,
    sigma: float,
    generator: torch.Generator,
    *,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Draw i.i.d. N(0, σ²) noise.

    Args:
        shape: Output shape.
        sigma: Standard deviation (≥ 0; 0 gives zeros).
        generator: The torch generator to draw from; the tensor lives on its device.
        dtype: Output dtype (sampling is done in float64).

    Returns:
        A tensor of the given shape.

    Raises:
        InvalidConfigError: If an argument is invalid.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> gaussian_noise((2, 3), 1.5, g).shape
        torch.Size([2, 3])
    """
    owner = "gaussian_noise"
    dims = _shape(owner, shape)
    std = _check_real(owner, "sigma", sigma, low=0.0, low_open=False)
    gen = _check_torch_generator(owner, generator)
    noise = torch.randn(dims, generator=gen, dtype=torch.float64, device=gen.device)
    return (noise * std).to(dtype)


def laplace_noise(
    shape: Shape,
    scale: float,
    generator: torch.Generator,
    *,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Draw i.i.d. Laplace(0, b) noise by inverse-CDF sampling.

    With U ~ Uniform[0, 1) (``torch.rand`` on ``generator``, float64), the output is the
    inverse CDF F⁻¹(U): ``b·log(2U)`` for U < ½ and ``−b·log(2 − 2U)`` otherwise. ``U = 0``
    (probability 2⁻⁵³) is moved to the smallest positive float64 so the output stays finite.

    Args:
        shape: Output shape.
        scale: The Laplace scale b (≥ 0; 0 gives zeros). Std is b·√2.
        generator: The torch generator to draw from; the tensor lives on its device.
        dtype: Output dtype (sampling is done in float64).

    Returns:
        A tensor of the given shape.

    Raises:
        InvalidConfigError: If an argument is invalid.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> laplace_noise(4, 2.0, g).shape
        torch.Size([4])
    """
    owner = "laplace_noise"
    dims = _shape(owner, shape)
    b = _check_real(owner, "scale", scale, low=0.0, low_open=False)
    gen = _check_torch_generator(owner, generator)
    u = torch.rand(dims, generator=gen, dtype=torch.float64, device=gen.device)
    u = u.clamp_min(torch.finfo(torch.float64).tiny)
    lower = u < 0.5
    noise = b * torch.where(lower, torch.log(2.0 * u), -torch.log(2.0 - 2.0 * u))
    return noise.to(dtype)


def rr_keep_probability(k: int, epsilon: float) -> float:
    """Probability that k-ary randomized response keeps the true value: e^ε/(e^ε + k − 1).

    Args:
        k: Number of categories (≥ 2).
        epsilon: ε (> 0; ``inf`` keeps every value).

    Returns:
        The keep probability, computed as 1/(1 + (k−1)e^{−ε}) for stability at large ε.

    Raises:
        InvalidConfigError: If an argument is invalid.

    Example:
        >>> round(rr_keep_probability(2, math.log(3.0)), 12)  # EdgeRand: e^ε/(1 + e^ε)
        0.75
    """
    owner = "rr_keep_probability"
    kk = _check_int(owner, "k", k, low=2)
    eps = _check_real(owner, "epsilon", epsilon, low=0.0, allow_inf=True)
    return 1.0 / (1.0 + (kk - 1) * math.exp(-eps))


def rr_matrix(k: int, epsilon: float) -> npt.NDArray[np.float64]:
    """The exact transition matrix of k-ary randomized response.

    ``M[i, j] = P(output j | input i)``: e^ε/(e^ε+k−1) on the diagonal, 1/(e^ε+k−1)
    elsewhere. Each row sums to 1, and the largest ratio between two entries of a column is
    e^ε, so the mechanism is ε-LDP (``defenses.md`` §1, k-RR).

    Args:
        k: Number of categories (≥ 2).
        epsilon: ε (> 0; ``inf`` gives the identity).

    Returns:
        A ``(k, k)`` float64 array.

    Raises:
        InvalidConfigError: If an argument is invalid.

    Example:
        >>> rr_matrix(2, math.log(3.0)).round(12).tolist()
        [[0.75, 0.25], [0.25, 0.75]]
    """
    owner = "rr_matrix"
    kk = _check_int(owner, "k", k, low=2)
    eps = _check_real(owner, "epsilon", epsilon, low=0.0, allow_inf=True)
    keep = 1.0 / (1.0 + (kk - 1) * math.exp(-eps))
    other = math.exp(-eps) * keep  # = 1/(e^ε + k − 1)
    matrix = np.full((kk, kk), other, dtype=np.float64)
    np.fill_diagonal(matrix, keep)
    return matrix


def randomized_response(
    values: _Values,
    k: int,
    epsilon: float,
    generator: torch.Generator | np.random.Generator,
) -> _Values:
    """k-ary randomized response on every entry of ``values`` (ε-LDP per entry).

    Each value is kept with probability e^ε/(e^ε+k−1); otherwise it is replaced by one of
    the other k−1 categories, uniformly. ``k = 2`` is binary RR on edges (EdgeRand's net
    flip probability 1/(e^ε+1)).

    Args:
        values: Integer categories in ``{0, …, k−1}``; a numpy array or a torch tensor.
        k: Number of categories (≥ 2).
        epsilon: ε (> 0; ``inf`` returns a copy).
        generator: ``numpy.random.Generator`` for numpy input, ``torch.Generator`` for
            tensor input (the tensor's device must match the generator's).

    Returns:
        Perturbed values, same type, dtype, shape and device as ``values``.

    Raises:
        InvalidConfigError: If ``values`` are not integers in range, the generator type
            does not match the input type, or another argument is invalid.

    Example:
        >>> labels = np.array([0, 1, 2, 0])
        >>> out = randomized_response(labels, 3, 1.0, np.random.default_rng(0))
        >>> out.shape, out.dtype == labels.dtype
        ((4,), True)
    """
    owner = "randomized_response"
    kk = _check_int(owner, "k", k, low=2)
    eps = _check_real(owner, "epsilon", epsilon, low=0.0, allow_inf=True)
    keep = rr_keep_probability(kk, eps)
    if isinstance(values, torch.Tensor):
        gen = _check_torch_generator(owner, generator)
        if values.dtype.is_floating_point or values.dtype.is_complex or values.dtype == torch.bool:
            raise _fail(owner, "values", "an integer tensor", values.dtype)
        if values.device != gen.device:
            raise _fail(owner, "generator", f"a torch.Generator on {values.device}", gen.device)
        if values.numel() and (int(values.min()) < 0 or int(values.max()) >= kk):
            raise _fail(owner, "values", f"in {{0, ..., {kk - 1}}}", _range_of(values))
        if math.isinf(eps):
            return values.clone()
        flat = values.reshape(-1).to(torch.int64)
        u = torch.rand(flat.shape, generator=gen, dtype=torch.float64, device=gen.device)
        shift = torch.randint(1, kk, flat.shape, generator=gen, device=gen.device)
        out = torch.where(u < keep, flat, (flat + shift) % kk)
        return out.reshape(values.shape).to(values.dtype)
    if isinstance(values, np.ndarray):
        if not isinstance(generator, np.random.Generator):
            raise _fail(owner, "generator", "a numpy.random.Generator for numpy input", generator)
        if not np.issubdtype(values.dtype, np.integer):
            raise _fail(owner, "values", "an integer array", values.dtype)
        if values.size and (int(values.min()) < 0 or int(values.max()) >= kk):
            raise _fail(owner, "values", f"in {{0, ..., {kk - 1}}}", _range_of(values))
        if math.isinf(eps):
            return values.copy()
        flat64 = values.reshape(-1).astype(np.int64)
        u_np = generator.random(flat64.shape)
        shift_np = generator.integers(1, kk, size=flat64.shape)
        out_np = np.where(u_np < keep, flat64, (flat64 + shift_np) % kk)
        return out_np.reshape(values.shape).astype(values.dtype)  # type: ignore[return-value]
    raise InvalidConfigError(
        "The values parameter of randomized_response must be a numpy array or a torch "
        f"tensor. Got {type(values).__name__} instead."
    )


def _range_of(values: npt.NDArray[np.integer] | torch.Tensor) -> str:
    return f"values from {int(values.min())} to {int(values.max())}"

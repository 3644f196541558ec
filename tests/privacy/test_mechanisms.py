"""Tests for graphleaks.privacy.mechanisms: noise moments, RR matrix and RR frequencies."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy import (
    gaussian_noise,
    laplace_noise,
    randomized_response,
    rr_keep_probability,
    rr_matrix,
)

N = 200_000


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("sigma", [0.3, 2.5])
def test_gaussian_noise_moments(sigma: float) -> None:
    x = gaussian_noise(N, sigma, _gen(1), dtype=torch.float64)
    # SE of the sample std of a normal sample: σ/√(2n); of the mean: σ/√n.
    assert abs(x.std().item() - sigma) <= 5 * sigma / math.sqrt(2 * N)
    assert abs(x.mean().item()) <= 5 * sigma / math.sqrt(N)


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_laplace_noise_moments(scale: float) -> None:
    x = laplace_noise(N, scale, _gen(2), dtype=torch.float64)
    assert torch.isfinite(x).all()
    std = math.sqrt(2.0) * scale
    # SE of the sample std: std·√((κ−1)/(4n)) with kurtosis κ = 6 for the Laplace law.
    assert abs(x.std().item() - std) <= 5 * std * math.sqrt(5.0 / (4 * N))
    # E|X| = b with Var|X| = b².
    assert abs(x.abs().mean().item() - scale) <= 5 * scale / math.sqrt(N)
    assert abs(x.mean().item()) <= 5 * std / math.sqrt(N)
    # Median 0 and symmetric tails: P(X > b) = e^{-1}/2.
    tail = (x > scale).double().mean().item()
    p = math.exp(-1.0) / 2.0
    assert abs(tail - p) <= 5 * math.sqrt(p * (1 - p) / N)


def test_noise_is_reproducible_and_leaves_global_rng_alone() -> None:
    state = torch.random.get_rng_state()
    a = gaussian_noise((3, 4), 1.0, _gen(7))
    b = gaussian_noise((3, 4), 1.0, _gen(7))
    c = gaussian_noise((3, 4), 1.0, _gen(8))
    assert torch.equal(a, b) and not torch.equal(a, c)
    la = laplace_noise([5], 1.0, _gen(7))
    assert torch.equal(la, laplace_noise(5, 1.0, _gen(7)))
    assert torch.equal(torch.random.get_rng_state(), state)


def test_noise_shapes_dtypes_and_zero_scale() -> None:
    g = _gen()
    assert gaussian_noise((2, 3), 1.0, g).dtype == torch.float32
    assert gaussian_noise(torch.Size([2, 3]), 1.0, g, dtype=torch.float64).shape == (2, 3)
    assert torch.count_nonzero(gaussian_noise(10, 0.0, g)) == 0
    assert torch.count_nonzero(laplace_noise(10, 0.0, g)) == 0
    assert laplace_noise((0, 4), 1.0, g).shape == (0, 4)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gaussian_noise(3, -1.0, _gen()), "sigma"),
        (lambda: gaussian_noise(3, 1.0, None), "generator"),  # type: ignore[arg-type]
        (lambda: gaussian_noise((2, -1), 1.0, _gen()), "shape"),
        (lambda: laplace_noise(3, math.nan, _gen()), "scale"),
        (lambda: laplace_noise(3, 1.0, np.random.default_rng(0)), "generator"),  # type: ignore[arg-type]
        (lambda: rr_matrix(1, 1.0), "k"),
        (lambda: rr_matrix(3, 0.0), "epsilon"),
        (lambda: rr_keep_probability(3, -1.0), "epsilon"),
    ],
)
def test_noise_validation(call: object, name: str) -> None:
    with pytest.raises(InvalidConfigError, match=f"The {name} parameter of"):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("k", [2, 3, 7, 50])
@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 5.0, 30.0])
def test_rr_matrix_is_stochastic_with_ratio_e_eps(k: int, eps: float) -> None:
    m = rr_matrix(k, eps)
    assert m.shape == (k, k) and m.dtype == np.float64
    np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    ratios = m.max(axis=0) / m.min(axis=0)  # worst-case likelihood ratio per output
    np.testing.assert_allclose(ratios, math.exp(eps), rtol=1e-13)
    np.testing.assert_allclose(np.diag(m), math.exp(eps) / (math.exp(eps) + k - 1), rtol=1e-13)
    assert np.diag(m)[0] == rr_keep_probability(k, eps)


def test_rr_matrix_infinite_epsilon_is_identity() -> None:
    np.testing.assert_array_equal(rr_matrix(4, math.inf), np.eye(4))


def test_binary_rr_keep_probability_matches_edgerand() -> None:
    for eps in (0.1, 1.0, 4.0):
        assert rr_keep_probability(2, eps) == pytest.approx(
            math.exp(eps) / (1 + math.exp(eps)), rel=1e-14
        )


def _empirical_rows(perturb: object, k: int, per_value: int) -> np.ndarray:
    rows = np.zeros((k, k))
    for i in range(k):
        out = perturb(i, per_value)  # type: ignore[operator]
        rows[i] = np.bincount(out, minlength=k) / per_value
    return rows


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_randomized_response_frequencies_match_the_matrix(backend: str) -> None:
    k, eps, per_value = 4, 1.0, 50_000
    rng = np.random.default_rng(3)
    gen = _gen(3)

    def perturb(i: int, n: int) -> np.ndarray:
        if backend == "numpy":
            return randomized_response(np.full(n, i), k, eps, rng)
        return randomized_response(torch.full((n,), i), k, eps, gen).numpy()

    rows = _empirical_rows(perturb, k, per_value)
    expected = rr_matrix(k, eps)
    se = np.sqrt(expected * (1 - expected) / per_value)
    assert np.all(np.abs(rows - expected) <= 5 * se)


def test_randomized_response_preserves_type_dtype_and_shape() -> None:
    labels = np.array([[0, 1], [2, 2]], dtype=np.int32)
    out = randomized_response(labels, 3, 0.5, np.random.default_rng(0))
    assert isinstance(out, np.ndarray) and out.dtype == np.int32 and out.shape == (2, 2)
    tensor = torch.tensor([[0, 1], [2, 2]], dtype=torch.int16)
    out_t = randomized_response(tensor, 3, 0.5, _gen())
    assert isinstance(out_t, torch.Tensor) and out_t.dtype == torch.int16 and out_t.shape == (2, 2)
    assert out_t.min() >= 0 and out_t.max() <= 2
    # ε = ∞ keeps everything and returns a copy.
    same = randomized_response(labels, 3, math.inf, np.random.default_rng(0))
    assert np.array_equal(same, labels) and same is not labels


def test_randomized_response_is_reproducible() -> None:
    labels = np.arange(1000) % 5
    a = randomized_response(labels, 5, 1.0, np.random.default_rng(11))
    b = randomized_response(labels, 5, 1.0, np.random.default_rng(11))
    assert np.array_equal(a, b)
    ta = randomized_response(torch.from_numpy(labels), 5, 1.0, _gen(11))
    tb = randomized_response(torch.from_numpy(labels), 5, 1.0, _gen(11))
    assert torch.equal(ta, tb)


@pytest.mark.parametrize(
    ("values", "generator", "name"),
    [
        (np.array([0, 3]), np.random.default_rng(0), "values"),
        (np.array([-1, 0]), np.random.default_rng(0), "values"),
        (np.array([0.0, 1.0]), np.random.default_rng(0), "values"),
        (torch.tensor([0, 5]), torch.Generator(), "values"),
        (torch.tensor([0.0, 1.0]), torch.Generator(), "values"),
        (np.array([0, 1]), torch.Generator(), "generator"),
        (torch.tensor([0, 1]), np.random.default_rng(0), "generator"),
        ([0, 1], np.random.default_rng(0), "values"),
    ],
)
def test_randomized_response_validation(values: object, generator: object, name: str) -> None:
    with pytest.raises(InvalidConfigError, match=f"The {name} parameter of randomized_response"):
        randomized_response(values, 3, 1.0, generator)  # type: ignore[type-var, arg-type]

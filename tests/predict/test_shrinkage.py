"""Empirical-Bayes pooling of power-law exponents (perfpredict.overhead.shrinkage)."""

from __future__ import annotations

import numpy as np
import pytest

from perfpredict.laws.classic import PowerLaw
from perfpredict.overhead.shrinkage import (
    MIN_SERIES,
    line_moments,
    pooled_exponent_log,
    series_sums,
    shrink_exponent,
)


def _application(exponents: list[float], noise_log: float, seed: int = 0) -> np.ndarray:
    """The evidence sums of series measured at 1..32 nodes with these exponents and
    log-normal noise of ``noise_log``."""
    rng = np.random.default_rng(seed)
    log_p = np.log(2.0 ** np.arange(6))
    log_t = np.concatenate([5.0 - b * log_p + rng.normal(0, noise_log, log_p.size)
                            for b in exponents])
    count = np.full(len(exponents), log_p.size)
    start = np.arange(len(exponents)) * log_p.size
    _, sxx, exponent, residual_ss = line_moments(np.tile(log_p, len(exponents)), log_t,
                                                 start, count)
    return series_sums(sxx, exponent, residual_ss, count).sum(axis=0)


def test_line_moments_give_the_power_laws_exponent() -> None:
    p, t = np.array([2.0, 4.0, 16.0]), np.array([100.0, 60.0, 21.0])
    _, _, exponent, _ = line_moments(np.log(p), np.log(t), np.array([0]), np.array([3]))
    assert exponent[0] == pytest.approx(PowerLaw().fit(p, t).exponent_, rel=1e-12)


def test_series_alike_beyond_their_noise_are_pooled() -> None:
    """Exponents that differ by no more than the noise explains (here not at all):
    tau^2 = 0, every context takes the application's exponent."""
    sums = series_sums(np.full(10, 5.0), np.full(10, 0.8), np.full(10, 0.01),
                       np.full(10, 6)).sum(axis=0)
    shrunk = shrink_exponent(np.array([0.3, 1.2]), np.array([0.5, 5.0]),
                             np.tile(sums, (2, 1)))
    np.testing.assert_allclose(shrunk, sums[2] / sums[1])


def test_a_poorly_determined_exponent_moves_more_toward_its_application() -> None:
    """Series that really differ: a context of a short span (small S_xx) moves toward
    the mean more than one measured over many doublings, and neither all the way."""
    sums = _application(list(np.linspace(0.4, 1.2, 12)), noise_log=0.05)
    mean = sums[2] / sums[1]
    short, long = shrink_exponent(np.array([1.4, 1.4]), np.array([0.2, 8.0]),
                                  np.tile(sums, (2, 1)))
    assert mean < short < long < 1.4


def test_too_few_series_leave_the_exponent_alone() -> None:
    sums = _application([0.5, 0.9][:MIN_SERIES - 1], noise_log=0.05)
    assert shrink_exponent(np.array([1.4]), np.array([0.5]), sums[None])[0] == 1.4


def test_the_pooled_law_keeps_the_fitted_lines_centre() -> None:
    sums = _application([0.8] * 10, noise_log=0.05)
    x_mean = np.log(4.0)
    at = pooled_exponent_log(np.array([0.3] * 3), np.array([1.0] * 3), np.full(3, x_mean),
                             np.log([4.0, 8.0, 2.0]), np.tile(sums, (3, 1)))
    assert at[0] == 0.0 and at[1] < 0.0 < at[2]  # a steeper exponent: faster beyond

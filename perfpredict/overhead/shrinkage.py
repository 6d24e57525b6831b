"""Empirical-Bayes shrinkage of a series' power-law exponent toward its application's.

A few-shot context has two or three measured scales, so the exponent b of its power law
T(p) = t1 * p^-b, the least-squares slope of log T on log p, is noisy: its sampling
variance is sigma^2 / S_xx, with S_xx the sum of squared deviations of the context's
log scales (it grows with the number of scales and with the span in doublings) and
sigma^2 the scatter of log runtimes about a series' line. The application's other series
(other inputs, variants, systems) ran the same code, and their exponents say where this
one's likely lies. The usual empirical-Bayes (random-effects) estimate combines them:

    mu    = sum_j S_j b_j / sum_j S_j                  the application's exponent
    sigma^2 = pooled residual variance of its series about their lines
    tau^2 = max(0, (Q - (n - 1)) / (sum w - sum w^2 / sum w)),   w_j = S_j / sigma^2,
            Q = sum_j w_j (b_j - mu)^2                 (DerSimonian-Laird)
    b'    = b + B (mu - b),   B = v / (v + tau^2),   v = sigma^2 / S_xx of the context

so a series whose exponent is poorly determined (few scales, a short span) moves toward
its application's, one measured over many doublings hardly moves, and where the
application's series agree more than their noise alone explains (tau^2 = 0) they are
pooled. Strength and target come from the data; nothing is tuned. Only strong-scaling
series take part: a weak-scaling exponent is of another kind (near 0).

An application's evidence is kept as sums (:data:`SUM_NAMES`), so folds can be
subtracted in training (a series' nested contexts must not borrow from itself) and an
artifact carries them as a few numbers per application.

The hybrid reads the result as a feature (``pooled_exponent_log``: how the shrunk
exponent moves the series' power law at the query's scale), not as a change of its base;
:meth:`perfpredict.model.fit.HybridPredictor._pool_exponents` says why. Under the
store-cut backtest (``python -m bench.accuracy_benchmark --repeats 3``, seeds 0, 3 and
6) pooled MAPE went 22.3 -> 22.1, 22.3 -> 22.1, 22.5 -> 21.8 in extrapolation and
22.0 -> 20.9, 22.6 -> 21.4, 22.1 -> 21.2 in few-shot; MLPerf, CP2K, Castro and
PencilFFTs lowered their MAPE in every run, VASP stayed within 0.2 points (its series'
exponents differ: between-series s.d. 0.24, so a three-scale context moves about an
eighth of the way), RELeARN (weak scaling, the feature 0) rose 0.3-1.1 points through
the shared trees, and no data set's 90% coverage left 0.85-0.95.
"""

from __future__ import annotations

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray
from perfpredict.overhead.contexts import block_positions

#: An application's exponent evidence, as sums over its strong-scaling series j.
SUM_NAMES = ("n_series", "weight", "weighted_exponent", "weighted_square", "weight_square",
             "residual_ss", "residual_dof")
#: Fewest series whose mean a series is shrunk toward: Stein's result, shrinkage toward
#: an estimated mean beats each estimate alone from three means on.
MIN_SERIES = 3


def line_moments(log_scale: FloatArray, log_runtime: FloatArray, start: IntArray,
                 count: IntArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per block ``[start, start + count)`` of the flat columns: mean log scale, S_xx,
    exponent (minus the least-squares slope) and residual sum of squares."""
    offsets = np.asarray(start, dtype=np.int64)
    index = np.repeat(offsets, count) + block_positions(count)
    x, y = log_scale[index], log_runtime[index]
    first = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    block = np.repeat(np.arange(count.size), count)
    x_mean = np.add.reduceat(x, first) / count
    y_mean = np.add.reduceat(y, first) / count
    dx, dy = x - x_mean[block], y - y_mean[block]
    sxx = np.add.reduceat(dx * dx, first)
    slope = np.add.reduceat(dx * dy, first) / sxx
    residual = dy - slope[block] * dx
    return x_mean, sxx, -slope, np.add.reduceat(residual * residual, first)


def series_sums(sxx: FloatArray, exponent: FloatArray, residual_ss: FloatArray,
                n_scales: IntArray) -> FloatArray:
    """Each series' contribution to :data:`SUM_NAMES` (rows: series)."""
    return np.column_stack([np.ones_like(sxx), sxx, sxx * exponent,
                            sxx * exponent * exponent, sxx * sxx, residual_ss,
                            np.maximum(n_scales - 2, 0).astype(float)])


def shrink_exponent(exponent: FloatArray, sxx: FloatArray, sums: FloatArray) -> FloatArray:
    """The exponents of contexts with S_xx ``sxx`` shrunk toward the application whose
    evidence (:data:`SUM_NAMES`, one row per context) is ``sums``; unchanged where the
    application has fewer than :data:`MIN_SERIES` series or no residual degree of
    freedom."""
    n, weight, weighted, weighted_sq, weight_sq, residual_ss, dof = np.asarray(sums).T
    usable = (n >= MIN_SERIES) & (dof > 0) & (weight > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = residual_ss / dof
        mu = weighted / weight
        q = (weighted_sq - weighted * weighted / weight) / sigma2
        spread = (weight - weight_sq / weight) / sigma2
        tau2 = np.maximum((q - (n - 1)) / spread, 0.0)
        variance = sigma2 / sxx
        pull = variance / (variance + tau2)
    usable &= np.isfinite(pull) & np.isfinite(mu)
    return np.where(usable, exponent + np.where(usable, pull * (mu - exponent), 0.0), exponent)


def pooled_exponent_log(exponent: FloatArray, sxx: FloatArray, log_scale_mean: FloatArray,
                        log_scale: FloatArray, sums: FloatArray) -> FloatArray:
    """log(power law with the exponent shrunk / the context's own power law) at
    ``log_scale``: the shrunk law keeps the fitted line's centre (mean log scale, mean
    log runtime), so the two differ by (b - b') (log p - mean log scale)."""
    return (exponent - shrink_exponent(exponent, sxx, sums)) * (log_scale - log_scale_mean)


__all__ = ["MIN_SERIES", "SUM_NAMES", "line_moments", "pooled_exponent_log", "series_sums",
           "shrink_exponent"]

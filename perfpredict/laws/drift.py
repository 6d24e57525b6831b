"""Slope drift: a pooled, scale-free extrapolator of strong scaling.

The local scaling exponent s = d ln T / d ln p continues from a series' edge slope
(between its two largest measured scales) and drifts per doubling as the training
series' slopes drifted between consecutive measured intervals, a non-increasing
function of the slope learned across all strong-scaling series (isotonic regression),
integrated outward from the largest measured point. A series that still scales thus
borrows how other series' slopes turned toward saturation, in units free of scale: no
series' node counts or runtimes enter, only slopes and doublings.

A non-increasing map pulls every slope toward the one where it crosses 0 (-0.52 in the
bundled predictor: ``python -m bench.estimate_shape``), so a code that stopped scaling
is continued as if it scaled again. Bounding the drift at 0 (slopes flatten or stay),
or fitting it from central differences (noise that shares no endpoint with the slope),
lost on VASP and on CP2K or Castro: the correction trees learn from targets made with
the drift, around its optimism (docs/accuracy.md, "Tried and rejected").

Fitted and evaluated with numpy alone: the estimate imports it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray

#: Slope bins the pooled drift is averaged in before the isotonic fit: the curve an
#: artifact stores, and the resolution of the slope it is read at.
N_SLOPE_BINS = 64
#: Integration steps between the largest measured scale and a query.
STEPS = 32


def _isotonic_decreasing(values: FloatArray, weights: FloatArray) -> FloatArray:
    """The non-increasing sequence nearest ``values`` in weighted least squares."""
    from perfpredict.uncertainty.conformal import isotonic_increasing

    return -np.array(isotonic_increasing((-values).tolist(), weights.tolist()))


def slope_turns(scales: FloatArray, medians_s: FloatArray,
                scale_start: IntArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """For every pair of consecutive intervals between measured scales within a series
    (laid out as in :class:`perfpredict.overhead.contexts.SeriesTable`): the slope
    d ln T / d ln p of the first, how much it turned by the second per doubling between
    their midpoints, and the series (its index). What the drift is fitted from."""
    n_scales = np.diff(scale_start)
    owner = np.repeat(np.arange(n_scales.size), n_scales)
    log_p, log_t = np.log(scales), np.log(medians_s)
    # slopes of consecutive intervals within a series
    pair = np.flatnonzero(owner[1:] == owner[:-1])
    slope = (log_t[pair + 1] - log_t[pair]) / (log_p[pair + 1] - log_p[pair])
    mid = (log_p[pair + 1] + log_p[pair]) / 2
    slope_owner = owner[pair]
    # drift of the slope per doubling between consecutive intervals
    step = np.flatnonzero(slope_owner[1:] == slope_owner[:-1])
    turn = (slope[step + 1] - slope[step]) / ((mid[step + 1] - mid[step]) / np.log(2))
    return slope[step], turn, slope_owner[step]


class SlopeDrift(NamedTuple):
    """d s / d doubling as a function of s: ``slope`` (ascending) and ``drift``."""

    slope: FloatArray
    drift: FloatArray

    @classmethod
    def fit(cls, scales: FloatArray, medians_s: FloatArray, scale_start: IntArray,
            strong: np.ndarray) -> SlopeDrift | None:
        """Pooled from the series laid out as in
        :class:`perfpredict.overhead.contexts.SeriesTable` (``scale_start``: where each
        series' distinct scales begin, n_series + 1 entries), the ``strong`` ones; every
        series weighs one. None without a strong series of three scales."""
        x, y, series = slope_turns(scales, medians_s, scale_start)
        keep = strong[series]
        if not keep.any():
            return None
        x, y, series = x[keep], y[keep], series[keep]
        weight = 1.0 / np.bincount(series, minlength=scale_start.size - 1)[series]
        order = np.argsort(x, kind="stable")
        bins = np.array_split(order, min(N_SLOPE_BINS, order.size))
        bin_weight = np.array([weight[b].sum() for b in bins])
        bin_slope = np.array([np.average(x[b], weights=weight[b]) for b in bins])
        bin_drift = np.array([np.average(y[b], weights=weight[b]) for b in bins])
        return cls(bin_slope, _isotonic_decreasing(bin_drift, bin_weight))

    def predict_log(self, edge_log_p: FloatArray, edge_log_t: FloatArray,
                    edge_slope: FloatArray, p: FloatArray) -> FloatArray:
        """log runtime at ``p`` beyond the edge (each element with its own: the largest
        measured scale's log, the log median runtime there and the slope into it)."""
        log_t = np.array(edge_log_t, dtype=float)
        slope = np.array(edge_slope, dtype=float)
        step = (np.log(p) - edge_log_p) / STEPS
        for _ in range(STEPS):
            log_t += slope * step
            slope += np.interp(slope, self.slope, self.drift) * step / np.log(2)
        return log_t

    def to_dict(self) -> dict[str, Any]:
        return {"slope": self.slope.tolist(), "drift": self.drift.tolist()}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> SlopeDrift:
        return cls(np.asarray(doc["slope"], dtype=float), np.asarray(doc["drift"], dtype=float))

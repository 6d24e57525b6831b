"""Run-to-run noise: a floor under the interval of a series measured once per scale, and
the interval of a repeat at a scale a series measured several times.

A series with one run per scale says nothing about how much the next run at the same
scale will differ, and conformal residuals of a quiet curve can be tiny: a walltime
directive came out at 3 minutes for a predicted 160 s, "kill probability 0.01%"
(issue 14, item 15). The floor is learned from the training series that do have
repeats: each repeated run's log deviation from the mean of the other runs at its scale
(leave-one-out, what a new run does against what was measured before), every series
weighing the same however many repeats it has. A series measured once per scale gets an
interval at least as wide as that noise.

At a scale it measured, a series' estimate is the median of its runs there, and what a
new run there does is that scale's run-to-run noise, not how far a law misses between
scales (what the interval is calibrated on elsewhere). A series with enough repeats
says how noisy it is itself: :class:`RepeatNoise`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray
from perfpredict.packed import ReadByName, pack, unpack

#: Levels the floor's quantiles are kept at: every half percent, and finer in the tail,
#: where a walltime's kill risk reads it. With half percents alone the quantile between
#: 99.5% and the largest deviation was interpolated linearly to that one run (an MLPerf
#: ssd result 2,000 times its repeats: half-width 0.59 in log at 99.5%, 4.8 at 99.8%,
#: where the 16,921 deviations' own 99.8% quantile is 0.95).
_LEVELS = np.concatenate([np.linspace(0.0, 1.0, 201)[:-1],
                          [0.996, 0.997, 0.998, 0.999, 0.9995, 0.9998, 0.9999, 1.0]])
#: The levels of a floor stored before the tail levels (201 of them).
_LEVELS_BEFORE_TAIL = np.linspace(0.0, 1.0, 201)
#: The fewest deviations of its own repeats from which a series' interval at a measured
#: scale is read: nine hold a central 90% conformal quantile, the default confidence.
MIN_OWN_DEVIATIONS = 9
#: The fewest series with repeats from which an application's own noise floor is read
#: (as for the shrinkage of its exponents, perfpredict/overhead/shrinkage.py).
MIN_APP_SERIES = 3
#: Relative rounding of a runtime recomputed from a log bound (a walltime read off it).
_ROUNDING_LOG = 1e-9


def _weighted_quantiles(deviation: FloatArray, weight: FloatArray) -> FloatArray:
    """The weighted quantiles of ``deviation`` at :data:`_LEVELS` (weighted midpoints)."""
    order = np.argsort(deviation)
    cumulative = np.cumsum(weight[order])
    levels = (cumulative - weight[order] / 2) / cumulative[-1]
    return np.interp(_LEVELS, levels, deviation[order])


def _unpack_quantiles(packed: dict[str, str]) -> FloatArray:
    return unpack(packed, "<f8")


class NoiseFloor(NamedTuple):
    """Quantiles of the absolute log deviation of a repeated run (empty: no training
    series had repeats, and the floor is zero), pooled over every training series with
    repeats and, for an application with :data:`MIN_APP_SERIES` or more of them, over
    its own.

    Why per application: codes differ in how much a run varies (MLPerf Training's time
    to train with how fast each run converges, an HPC code's with the machine's
    jitter), and the pooled floor, every series weighing the same, is the codes'
    average. Each series with repeats cut to one run per scale, its other runs predicted
    at their scale by a predictor trained on the other four of five folds of series of
    the acceptance store (``python -m bench.repeat_run_benchmark``, seeds 0 and 1, 4,507
    runs): the pooled floor held 0.785 / 0.787 (MLPerf Training 0.753 / 0.756, VASP
    0.965 / 0.959, RELeARN 1.000), the application's 0.898 / 0.904 (MLPerf Training
    0.886 / 0.893, VASP 0.963 / 0.957, RELeARN 1.000 with a narrower interval)."""

    quantiles: FloatArray
    n_series: int
    by_app: Mapping[str, FloatArray]
    levels: FloatArray = _LEVELS

    @classmethod
    def fit(cls, deviation_log: FloatArray, run_series: IntArray,
            apps: list[str]) -> NoiseFloor:
        """The floor from each run's |log deviation| from the other runs at its scale
        (NaN for a run alone there: :attr:`perfpredict.overhead.contexts.SeriesTable.
        repeat_deviation_log`), ``run_series`` the index of its series and ``apps`` each
        series' application; every series with repeats weighs one in all."""
        repeated = ~np.isnan(deviation_log)
        deviation, series_of = deviation_log[repeated], run_series[repeated]
        if not deviation.size:
            return cls(np.empty(0), 0, {})
        per_series = np.bincount(series_of, minlength=len(apps))
        weight = 1.0 / per_series[series_of]
        app_names, app_of_series = np.unique(np.asarray(apps, dtype=object),
                                             return_inverse=True)
        app_of = app_of_series[series_of]
        series_per_app = np.bincount(app_of_series[per_series > 0],
                                     minlength=app_names.size)
        by_app = {str(app): _weighted_quantiles(deviation[app_of == i], weight[app_of == i])
                  for i, app in enumerate(app_names) if series_per_app[i] >= MIN_APP_SERIES}
        return cls(_weighted_quantiles(deviation, weight), int((per_series > 0).sum()),
                   by_app)

    def _quantiles(self, app: str | None) -> FloatArray:
        return self.by_app.get(app, self.quantiles) if app is not None else self.quantiles

    def half_width_log(self, confidence: float, app: str | None = None) -> float:
        """The log half-width that holds ``confidence`` of a new run's deviation, from
        ``app``'s own series with repeats where it has enough."""
        quantiles = self._quantiles(app)
        if not quantiles.size:
            return 0.0
        return float(np.interp(confidence, self.levels, quantiles))

    def upper_tail(self, log_ratio: FloatArray, app: str | None = None) -> FloatArray:
        """P(a run exceeds the prediction by more than ``log_ratio``), the deviations
        taken as symmetric; 0.5 at or below the prediction."""
        log_ratio = np.asarray(log_ratio, dtype=float)
        quantiles = self._quantiles(app)
        if not quantiles.size:
            return np.where(log_ratio > 0, 0.0, 0.5)
        # the level of |deviation| that log_ratio reaches (0 below the smallest, 1 above)
        within = np.interp(log_ratio, quantiles, self.levels, left=0.0, right=1.0)
        return np.where(log_ratio > 0, 0.5 * (1.0 - within), 0.5)

    def to_dict(self) -> dict[str, Any]:
        return {"quantiles": pack(self.quantiles.tolist(), "<f8"), "n_series": self.n_series,
                "by_app": {app: pack(q.tolist(), "<f8") for app, q in self.by_app.items()},
                "levels": pack(self.levels.tolist(), "<f8")}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> NoiseFloor:
        levels = unpack(doc["levels"], "<f8") if "levels" in doc else _LEVELS_BEFORE_TAIL
        return cls(unpack(doc["quantiles"], "<f8"), int(doc["n_series"]),
                   ReadByName(doc["by_app"], _unpack_quantiles), levels)


class RepeatNoise(NamedTuple):
    """One series' own run-to-run noise: how far each of its repeated runs landed from the
    others at its scale (|log|, ascending; :attr:`perfpredict.overhead.contexts.SeriesTable.
    repeat_deviation_log`).

    A repeat at a measured scale is one more draw of the same noise, so split conformal
    prediction applies to it as it stands: the ceil((n + 1) c)-th smallest of n
    deviations holds a new run's with probability at least c. Left out one at a time and
    predicted from the rest of their series, repeats at a measured scale fell inside
    the intervals calibrated on held-out scales 0.862 and 0.854 of the time (seeds 0 and
    1; MLPerf Training's time to train, which varies with how fast each run converges,
    0.834 and 0.822; VASP's 0.967 and 0.973), and inside their series' own noise, where
    nine or more deviations decide (nine runs in ten), and the calibrated interval
    elsewhere 0.909 on both seeds (MLPerf Training 0.903, VASP 0.911), with a median
    width of 0.26 in log against 0.37 (``python -m bench.repeat_run_benchmark``)."""

    deviations_log: FloatArray

    @property
    def decides(self) -> bool:
        """Whether the series has repeats enough to set its interval at a measured scale
        (:data:`MIN_OWN_DEVIATIONS`)."""
        return self.deviations_log.size >= MIN_OWN_DEVIATIONS

    @property
    def largest_log(self) -> float:
        return float(self.deviations_log[-1])

    def half_width_log(self, confidence: float) -> float | None:
        """The conformal half-width that holds ``confidence`` of a repeat's deviation, or
        None where the deviations are too few to (confidence above n / (n + 1))."""
        n = self.deviations_log.size
        rank = math.ceil((n + 1) * confidence - 1e-9)  # 10 x 0.9 is 9, not 10
        return float(self.deviations_log[rank - 1]) if 1 <= rank <= n else None

    def upper_tail(self, log_ratio: FloatArray) -> FloatArray:
        """P(a repeat runs longer than the median times exp(``log_ratio``)): half the
        conformal p-value (1 + #{deviations >= log_ratio}) / (n + 1), the deviations
        taken as symmetric; 0.5 at or below the median. At the upper bound of
        :meth:`half_width_log` it is (1 - c) / 2 or a step of the repeats more (two
        runs at a scale deviate from each other alike: ties), never less, as the
        calibrated intervals' tails are; past every deviation, where the repeats can
        tell no finer, 1 / (2 (n + 1))."""
        log_ratio = np.asarray(log_ratio, dtype=float)
        n = self.deviations_log.size
        # a walltime read off the bound and its log ratio recomputed land within rounding
        # of the deviation it came from, which must still count
        above = n - np.searchsorted(self.deviations_log, log_ratio - _ROUNDING_LOG,
                                    side="left")
        return np.where(log_ratio > 0, 0.5 * (1 + above) / (n + 1), 0.5)

"""A floor under the interval of a series measured once per scale: run-to-run noise.

A series with one run per scale says nothing about how much the next run at the same
scale will differ, and conformal residuals of a quiet curve can be tiny: a walltime
directive came out at 3 minutes for a predicted 160 s, "kill probability 0.01%"
(issue 14, item 15). The floor is learned from the training series that do have
repeats: each repeated run's log deviation from the mean of the other runs at its scale
(leave-one-out, what a new run does against what was measured before), every series
weighing the same however many repeats it has. A series measured once per scale gets an
interval at least as wide as that noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.model.series import Series
from perfpredict.packed import pack, unpack

_LEVELS = np.linspace(0.0, 1.0, 201)


def repeat_deviations(series_list: list[Series]) -> tuple[FloatArray, FloatArray]:
    """(|log deviation| of each repeated run from the mean of the others at its scale,
    its weight: 1 / the series' repeated runs, so that every series with repeats counts
    once)."""
    deviations, weights = [], []
    for series in series_list:
        scales, index, counts = np.unique(series.scale, return_inverse=True,
                                          return_counts=True)
        repeated = counts[index] >= 2
        if not repeated.any():
            continue
        log_t = np.log(series.runtime_s)
        sums = np.bincount(index, weights=log_t, minlength=scales.size)
        others_mean = (sums[index] - log_t)[repeated] / (counts[index][repeated] - 1)
        deviations.append(np.abs(log_t[repeated] - others_mean))
        weights.append(np.full(int(repeated.sum()), 1.0 / repeated.sum()))
    if not deviations:
        return np.empty(0), np.empty(0)
    return np.concatenate(deviations), np.concatenate(weights)


@dataclass
class NoiseFloor:
    """Quantiles of the absolute log deviation of a repeated run (empty: no training
    series had repeats, and the floor is zero)."""

    quantiles: FloatArray
    n_series: int

    @classmethod
    def fit(cls, series_list: list[Series]) -> NoiseFloor:
        deviation, weight = repeat_deviations(series_list)
        if not deviation.size:
            return cls(np.empty(0), 0)
        order = np.argsort(deviation)
        cumulative = np.cumsum(weight[order])
        levels = (cumulative - weight[order] / 2) / cumulative[-1]  # weighted midpoints
        n_series = int(round(weight.sum()))
        return cls(np.interp(_LEVELS, levels, deviation[order]), n_series)

    def half_width_log(self, confidence: float) -> float:
        """The log half-width that holds ``confidence`` of a new run's deviation."""
        if not self.quantiles.size:
            return 0.0
        return float(np.interp(confidence, _LEVELS, self.quantiles))

    def upper_tail(self, log_ratio: FloatArray) -> FloatArray:
        """P(a run exceeds the prediction by more than ``log_ratio``), the deviations
        taken as symmetric; 0.5 at or below the prediction."""
        log_ratio = np.asarray(log_ratio, dtype=float)
        if not self.quantiles.size:
            return np.where(log_ratio > 0, 0.0, 0.5)
        # the level of |deviation| that log_ratio reaches (0 below the smallest, 1 above)
        within = np.interp(log_ratio, self.quantiles, _LEVELS, left=0.0, right=1.0)
        return np.where(log_ratio > 0, 0.5 * (1.0 - within), 0.5)

    def to_dict(self) -> dict[str, Any]:
        return {"quantiles": pack(self.quantiles.tolist(), "<f8"), "n_series": self.n_series}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> NoiseFloor:
        return cls(unpack(doc["quantiles"], "<f8"), int(doc["n_series"]))

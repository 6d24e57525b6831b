"""Split-conformal intervals for a multiplicative error that grows with extrapolation.

Calibration scores are log(T_measured / T_predicted) from nested extrapolation, predicted
by a regressor that never saw the series they come from (cross-fitting), divided by a
predicted spread (normalised conformal scores, as MAPIE's residual-normalised score), so
that a quiet series gets a narrow interval and a noisy one a wide one. They are binned by
extrapolation distance (doublings beyond the largest measured scale); the interval at
confidence 1 - alpha is [exp(q_lo * spread), exp(q_hi * spread)] times the prediction,
with the finite-sample conformal quantile levels. Half-widths never shrink with distance:
the bins' quantiles are made monotone by weighted isotonic regression, not by a running
maximum, which carried one noisy wide bin to every farther distance and over-covered
(MLPerf Training few-shot: 0.959 with the maximum, 0.945 with isotonic regression). A
query beyond every calibration distance is flagged and widened in proportion.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from perfpredict.counts import is_number, shown
from perfpredict.errors import BadInputError
from perfpredict.laws.base import FloatArray
from perfpredict.packed import pack, unpack

#: Upper edges of the distance bins, in doublings beyond the largest measured scale.
DISTANCE_EDGES = (0.0, 1.0, 2.0, 3.0, 4.5, 1e9)  # the last bin takes every farther residual
MIN_PER_BIN = 30
#: Confidences the upper tail (:meth:`DistanceConformal.upper_tail`) is resolved on:
#: tails from 0.5 down to 0.0001, a kill probability to a hundredth of a percent.
TAIL_CONFIDENCES = np.linspace(0.0, 0.9998, 1000)
_LEVELS = np.linspace(0.0, 1.0, 2001)
#: The widest interval the predictor resolves: its tail levels end there. Asked for
#: more, ``estimate`` gave the widest interval labelled with the level asked for (bert at
#: 64 nodes: 27.5-362.5 s at 99.95%, 99.99% and 99.999% alike), or read its bounds past
#: the last level calibrated (a Castro series at 512 nodes: 0.24-201 s at 99.98%,
#: 0.007-6,929 s at 99.99%).
WIDEST_CONFIDENCE = float(TAIL_CONFIDENCES[-1])


def check_confidence(confidence: float) -> None:
    """An interval's confidence (``--confidence`` of estimate, advise and evaluate) must
    be a number above 0 and at most :data:`WIDEST_CONFIDENCE`: a library caller's
    ``confidence="0.9"`` or ``None`` was a TypeError out of the comparison."""
    if not (is_number(confidence) and 0 < confidence < 1):
        raise BadInputError(f"--confidence must be between 0 and 1 (0.9 for 90% "
                            f"intervals), got {shown(confidence)}")
    if confidence > WIDEST_CONFIDENCE:
        raise BadInputError(f"--confidence {confidence:g} is wider than the predictor's "
                            f"intervals resolve (their widest is {WIDEST_CONFIDENCE:g}); "
                            f"ask for {WIDEST_CONFIDENCE:g} or less")


class ScoreBounds(NamedTuple):
    """Conformal bounds on the (normalised) log residual at one distance."""

    lower: float
    upper: float
    beyond_calibration: bool
    #: The confidence asks for a tail beyond what the bin's residuals resolve: with n of
    #: them a bound at level q needs (n + 1) q <= n, and past that split conformal
    #: prediction has no finite bound. The bound given is the widest residual seen.
    at_widest: bool = False


def isotonic_increasing(values: list[float], weights: list[float]) -> list[float]:
    """The non-decreasing sequence nearest ``values`` in weighted least squares (pool
    adjacent violators). Plain Python: it runs at estimate time, which must not import
    scikit-learn, on a handful of bins."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for value, weight in zip(values, weights, strict=True):
        blocks.append([value, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, weight_sum, count = blocks.pop()
            prev = blocks[-1]
            total = prev[1] + weight_sum
            blocks[-1] = [(prev[0] * prev[1] + mean * weight_sum) / total, total,
                          prev[2] + count]
    return [mean for mean, _, count in blocks for _ in range(int(count))]


class DistanceConformal:
    """Conformal quantiles of log residuals per extrapolation-distance bin."""

    def fit(self, residual_log: FloatArray, distance_log2: FloatArray) -> DistanceConformal:
        """Quantiles per distance bin, every test run counting once (as coverage does)."""
        residual_log = np.asarray(residual_log, dtype=float)
        distance_log2 = np.asarray(distance_log2, dtype=float)
        if residual_log.size == 0:
            raise ValueError("no calibration residuals")
        self.bins_: list[dict[str, Any]] = []
        self._bounds_cache: dict[float, list[tuple[float, float]]] = {}
        self._upper_cache: FloatArray | None = None
        pending = np.zeros(residual_log.size, dtype=bool)
        lower = -math.inf
        for upper in DISTANCE_EDGES:
            pending |= (distance_log2 > lower) & (distance_log2 <= upper)
            lower = upper
            n_cases = int(pending.sum())
            if n_cases < MIN_PER_BIN and upper != DISTANCE_EDGES[-1]:
                continue  # too few: merge with the next, farther bin
            if not pending.any():
                continue
            self.bins_.append({"upper_log2": upper, "n": n_cases,
                               "quantiles": np.quantile(residual_log[pending], _LEVELS).tolist()})
            pending[:] = False
        self.max_distance_log2_ = float(distance_log2.max())
        return self

    def _quantile(self, bin_: dict[str, Any], level: float) -> float:
        n = bin_["n"]
        # finite-sample correction: the ceil((n + 1) * level) / n empirical quantile
        adjusted = min(1.0, max(0.0, math.ceil((n + 1) * level) / n if level > 0.5
                                else math.floor((n + 1) * level) / n))
        return float(np.interp(adjusted, _LEVELS, bin_["quantiles"]))

    def _monotone_bounds(self, confidence: float) -> list[tuple[float, float]]:
        """(q_lo, q_hi) per bin, each side monotone in distance and around zero.

        Computed once per confidence level: a batch estimate asks for the bounds of
        every query, and interpolating the quantiles again for each took minutes for
        100k queries.
        """
        cache = self._bounds_cache
        if confidence not in cache:
            alpha = 1.0 - confidence
            n = [float(bin_["n"]) for bin_ in self.bins_]
            q_hi = [max(0.0, self._quantile(bin_, 1 - alpha / 2)) for bin_ in self.bins_]
            q_lo = [min(0.0, self._quantile(bin_, alpha / 2)) for bin_ in self.bins_]
            lower = [-q for q in isotonic_increasing([-q for q in q_lo], n)]
            cache[confidence] = list(zip(lower, isotonic_increasing(q_hi, n), strict=True))
        return cache[confidence]

    def _bin_and_stretch(self, distance_log2: float) -> tuple[int, float]:
        """The bin a distance falls in, and the factor its bounds are widened by beyond
        every calibration distance (in proportion to the distance)."""
        index = next((i for i, bin_ in enumerate(self.bins_)
                      if distance_log2 <= bin_["upper_log2"]), len(self.bins_) - 1)
        if distance_log2 > self.max_distance_log2_ and self.max_distance_log2_ > 0:
            return index, distance_log2 / self.max_distance_log2_
        return index, 1.0

    def bounds(self, distance_log2: float, confidence: float) -> ScoreBounds:
        index, stretch = self._bin_and_stretch(distance_log2)
        q_lo, q_hi = self._monotone_bounds(confidence)[index]
        n = self.bins_[index]["n"]
        return ScoreBounds(q_lo * stretch, q_hi * stretch,
                           distance_log2 > self.max_distance_log2_,
                           (n + 1) * (1 + confidence) / 2 > n)

    def smallest_tail(self, distance_log2: float) -> float:
        """The smallest exceedance the residuals at a distance resolve, 1 / (n + 1) of
        their n: a bound beyond the widest of them is outrun at most that often, which
        is all split conformal prediction says of it (:attr:`ScoreBounds.at_widest`
        below it). :meth:`upper_tail` reads on to (1 - TAIL_CONFIDENCES[-1]) / 2 past
        the widest, a figure no residual measured."""
        return 1.0 / (self.bins_[self._bin_and_stretch(distance_log2)[0]]["n"] + 1)

    def upper_tail(self, distance_log2: float, score: float) -> float:
        """P(normalised log residual > ``score``) at a distance: (1 - c) / 2 for the
        confidence c whose upper bound (:meth:`bounds`) is ``score``, so that a
        walltime at the upper bound of the interval at confidence c is outrun by
        (1 - c) / 2 of runs (by more where the bound is flat in c). 0.5 at or below zero
        (the point prediction); the smallest tail resolved is
        (1 - TAIL_CONFIDENCES[-1]) / 2."""
        if score <= 0:
            return 0.5
        index, stretch = self._bin_and_stretch(distance_log2)
        upper = self._upper_curve()[:, index] * stretch
        if score * (1 - 1e-9) > upper[-1]:
            return float((1.0 - TAIL_CONFIDENCES[-1]) / 2)
        # the first confidence whose upper bound reaches the score: with few residuals
        # in a bin the bound is a step function of the confidence (the finite-sample
        # correction's order statistics), and a walltime on a step is outrun as often
        # as the step's lowest confidence says, not its highest
        # (less a rounding margin: a walltime computed from the bound comes back
        # through exp and log a few ulps off)
        i = int(np.searchsorted(upper, score * (1 - 1e-9), side="left"))
        if i == 0 or upper[i] == upper[i - 1]:
            return float((1.0 - TAIL_CONFIDENCES[i]) / 2)
        share = (score - upper[i - 1]) / (upper[i] - upper[i - 1])
        step = TAIL_CONFIDENCES[i] - TAIL_CONFIDENCES[i - 1]
        confidence = TAIL_CONFIDENCES[i - 1] + share * step
        return float((1.0 - confidence) / 2)

    def _upper_curve(self) -> FloatArray:
        """Upper bounds (rows: :data:`TAIL_CONFIDENCES`, columns: bins), made
        non-decreasing in confidence; computed once per loaded model."""
        if self._upper_cache is None:
            curve = np.array([[hi for _, hi in self._monotone_bounds(float(c))]
                              for c in TAIL_CONFIDENCES])
            self._upper_cache = np.maximum.accumulate(curve, axis=0)
        return self._upper_cache

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; each bin's 2001 quantiles packed (:mod:`perfpredict.packed`),
        which an estimate reads 4 ms faster than a list of numbers."""
        return {"bins": [{**b, "quantiles": pack(b["quantiles"], "<f8")} for b in self.bins_],
                "max_distance_log2": self.max_distance_log2_}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> DistanceConformal:
        self = cls()
        self.bins_ = [{**b, "upper_log2": float(b["upper_log2"]),
                       "quantiles": unpack(b["quantiles"], "<f8")} for b in doc["bins"]]
        self.max_distance_log2_ = float(doc["max_distance_log2"])
        self._bounds_cache = {}
        self._upper_cache = None
        return self

"""Features of a prediction problem: what a series' measured runs say about how it
scales, and how far beyond them a query reaches.

The overhead regressor never sees raw runtimes or scales alone (trees cannot extrapolate
in them); it sees the extrapolation distance, the shape of the measured curve at its edge,
and how much the candidate laws disagree, all of which take the same range of values at
128 nodes as at 16384.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from perfpredict.laws import LAWS, ScalingLaw
from perfpredict.laws.base import FloatArray
from perfpredict.series import Series

#: Laws the hybrid weighs; each must be fittable from two scales except where noted.
CANDIDATE_LAWS = ("amdahl", "amdahl_log", "gustafson", "power")

FEATURE_NAMES = (
    "extrapolation_log2",  # log2(p / largest measured scale): 0 = at the edge
    "log2_scale",
    "log2_scale_max",
    "n_scales",
    "edge_slope",  # d log T / d log p between the two largest measured scales
    "mean_slope",  # over the whole measured range
    "curvature",  # edge slope minus first slope
    "noise_log",  # spread of repetitions at the largest scale (std of log runtime)
    "weak",
    "log2_ranks_per_node",
    "threads_per_rank",
    "log10_problem_size",
    *(f"law_{name}" for name in CANDIDATE_LAWS),  # log(law / base) at p
)


@dataclass
class SeriesContext:
    """Everything the predictor derives from one series' measured runs."""

    series: Series
    scales: FloatArray
    medians_s: FloatArray
    laws: dict[str, ScalingLaw]
    summary: FloatArray  # the features that do not depend on the query scale

    @property
    def scale_max(self) -> float:
        return float(self.scales[-1])

    @property
    def scale_min(self) -> float:
        return float(self.scales[0])


def _slope(p: FloatArray, t: FloatArray) -> float:
    if p.size < 2:
        return 0.0
    return float(np.polyfit(np.log2(p), np.log2(t), 1)[0])


def fit_context(series: Series) -> SeriesContext:
    """Fit every candidate law on the series (per-scale medians) and summarise its shape."""
    scales, medians = series.medians()
    if scales.size < 2:
        raise ValueError("a series needs at least two measured scales")
    laws: dict[str, ScalingLaw] = {}
    for name in CANDIDATE_LAWS:
        law = LAWS[name]()
        if scales.size >= law.min_scales:
            laws[name] = law.fit(scales, medians)
    top = series.runtime_s[series.scale == scales[-1]]
    noise = float(np.std(np.log(top))) if top.size > 1 else 0.0
    edge = _slope(scales[-2:], medians[-2:])
    first = _slope(scales[:2], medians[:2])
    size = series.problem_size_num
    summary = np.array([
        math.log2(scales[-1]),
        float(scales.size),
        edge,
        _slope(scales, medians),
        edge - first,
        noise,
        float(series.weak),
        math.log2(series.ranks_per_node) if series.ranks_per_node else np.nan,
        series.threads_per_rank if series.threads_per_rank else np.nan,
        math.log10(size) if size and size > 0 else np.nan,
    ])
    return SeriesContext(series, scales, medians, laws, summary)


def law_log_predictions(ctx: SeriesContext, p: FloatArray) -> dict[str, FloatArray]:
    """log runtime predicted by each fitted law; a law the series cannot determine
    (too few scales) stands in with Amdahl's prediction."""
    logs = {name: np.log(law.predict(p)) for name, law in ctx.laws.items()}
    for name in CANDIDATE_LAWS:
        logs.setdefault(name, logs["amdahl"])
    return logs


def feature_matrix(ctx: SeriesContext, p: FloatArray, base_log: FloatArray,
                   law_logs: dict[str, FloatArray]) -> FloatArray:
    """One feature row per query scale in ``p`` (order: :data:`FEATURE_NAMES`)."""
    n = p.size
    distance = np.log2(p / ctx.scale_max)
    columns = [distance, np.log2(p), *[np.full(n, v) for v in ctx.summary]]
    columns += [law_logs[name] - base_log for name in CANDIDATE_LAWS]
    return np.column_stack(columns)

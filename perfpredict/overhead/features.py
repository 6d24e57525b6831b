"""Features of a prediction problem: what a series' measured runs say about how it
scales, and how far beyond them a query reaches.

The overhead regressor never sees raw runtimes; it sees mostly what takes the same range
of values at 128 nodes as at 16384: the extrapolation distance, the shape of the measured
curve at its edge, how much the candidate laws disagree and how far the base law erred per
doubling for the application's other series. Two features are absolute scales
(``log2_scale``, ``log2_scale_max``), in which trees cannot extrapolate: beyond the
largest scale any training series reached, they answer as there. They stay because
without them the store-cut backtests passed one acceptance cell fewer (pooled MAPE 22.1%
to 23.0% in extrapolation though 21.1% to 20.4% in few-shot, RELeARN's few-shot coverage
0.88 to 0.67; docs/accuracy.md, "Tried and rejected").
"""

from __future__ import annotations

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.model.series import Series
from perfpredict.overhead.contexts import (
    CANDIDATE_LAWS,
    FALLBACK_LAW,
    SeriesContext,
    full_contexts,
)

__all__ = ["CANDIDATE_LAWS", "FEATURE_NAMES", "SUMMARY_NAMES", "SeriesContext", "fit_context",
           "law_log_predictions"]

#: A context's summary features (:attr:`SeriesContext.summary`, in this order): those
#: of the FEATURE_NAMES that do not depend on the query's scale.
SUMMARY_NAMES = (
    "log2_scale_max",
    "n_scales",
    "edge_slope",  # d log T / d log p between the two largest measured scales
    "mean_slope",  # over the whole measured range
    "curvature",  # edge slope minus first slope
    "noise_log",  # spread of repetitions at the largest scale (std of log runtime)
    "log2_io_bytes_per_node",  # median I/O per node at the largest scale (NaN: unknown)
    "weak",
    "log2_ranks_per_node",
    "threads_per_rank",
    "log10_problem_size",
    # log(law fitted without the largest measured scale / the median measured there)
    *(f"holdout_{name}" for name in CANDIDATE_LAWS),
)
FEATURE_NAMES = (
    "extrapolation_log2",  # log2(p / largest measured scale): 0 = at the edge
    "log2_scale",
    *SUMMARY_NAMES,
    *(f"law_{name}" for name in CANDIDATE_LAWS),  # log(law / base) at p
    # log c the application's other series suggest at this distance (their pooled
    # error of the base law per doubling beyond their measured range, shrunk toward 0)
    "app_prior_log",
    # log(power law with its exponent shrunk toward its application's / its own) at p
    # (perfpredict.overhead.shrinkage; 0 for weak scaling or without the evidence)
    "pooled_exponent_log",
)


def fit_context(series: Series) -> SeriesContext:
    """Fit every candidate law on the series (per-scale medians) and summarise its shape:
    training's bulk fit (:mod:`perfpredict.overhead.contexts`) on this one series."""
    index, batch = full_contexts([series])
    if not index.size:
        raise ValueError("a series needs at least two measured scales")
    return batch.context(0, series)


def law_log_predictions(ctx: SeriesContext, p: FloatArray) -> dict[str, FloatArray]:
    """log runtime predicted by each fitted law; a law the series cannot determine
    (too few scales) stands in with Amdahl's prediction."""
    logs = {name: np.log(law.predict(p)) for name, law in ctx.laws.items()}
    for name in CANDIDATE_LAWS:
        logs.setdefault(name, logs[FALLBACK_LAW])
    return logs

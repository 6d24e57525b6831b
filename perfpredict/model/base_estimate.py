"""The base every estimate starts from, and how it is moved onto the series' own runs.

    T_base(p) = geometric mean of Amdahl, Amdahl + log and the power law fitted to the
                series (beyond a strong-scaling series' range, the slope drift too),
                moved onto the runs measured around p

Inside the measured range the base is moved onto the runs at the scales around the
query, below it onto the smallest, beyond it (strong scaling) onto the median at the
largest, from where the learned correction is ramped in over one step of the series'
own spacing. Fixed work is never estimated faster than ideal scaling from there.
:mod:`perfpredict.model.runtime` multiplies this by the learned correction and puts the
interval around it; :mod:`perfpredict.model.nested` builds the training examples with the
same functions, so that training sees the base as an estimate reads it. Like the runtime
model, it imports nothing of training.
"""

from __future__ import annotations

import math

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.laws.drift import SlopeDrift
from perfpredict.overhead.contexts import FALLBACK_LAW
from perfpredict.overhead.features import CANDIDATE_LAWS, SeriesContext, law_log_predictions

#: The base every prediction starts from: the mean in log space, with equal and fixed
#: weights, of structurally different extrapolators (Amdahl flattens, Amdahl + log turns
#: up, the power law keeps scaling). Under the store-cut backtest
#: (bench/storecut_research.py) choosing one law per scaling kind by the pooled nested
#: error gave RELeARN 60% MAPE in extrapolation (it chose Gustafson: nested contexts of
#: two scales cannot fit Amdahl + log, so the choice was made on evidence unlike the
#: use), the ensemble 17%; on the five strong-scaling data sets the two were within
#: 1.1 points of each other in 9 of 10 (data set, split) cells. Beyond a strong-scaling
#: series' largest measured scale a fourth member joins with the same weight: the slope
#: drift (:mod:`perfpredict.laws.drift`), which continues the edge slope and turns it as
#: the training series' slopes turned. Chosen on the plain base in the research backtest
#: (its log-space mean with the three laws lowered the MAPE in 9 of the 10 strong-scaling
#: cells), then confirmed in the hybrid (``python -m bench.accuracy_benchmark``): pooled
#: MAPE 23.1 -> 22.1 in extrapolation and 22.6 -> 21.8 in few-shot, median APE 15.8 ->
#: 14.9 and 14.4 -> 13.4, MAPE lower or equal on every data set and split.
ENSEMBLE = ("amdahl", "amdahl_log", "power")
ENSEMBLE_NAME = "ensemble"
#: The base's members as a reader names them (the slope drift is its fourth).
LAW_LABELS = {"amdahl": "Amdahl", "amdahl_log": "Amdahl + log", "power": "power law",
              "slope_drift": "slope drift"}


def ensemble_members(law_logs: FloatArray, drift_log: FloatArray) -> FloatArray:
    """The ensemble's members' log runtimes from the candidate laws' (columns in
    :data:`CANDIDATE_LAWS` order) and the slope drift's (NaN where it does not take
    part: inside the measured range, weak scaling, a model without one): the
    :data:`ENSEMBLE` laws' columns, then the drift's."""
    return np.column_stack([law_logs[:, [CANDIDATE_LAWS.index(n) for n in ENSEMBLE]],
                            drift_log])


def ensemble_log(law_logs: FloatArray, drift_log: FloatArray) -> FloatArray:
    """The ensemble's log runtime: the mean of its members' (:func:`ensemble_members`)."""
    return np.nanmean(ensemble_members(law_logs, drift_log), axis=1)


def edge_offset_log(edge_law_logs: FloatArray, edge_log_runtime: FloatArray,
                    with_drift: np.ndarray) -> FloatArray:
    """Beyond a strong-scaling series' largest measured scale, what the base is moved by:
    the log median measured there less the base there (the mean of the laws' logs
    ``edge_law_logs``, columns in :data:`CANDIDATE_LAWS` order, and, ``with_drift``,
    of the slope drift's, which starts at that median), so that the base goes on from
    where the series is rather than from where its laws put it.

    Inside the measured range the base is moved onto the runs around the query
    (:func:`measured_offset_log`); beyond it, it was not, and the base stepped at the
    largest measured scale by its miss there: in log, a median of 0.04 and 0.20 or more
    for a tenth of the acceptance store's 360 strong-scaling series of three or more
    scales. (The learned correction is ramped in from there, :func:`correction_ramp`.)
    The move is added after the learned correction, which is learned as before: moving
    the laws themselves changed the correction's targets in the trees that weak scaling
    shares, and RELeARN's coverage with them (docs/accuracy.md, "Tried and rejected").
    The intervals are calibrated on the nested examples moved alike. Five store-cut
    backtests of three seeds (``python -m bench.accuracy_benchmark --seed-spread 5
    --repeats 3``): pooled MAPE 20.3% -> 20.1% (extrapolation) and
    20.0% -> 19.8% (few-shot), every strong-scaling data set's gap to its best baseline
    as wide or wider, the median-APE gaps that miss narrower (CP2K's in extrapolation
    +3.0 -> +1.6 points, MLPerf Training's +2.3 -> +2.1, VASP's few-shot +0.9 -> +0.6);
    coverage within 0.01 of before but Castro's (0.977 -> 0.984, 0.967 -> 0.976).
    """
    drift = np.where(with_drift, edge_log_runtime, np.nan)
    return edge_log_runtime - ensemble_log(edge_law_logs, drift)


def correction_ramp(distance: FloatArray, edge_spacing_log2: FloatArray) -> FloatArray:
    """The share of the learned correction applied ``distance`` doublings beyond a
    context's largest measured scale: rising linearly from 0 there to 1 one step of the
    context's own last spacing out (``edge_spacing_log2``: log2 of its largest scale over
    the one below; at most a doubling, a doubling where unknown).

    At the largest measured scale the estimate is the median measured there (beyond it a
    strong-scaling series' base goes on from that median, :func:`edge_offset_log`); one
    step of the series' spacing out is the nearest distance its own nested examples
    taught the trees, and closer than that only other series' closer-spaced ones did.
    Applied in full from just beyond the edge, the correction made the estimate step
    there: the bundled PencilFFTs 512^3 transform, measured at 0.0151 s on 8,192 ranks
    (204.8 nodes), was predicted 0.0120 s at 205 nodes and 0.0112 s at 256; ramped over
    its spacing of a doubling, 0.0151 s and 0.0130 s. The calibration examples are
    ramped alike; 2.8% of the acceptance store's nested extrapolation examples lie
    closer than one step (most series are spaced evenly, so test runs rarely do). Five
    store-cut backtests of three seeds (``python -m bench.accuracy_benchmark
    --seed-spread 5 --repeats 3``): no MAPE or median-APE gap moved by more than 0.3
    points, coverage by at most 0.012 (RELeARN's few-shot 0.860 -> 0.872, CP2K's 0.933
    -> 0.926 and 0.978 -> 0.983 in extrapolation); 16 cells, as before. Ramped over a
    whole doubling instead, the closely spaced series (Castro, VASP: 0.4-0.6 doublings)
    lost the correction their own examples had taught at their next scale
    (docs/accuracy.md, "Tried and rejected").

    What is ramped in is the trees' answer a step out, at every distance within the
    step (:meth:`RuntimeModel._point`). Read at the distance itself, the answer there
    was blended between the grid's point at the edge, a distance no nested example has
    (the trees answer there as for their nearest examples, other series' closer-spaced
    ones), and its point half a doubling out; a weak-scaling estimate, whose move onto
    the runs at its largest scale fades over the ramp as the correction takes over,
    dipped before rising (RELeARN's 5,000 neurons per rank: 1,275.8 s measured at 512
    ranks, 1,242.4 s at 640, 1,374.9 s at 1,024; now 1,307.5 s at 640). 19 of the
    bundled predictor's 26 weak-scaling series fell by more than 1% within a doubling,
    now 1, and 5 of its 129 strong-scaling series rose by more than 1% there, now 2.
    Five store-cut backtests of three seeds moved no gap by more than its standard
    deviation and no coverage; across the stores of ``--across-stores`` no pooled figure
    by more than 0.1 (docs/accuracy.md, "The ramp").
    """
    return np.clip(distance / ramp_step_log2(edge_spacing_log2), 0.0, 1.0)


def ramp_step_log2(edge_spacing_log2: FloatArray) -> FloatArray:
    """How far beyond its largest measured scale a context's ramps end
    (:func:`correction_ramp`): one step of its own last spacing, at most a doubling, a
    doubling where unknown."""
    return np.minimum(np.nan_to_num(edge_spacing_log2, nan=1.0), 1.0)


def context_spacing_log2(ctx: SeriesContext) -> float:
    """log2 of a context's largest measured scale over the one below (NaN: one scale)."""
    if ctx.scales.size < 2:
        return math.nan
    return float(np.log2(ctx.scale_max / ctx.scales[-2]))


def context_ramp_end_log2(ctx: SeriesContext) -> float:
    """How far beyond a context's largest measured scale its ramps end
    (:func:`ramp_step_log2` of its last spacing)."""
    return float(ramp_step_log2(np.asarray(context_spacing_log2(ctx))))


def ideal_log(ctx: SeriesContext, p: FloatArray) -> FloatArray:
    """Beyond a strong-scaling series' largest measured scale, the log runtime of ideal
    scaling from the median measured there, the fastest fixed work runs at each of ``p``
    (but for cache effects); -inf within the measured range.

    The estimate of fixed work is no faster. A series whose measured runs beat ideal
    scaling (1,000 s, 400 s and 150 s at 1, 2 and 4 nodes) had its laws carry the
    super-linear speed-up on without end: 6.0 s at 64 nodes where ideal scaling from 4
    gives 9.4 s, 6.1e-06 s at a million nodes (99 times faster than ideal), and
    ``advise`` chose the whole machine at an efficiency of 857%."""
    out = np.full(p.size, -np.inf)
    beyond = p > ctx.scale_max
    out[beyond] = np.log(ctx.medians_s[-1] * ctx.scale_max / p[beyond])
    return out


def measured_offset_log(lower_scale: FloatArray, lower_offset_log: FloatArray,
                        upper_scale: FloatArray, upper_offset_log: FloatArray,
                        scale: FloatArray) -> FloatArray:
    """At each ``scale`` between two measured scales, the base's miss there (log measured
    median less log base), interpolated linearly in log scale between the two.

    Inside the measured range the prediction is the base moved onto the series' own runs
    at the measured scales around the query: the laws fitted to the whole series miss
    its local level (a cache effect, a change of decomposition, a law that cannot bend
    as the series does), and the runs at the neighbouring scales measure it. Regression
    with interpolated residuals, as kriging with a trend. On the random split of the
    acceptance store (``evaluate --split random``, store cut, seeds 0-2: 2,196 test runs
    strictly inside their context's range), the base alone erred 13.6% on average,
    moved onto the measured runs 11.8% (median 8.1% -> 6.2%): RELeARN 12.9% -> 5.2%,
    CP2K 12.5% -> 9.6%, VASP 16.6% -> 14.4%, Castro 10.0% -> 9.2%, MLPerf Training 9.9%
    -> 10.2% and PencilFFTs 10.7% -> 11.1% (their medians are noisier); the log-log line
    between the two neighbouring runs alone erred 19.1%, the laws' curvature between
    measured scales matters. Beyond the measured range a strong-scaling series' base is
    moved onto the runs at its largest scale (:func:`edge_offset_log`).
    """
    position = np.log(scale / lower_scale) / np.log(upper_scale / lower_scale)
    return lower_offset_log + position * (upper_offset_log - lower_offset_log)


def drift_log(drift: SlopeDrift | None, strong: np.ndarray, scale: FloatArray,
              scale_max: FloatArray, edge_log_runtime: FloatArray,
              edge_slope: FloatArray) -> FloatArray:
    """The slope drift's log runtime (:class:`perfpredict.laws.drift.SlopeDrift`) at
    each ``scale`` beyond its context's largest measured scale, in a ``strong``-scaling
    series; NaN elsewhere, and everywhere without a drift."""
    out = np.full(scale.shape, np.nan)
    use = strong & (scale > scale_max)
    if drift is not None and use.any():
        out[use] = drift.predict_log(np.log(scale_max[use]), edge_log_runtime[use],
                                     edge_slope[use], scale[use])
    return out


def measured_offset_at(ctx: SeriesContext, p: FloatArray, strong: bool,
                        with_drift: bool) -> FloatArray:
    """What the base is moved by at each of ``p``: inside the context's measured range
    :func:`measured_offset_log` (at a measured scale itself, onto the measured median);
    below it, the miss at the smallest measured scale; beyond it, in a ``strong``-scaling
    series, :func:`edge_offset_log` (``with_drift``: the base has a slope drift), in a
    weak-scaling one nothing.

    Below the measured range the laws' shape is kept from where the smallest measured
    runs are, as inside: with each series' smallest scale left out and predicted from
    the rest (every series of four or more scales in the acceptance store, 504 runs,
    ``python -m bench.interpolation_benchmark``), the laws' mean erred 19.9% on average,
    moved by the miss at the next measured scale 15.8%, lower on every data set but
    MLPerf Training (13.9% -> 15.3%; its median 11.9% -> 11.2%); an estimate no longer
    steps at the smallest measured scale.
    """
    offset = np.zeros(p.size)
    moved = p <= ctx.scale_max
    if ctx.scales.size < 2:
        return offset
    logs = law_log_predictions(ctx, ctx.scales)
    law_matrix = np.column_stack([logs[name] for name in CANDIDATE_LAWS])
    offset[p > ctx.scale_max] = edge_offset_log(
        law_matrix[-1:], np.log(ctx.medians_s[-1:]), np.array([strong and with_drift]))[0]
    if not moved.any():
        return offset
    measured = np.log(ctx.medians_s) - ensemble_log(law_matrix,
                                                    np.full(ctx.scales.size, np.nan))
    at = np.maximum(p[moved], ctx.scales[0])  # below the range: the smallest scale's miss
    upper = np.clip(np.searchsorted(ctx.scales, at), 1, ctx.scales.size - 1)
    lower = upper - 1
    offset[moved] = measured_offset_log(ctx.scales[lower], measured[lower],
                                        ctx.scales[upper], measured[upper], at)
    return offset


def formula(ctx: SeriesContext, law: str, with_drift: bool = False,
            measured_at: tuple[float, ...] = ()) -> str:
    """The fitted law ``law`` (or the ensemble) of a series, as a human-readable formula;
    ``with_drift``: the prediction is of a strong-scaling series beyond its measured range,
    where the pooled slope drift is a member of the mean too; ``measured_at``: the
    measured scales the prediction was moved onto (:func:`measured_neighbours`).

    A member the series has too few scales to determine is named with the law that
    stands in for it (:func:`perfpredict.overhead.features.law_log_predictions`), which
    then counts twice: "geometric mean of [Amdahl], [power law]" for a series of two
    scales had a reader take the square root of two laws' product, where the estimate
    is the cube root of Amdahl's squared times the power law's."""
    if law != ENSEMBLE_NAME:
        return ctx.laws[law].formula()
    members = [f"[{ctx.laws[name].formula().removeprefix('T(p) = ')}]" if name in ctx.laws
               else (f"[{ctx.laws[FALLBACK_LAW].formula().removeprefix('T(p) = ')}] again, "
                     f"in place of {LAW_LABELS[name]} ({ctx.scales.size} measured scales "
                     "cannot determine it)")
               for name in ENSEMBLE]
    if with_drift:
        members.append("the pooled slope drift from the largest measured scale")
    text = "T(p) = geometric mean of " + ", ".join(members)
    if measured_at:
        unit = ctx.series.scale_unit
        text += (", moved onto the runs measured at "
                 f"{' and '.join(f'{s:g}' for s in measured_at)} "
                 f"{unit.removesuffix('s') if measured_at == (1.0,) else unit}")
    return text


def measured_neighbours(ctx: SeriesContext, scale: float,
                        strong: bool) -> tuple[float, ...]:
    """The measured scales a prediction at ``scale`` is moved onto
    (:func:`measured_offset_at`): the scale itself where it was measured, the two around
    it inside the measured range, the smallest below it, the largest beyond it in a
    ``strong``-scaling series (none in a weak-scaling one)."""
    if scale > ctx.scale_max:
        return (ctx.scale_max,) if strong and ctx.scales.size >= 2 else ()
    if scale < ctx.scale_min:
        return (ctx.scale_min,)
    upper = int(np.searchsorted(ctx.scales, scale))
    if ctx.scales[upper] == scale:
        return (float(scale),)
    return float(ctx.scales[upper - 1]), float(ctx.scales[upper])


__all__ = ["ENSEMBLE", "ENSEMBLE_NAME", "LAW_LABELS", "context_ramp_end_log2",
           "context_spacing_log2", "correction_ramp", "drift_log", "edge_offset_log",
           "ensemble_log", "ensemble_members", "formula", "ideal_log", "measured_neighbours",
           "measured_offset_at", "measured_offset_log", "ramp_step_log2"]

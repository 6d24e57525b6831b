"""Answering: the trained runtime model, as an estimate reads it from an artifact.

    T(p) = T_base(p) * c(features),   log c from the overhead trees

with T_base the laws' mean moved onto the series' own runs (:mod:`perfpredict.model.
base_estimate`); beyond the measured range, where other series of the same input measured
the scale asked for, that weighed in log space with their measured speed-up
(:data:`PEER_WEIGHT`), its interval narrowed where two or more did
(:data:`PEER_INTERVAL_SCALE`).

:class:`RuntimeModel` holds what training (:mod:`perfpredict.model.fit`) learned: the
overhead and spread trees as tree tables (:mod:`perfpredict.overhead.trees`), the
conformal quantiles by distance, the application evidence and the noise floor. It
predicts, gives quantiles and exceedance probabilities, and round-trips through JSON. It
imports nothing of training (no xgboost, no scikit-learn, no pandas): every estimate
imports this module, and ``tests/cli/test_startup.py`` holds it to that.

Facts an estimate should tell the user (a new application, a calibration on few series,
a query beyond the calibrated distances, a noise floor) are returned as fields and
predicates; the estimate layer writes the English.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.laws.drift import SlopeDrift
from perfpredict.model.base_estimate import (
    ENSEMBLE_NAME,
    context_ramp_end_log2,
    correction_ramp,
    drift_log,
    ensemble_members,
    ideal_log,
    measured_offset_at,
)
from perfpredict.model.peers import PeerCurves, PeerSpeedup
from perfpredict.model.series import Series
from perfpredict.overhead.features import (
    CANDIDATE_LAWS,
    FEATURE_NAMES,
    SUMMARY_NAMES,
    SeriesContext,
    fit_context,
    law_log_predictions,
)
from perfpredict.overhead.shrinkage import line_moments, pooled_exponent_log
from perfpredict.overhead.trees import TreeEnsemble
from perfpredict.packed import ReadByName
from perfpredict.uncertainty.conformal import TAIL_CONFIDENCES, DistanceConformal
from perfpredict.uncertainty.noise import NoiseFloor

KINDS = ("strong", "weak")
#: The shrinkage of an application's evidence toward c = 1, in doublings: its rate is
#: sum(w * log error) / (sum(w * doublings) + APP_PRIOR_DOUBLINGS), so an application
#: whose series have extrapolated little or once suggests little.
APP_PRIOR_DOUBLINGS = 2.0
#: Beyond a strong-scaling series' measured range, where other series of its application
#: and input measured both its largest scale and the scale asked for
#: (:mod:`perfpredict.model.peers`), the prediction is the mean in log space, with this
#: weight on the peers, of the hybrid's and of the series' own runtime at its largest
#: scale times the peers' median speed-up from there: two kinds of evidence, one from the
#: series' own curve and what the store learned of curves like it, one measured at the
#: scale asked for, weighed alike as the base weighs its members. Fixed, not learned, for
#: the reason the base's weights are (see :data:`perfpredict.model.base_estimate.
#: ENSEMBLE`). Under the store-cut backtest (three seeds, ``python -m
#: bench.accuracy_benchmark --across-stores``) it lowered the pooled MAPE in every store
#: row (acceptance store 22.1 -> 21.2 extrapolation, 20.9 -> 20.4 few-shot; HPC data sets
#: alone 21.7 -> 21.1, 21.2 -> 20.5; one data set left out 24.2 -> 22.7, 25.0 -> 23.0)
#: and raised no data set's by more than 0.1 point; those without peers (RELeARN, CP2K,
#: PencilFFTs) do not move. As a member of the base, where the correction and spread
#: trees learn around it, it moved weak scaling's predictions through the trees the two
#: kinds share (RELeARN few-shot coverage 0.88 -> 0.74).
PEER_WEIGHT = 0.5
#: Where two or more peers weigh in (:data:`PEER_INTERVAL_MIN_PEERS`), the interval's
#: log half-widths are the hybrid's times this: sqrt((1 - w)^2 + w^2) for the weight
#: w = :data:`PEER_WEIGHT`, the spread of the blend's log error when its two estimates
#: err independently and alike, which is what equal weights assume (0.71). The
#: intervals are calibrated on the hybrid alone; with its width kept, the strong-scaling
#: test runs with two or more peers had a 90th percentile of |log error| over the
#: half-width of 0.16-0.61 on every data set, split and store measured (five store-cut
#: backtests of three seeds, and one with each data set left out; 0.56 and 0.58 pooled in
#: extrapolation and few-shot), below 0.71 throughout. A fixed consequence of the weight,
#: not a ratio estimated from the nested examples with peers, which moved with the seed
#: (0.75-0.81 in extrapolation, 0.92-1.10 in few-shot; docs/accuracy.md, "Intervals
#: where peers weigh in").
PEER_INTERVAL_SCALE = math.hypot(1.0 - PEER_WEIGHT, PEER_WEIGHT)
#: Fewest peers for the narrowing: one peer's speed-up carries its one system's or
#: build's departures in full, and its blends erred as widely as the hybrid alone (the
#: same percentile 0.23-1.03: 0.84 for MLPerf Training's few-shot runs in the store-cut
#: backtests, 0.86 and 1.03 with MLPerf left out, where narrowing them brought its
#: few-shot coverage from 0.91 to 0.77); the median of two or more did not.
PEER_INTERVAL_MIN_PEERS = 2
#: What training calibrated a scaling kind's intervals on (:attr:`RuntimeModel.calibrated_by`).
CALIBRATED_BY = ("application", "series")


#: Beyond the measured range the trees are read at distances on this grid (doublings
#: beyond the largest measured scale) and blended between them
#: (:meth:`RuntimeModel._smooth_beyond`): half a doubling, the closest spacing that
#: series commonly have (Castro's and VASP's 0.4-0.6), so that the trees are read no
#: finer than their nested examples taught them.
TREE_GRID_LOG2 = 0.5


def kind_of(series: Series) -> str:
    return "weak" if series.weak else "strong"


def repeat_at_measured_scale(ctx: SeriesContext, p: FloatArray) -> np.ndarray:
    """Which of ``p`` are scales the series measured, where its own repeats
    (:class:`perfpredict.uncertainty.noise.RepeatNoise`) are enough to say how far a
    repeat lands: there the estimate is the median of the runs measured, and the
    interval is their noise rather than a law's miss between scales."""
    if not ctx.repeat_noise.decides:
        return np.zeros(p.size, dtype=bool)
    at = np.minimum(np.searchsorted(ctx.scales, p), ctx.scales.size - 1)
    return np.asarray(ctx.scales[at] == p)


def ideal_floor_log(ctx: SeriesContext, p: FloatArray, runtime_s: FloatArray,
                    edge_lower_s: float) -> FloatArray:
    """The lowest a strong-scaling interval of fixed work reaches at each of ``p``, in log
    relative to the estimate ``runtime_s``: beyond the largest measured scale, ideal
    scaling from the lower bound of the interval there (``edge_lower_s``: the fastest a
    rerun at that scale plausibly runs), or the estimate where that lies above ideal;
    -inf within the measured range.

    A fixed amount of work does not run faster than ideal scaling from where it was
    measured, but for cache effects and the noise of a run: the interval is for a new
    run, as fast as a rerun at the largest scale might be and faster than its median.
    The conformal lower side, calibrated on nested extrapolations whose codes kept
    scaling (and on MLPerf's time-to-train, which may beat ideal: Series.fixed_work),
    reached below ideal scaling: the bundled Castro wdmerger series on Frontier,
    measured to 512 nodes, read 96.4 s [14.5-510.6 s] at 4,096 nodes, where ideal
    scaling from its 205.5 s at 512 nodes is 25.7 s. Started from the median instead,
    the bound rose at once past the largest scale above the interval's own lower bound
    there (a series measured once at 32 nodes: 104.5-265.3 s at 32, 164.8-269.7 s at
    33), an interval narrower one node beyond the measurements than at them
    (docs/accuracy.md, "The parts")."""
    floor = np.full(p.size, -np.inf)
    beyond = p > ctx.scale_max
    ideal_s = edge_lower_s * ctx.scale_max / p[beyond]
    floor[beyond] = np.minimum(np.log(ideal_s / runtime_s[beyond]), 0.0)
    return floor


def features(summary: FloatArray, scale: FloatArray, scale_max: FloatArray,
             law_logs: FloatArray, base_log: FloatArray, app_rate: FloatArray,
             pooled_exponent_log: FloatArray) -> FloatArray:
    """The rows of :data:`FEATURE_NAMES`; ``app_rate``: the application's log error of
    the base per doubling (:meth:`RuntimeModel.app_rate`) for each row;
    ``pooled_exponent_log``: what the application's power-law exponent changes in the
    series' own power law (:meth:`RuntimeModel.pooled_exponent_log`) there."""
    distance = np.log2(scale / scale_max)
    return np.column_stack([distance, np.log2(scale), summary, law_logs - base_log[:, None],
                            app_rate * np.maximum(distance, 0.0), pooled_exponent_log])


class Prediction(NamedTuple):
    runtime_s: float
    lower_s: float
    upper_s: float
    law: str
    overhead_coefficient: float
    extrapolation_log2: float
    beyond_calibration: bool
    noise_floor: bool
    peer_series: int
    at_widest_error: bool


class Predictions(NamedTuple):
    """Predictions at many scales of one series, as columns: a batch estimate writes
    them as they are, without one :class:`Prediction` object per query.

    ``beyond_calibration``: the scale lies farther beyond the measured range than any
    calibration residual did, so the interval was widened in proportion to the
    distance. ``noise_floor``: the series has one run per scale, and its interval was
    widened to the run-to-run noise of series that have repeats. ``peer_series``: how
    many other series of the application and input measured the speed-up from the
    series' largest scale to the scale asked for (:data:`PEER_WEIGHT`; 0: none did).
    ``at_widest_error``: the confidence is beyond what the calibration residuals at that
    distance resolve (:attr:`~perfpredict.uncertainty.conformal.ScoreBounds.at_widest`),
    so the interval is as wide as the widest of them, and may be too narrow.
    """

    runtime_s: FloatArray
    lower_s: FloatArray
    upper_s: FloatArray
    law: str
    overhead_coefficient: FloatArray
    extrapolation_log2: FloatArray
    beyond_calibration: np.ndarray  # bool
    noise_floor: np.ndarray  # bool
    peer_series: np.ndarray  # int
    at_widest_error: np.ndarray  # bool

    def rows(self) -> list[Prediction]:
        """One :class:`Prediction` per scale, as :meth:`RuntimeModel.predict` returns."""
        return [Prediction(runtime_s=r, lower_s=lo, upper_s=up, law=self.law,
                           overhead_coefficient=c, extrapolation_log2=d, beyond_calibration=b,
                           noise_floor=f, peer_series=n, at_widest_error=w)
                for r, lo, up, c, d, b, f, n, w in zip(
                    self.runtime_s.tolist(), self.lower_s.tolist(), self.upper_s.tolist(),
                    self.overhead_coefficient.tolist(), self.extrapolation_log2.tolist(),
                    self.beyond_calibration.tolist(), self.noise_floor.tolist(),
                    self.peer_series.tolist(), self.at_widest_error.tolist(), strict=True)]


class PointParts(NamedTuple):
    """What a point prediction is made of, per scale, in log runtime:
    ``base_log + offset_log + correction_log`` is ``hybrid_log``; weighed with the peers'
    ``peer_log`` (``peer_weight`` on it) it is ``blended_log``; for fixed work beyond the
    measured range no faster than ideal scaling
    (:func:`~perfpredict.model.base_estimate.ideal_log`), ``runtime_log``, the prediction. Kept
    as :meth:`RuntimeModel._point` computes them, so that an estimate explained step by
    step multiplies out to the estimate itself."""

    #: The base's members (:func:`~perfpredict.model.base_estimate.ensemble_members`: the
    #: :data:`~perfpredict.model.base_estimate.ENSEMBLE` laws as the base reads them, a
    #: law the series has too few scales to determine standing in with Amdahl's, then
    #: the slope drift, NaN where it takes no part); their mean, NaNs left out, is
    #: ``base_log``.
    member_logs: FloatArray
    base_log: FloatArray
    #: The move onto the measured runs
    #: (:func:`~perfpredict.model.base_estimate.measured_offset_at`; a weak-scaling
    #: series' beyond its range times one less the ramp).
    offset_log: FloatArray
    #: The correction trees' answer (0 where the scaling kind is not corrected) and the
    #: share of it applied (:func:`~perfpredict.model.base_estimate.correction_ramp`): their
    #: product is ``correction_log``.
    learned_log: FloatArray
    ramp: FloatArray
    correction_log: FloatArray
    hybrid_log: FloatArray
    #: The weight on the peers' estimate (:data:`PEER_WEIGHT` times the chance that some
    #: peer weighs in; 0 without) and that estimate: the median runtime at the largest
    #: measured scale times the peers' median speed-up (NaN where no peers were asked).
    peer_weight: FloatArray
    peer_log: FloatArray
    #: What the peers said, per peer and scale (None: no peers asked, or weak scaling).
    peers: PeerSpeedup | None
    blended_log: FloatArray
    runtime_log: FloatArray
    #: What the interval's log half-widths are multiplied by for the peers
    #: (:data:`PEER_INTERVAL_SCALE` where two or more weigh in, 1 without).
    narrowed: FloatArray


class _Point(NamedTuple):
    """What every interval and probability of a series at some scales rests on."""

    runtime_s: FloatArray  # the point prediction
    spread: FloatArray  # the predicted spread of the log residual (PEER_INTERVAL_SCALE)
    distance: FloatArray  # doublings beyond the largest measured scale
    correction: FloatArray  # log c
    peer_series: np.ndarray  # the peers the point leans on (PEER_WEIGHT), per scale
    conformal: DistanceConformal
    floored: bool  # one run per scale: the noise floor applies
    #: Per scale, the spread one doubling beyond the largest measured scale: farther
    #: out, the interval is that doubling's times the distance
    #: (RuntimeModel.predict_columns). Like ``spread``, narrowed where two or more peers
    #: weigh in (:data:`PEER_INTERVAL_SCALE`).
    reference_spread: FloatArray
    parts: PointParts


@dataclass
class RuntimeModel:
    """A trained hybrid: ``predict(series, scales)`` extrapolates one series (its
    measured runs are the context) to new scales, with intervals;
    ``exceedance(series, scales, walltime_s)`` is the probability of running longer."""

    apply_correction: dict[str, bool]
    app_evidence: dict[str, tuple[float, float, int]]
    conformal: dict[str, DistanceConformal]
    calibrated_by: dict[str, str]  # per kind, one of CALIBRATED_BY
    #: Per kind; one ensemble for both unless a store that borrows learned weak
    #: scaling's apart (:meth:`perfpredict.model.fit.HybridPredictor._borrows_wholly`).
    correction_trees: dict[str, TreeEnsemble]
    #: Per way of calibrating (:data:`CALIBRATED_BY`) that some kind uses.
    spread_trees: dict[str, TreeEnsemble]
    noise_floor: NoiseFloor
    n_series: int
    n_examples: int
    n_series_by_kind: dict[str, int]
    min_series_for_calibration: int
    metrics: dict[str, float]
    #: The base's fourth member, for strong scaling (None: the three laws alone).
    drift: SlopeDrift | None = None
    #: Per strong-scaling application with enough series to learn half of its
    #: correction alone, beside other applications: that correction, in place of the
    #: kind's (:meth:`perfpredict.model.fit.HybridPredictor._apps_learning_alone`);
    #: empty in a store of one application, and in artifacts from before it.
    app_correction_trees: Mapping[str, TreeEnsemble] = field(default_factory=dict)
    #: Per application, the power-law exponent evidence of its strong-scaling series
    #: (:data:`perfpredict.overhead.shrinkage.SUM_NAMES`); empty (an artifact from
    #: before it): the feature is 0, which its trees never read.
    exponent_evidence: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def pooled_exponent_log(self, series: Series, ctx: SeriesContext,
                            p: FloatArray) -> FloatArray:
        """log(power law with the series' exponent shrunk toward its application's / its
        own power law) at each of ``p`` (:mod:`perfpredict.overhead.shrinkage`); 0 for
        weak scaling and an application without exponent evidence. The series asked
        about draws on all of its application's evidence, its own included, as
        :meth:`app_rate` does."""
        sums = self.exponent_evidence.get(series.key.app)
        if series.weak or sums is None:
            return np.zeros(p.size)
        x_mean, sxx, exponent, _ = line_moments(np.log(ctx.scales), np.log(ctx.medians_s),
                                                np.zeros(1, dtype=np.int64),
                                                np.array([ctx.scales.size]))
        n = p.size
        return pooled_exponent_log(np.repeat(exponent, n), np.repeat(sxx, n),
                                   np.repeat(x_mean, n), np.log(p), np.tile(sums, (n, 1)))

    def _rows(self, series: Series, ctx: SeriesContext, p: FloatArray,
              kind: str) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The feature rows (:func:`features`) at each of ``p``, the base's log runtime
        there, and its members' (:func:`~perfpredict.model.base_estimate.ensemble_members`),
        whose mean it is."""
        logs = law_log_predictions(ctx, p)
        law_matrix = np.column_stack([logs[name] for name in CANDIDATE_LAWS])
        n = p.size
        members = ensemble_members(law_matrix, drift_log(
            self.drift, np.full(n, kind == "strong"), p, np.full(n, ctx.scale_max),
            np.full(n, np.log(ctx.medians_s[-1])),
            np.full(n, ctx.summary[SUMMARY_NAMES.index("edge_slope")])))
        base_log = np.nanmean(members, axis=1)
        # a new application trained with no other series' evidence, so it answers so
        app_rate = 0.0 if self.is_new_app(series.key.app) else self.app_rate(series.key.app)
        return features(np.tile(ctx.summary, (n, 1)), p, np.full(n, ctx.scale_max),
                        law_matrix, base_log, np.full(n, app_rate),
                        self.pooled_exponent_log(series, ctx, p)), base_log, members

    def _smooth_beyond(self, series: Series, ctx: SeriesContext, kind: str,
                       rows: FloatArray, trees: list[TreeEnsemble]) -> list[FloatArray]:
        """Each of ``trees``' answers at ``rows``, beyond the measured range read off the
        grid of :data:`TREE_GRID_LOG2` and blended linearly in the distance between the
        two grid points around it.

        Trees answer in steps: split by split in the distance and in the laws' values,
        which move with the scale, the bundled predictor's estimates jumped by 0.07 in
        log (median over its 129 strong-scaling series; up to 0.20) between node counts
        1/256 of a doubling apart, and 97 of those series rose and fell again within
        four doublings as the node count grew (14 without the correction: peers
        joining). Read off the grid and blended, the answer is continuous in the node
        count and the trees' own on the grid: 28 series rise and fall (21 on a grid of
        a whole doubling, 36 of a quarter), the largest step over 1/256 of a doubling
        0.007. The acceptance backtests' test runs lie mostly on whole doublings, where
        nothing changes: five backtests of three seeds moved no coverage by more than
        0.002 and no MAPE or median-APE gap by more than 0.2 points (docs/accuracy.md,
        "The trees read on a grid of half doublings")."""
        distance = rows[:, 0]
        beyond = distance > 0
        if not beyond.any():
            return [t.predict(rows) for t in trees]
        low = np.floor(distance[beyond] / TREE_GRID_LOG2) * TREE_GRID_LOG2
        share = (distance[beyond] - low) / TREE_GRID_LOG2
        # the few grid points a batch's scales fall between, each read once
        grid, around = np.unique(np.concatenate([low, low + TREE_GRID_LOG2]),
                                 return_inverse=True)
        grid_rows = self._rows(series, ctx, ctx.scale_max * 2.0 ** grid, kind)[0]
        below, above = around[:low.size], around[low.size:]
        answers = []
        for t in trees:
            answer = np.empty(distance.size)
            if (~beyond).any():
                answer[~beyond] = t.predict(rows[~beyond])
            on_grid = t.predict(grid_rows)
            answer[beyond] = (1.0 - share) * on_grid[below] + share * on_grid[above]
            answers.append(answer)
        return answers

    def _point(self, series: Series, p: FloatArray, ctx: SeriesContext,
               peers: PeerCurves | None) -> _Point:
        step_log2 = context_ramp_end_log2(ctx)
        # and, last, the reference doubling and the end of the ramp
        p = np.append(p, ctx.scale_max * 2.0 ** np.array([1.0, step_log2]))
        kind = kind_of(series)
        n = p.size
        rows, base_log, member_logs = self._rows(series, ctx, p, kind)
        distance = rows[:, 0]
        spread_trees = self.spread_trees[self.calibrated_by[kind]]
        correction = learned = np.zeros(n)
        ramp = correction_ramp(distance, np.asarray(step_log2))
        if self.apply_correction[kind]:
            trees = self.correction_trees[kind]
            if kind == "strong":
                trees = self.app_correction_trees.get(series.key.app, trees)
            learned, log_spread = self._smooth_beyond(series, ctx, kind, rows,
                                                      [trees, spread_trees])
            # within the ramp, the correction a step out (correction_ramp)
            learned = np.where(distance < step_log2, learned[-1], learned)
            correction = learned * ramp
        else:
            (log_spread,) = self._smooth_beyond(series, ctx, kind, rows, [spread_trees])
        spread = np.exp(log_spread)
        # the base moved onto the measured runs: beyond the range onto those at its
        # largest scale, a weak-scaling series' only until the correction takes over
        offset = measured_offset_at(ctx, p, strong=kind == "strong",
                                     with_drift=self.drift is not None)
        if kind == "weak":
            offset = np.where(distance > 0, offset * (1.0 - ramp), offset)
        runtime_log = hybrid_log = base_log + correction + offset
        n_peers = np.zeros(n, dtype=np.int64)
        narrowed = np.ones(n)
        said, weight, peer_log = None, np.zeros(n), np.full(n, np.nan)
        if peers is not None and kind == "strong":
            said = peers.log_speedup(series.key, series.scale_unit, ctx.scale_max, p)
            beyond = distance > 0
            n_peers = np.where(beyond, said.n_peers, 0)
            # a fading peer weighs in with the chance that it does (PeerSpeedup)
            weight = PEER_WEIGHT * np.where(beyond, said.presence, 0.0)
            peer_log = np.log(ctx.medians_s[-1]) + np.nan_to_num(said.log_speedup)
            runtime_log = (1.0 - weight) * runtime_log + weight * peer_log
            narrowed -= (np.where(beyond, said.at_least(PEER_INTERVAL_MIN_PEERS), 0.0)
                         * (1.0 - PEER_INTERVAL_SCALE))
        blended_log = runtime_log
        if kind == "strong" and series.fixed_work:
            runtime_log = np.maximum(runtime_log, ideal_log(ctx, p))
        narrowed = narrowed[:-2]
        parts = PointParts(
            member_logs=member_logs[:-2], base_log=base_log[:-2], offset_log=offset[:-2],
            learned_log=learned[:-2], ramp=ramp[:-2], correction_log=correction[:-2],
            hybrid_log=hybrid_log[:-2], peer_weight=weight[:-2], peer_log=peer_log[:-2],
            peers=said, blended_log=blended_log[:-2], runtime_log=runtime_log[:-2],
            narrowed=narrowed)
        return _Point(runtime_s=np.exp(runtime_log)[:-2], spread=spread[:-2] * narrowed,
                      distance=distance[:-2], correction=correction[:-2],
                      peer_series=n_peers[:-2], conformal=self.conformal[kind],
                      floored=not ctx.repeated,
                      reference_spread=spread[-2] * narrowed, parts=parts)

    def point_parts(self, series: Series, scales: FloatArray,
                    ctx: SeriesContext | None = None,
                    peers: PeerCurves | None = None) -> PointParts:
        """What the point prediction at each of ``scales`` is made of
        (:class:`PointParts`), from the one computation :meth:`predict_columns` makes
        too: what an estimate explained step by step reads
        (:mod:`perfpredict.estimate.explain`)."""
        ctx = ctx or fit_context(series)
        return self._point(series, np.asarray(scales, dtype=float), ctx, peers).parts

    def predict(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                ctx: SeriesContext | None = None,
                peers: PeerCurves | None = None) -> list[Prediction]:
        """Predictions for ``series`` (its runs as context) at each of ``scales``;
        ``peers``: the store's measured curves, of which those of other series of its
        application and input weigh in beyond its measured range (:data:`PEER_WEIGHT`)."""
        return self.predict_columns(series, scales, confidence, ctx, peers).rows()

    def predict_columns(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                        ctx: SeriesContext | None = None,
                        peers: PeerCurves | None = None) -> Predictions:
        """:meth:`predict` as columns, one vectorised pass for all of ``scales``.

        Every value depends on the scale alone, and a batch asks for the same few scales
        of a series many times over, so each distinct scale is predicted once.
        """
        ctx = ctx or fit_context(series)
        scales = np.asarray(scales, dtype=float)
        # beyond the measured range, fixed work's floor starts from the interval at
        # the largest measured scale (ideal_floor_log), and within the ramp the interval
        # is blended between that one and the interval one step out (below): those are
        # predicted alongside
        floor_ideal = bool(not series.weak and series.fixed_work
                           and (scales > ctx.scale_max).any())
        step_scale = ctx.scale_max * 2.0 ** context_ramp_end_log2(ctx)
        in_ramp = bool(((scales > ctx.scale_max) & (scales < step_scale)).any())
        alongside = ([ctx.scale_max] if floor_ideal or in_ramp else []) + (
            [step_scale] if in_ramp else [])
        p, inverse = np.unique(np.append(scales, alongside), return_inverse=True)
        inverse = inverse[:scales.size]
        point = self._point(series, p, ctx, peers)
        bands = [point.conformal.bounds(max(float(d), 0.0), confidence)
                 for d in point.distance]
        lower_log = np.array([b.lower for b in bands]) * point.spread
        upper_log = np.array([b.upper for b in bands]) * point.spread
        at_widest = np.array([b.at_widest for b in bands], dtype=bool)
        # Beyond one doubling, the one-doubling interval times the distance, not the
        # farther distance bins times the spread there: a slope misjudged by delta errs
        # by delta * d in log runtime at d doublings, and the store says so itself (the
        # 90th percentile of the calibration residuals' |log error| grows as d^1.07-1.10
        # under the store-cut cuts of bench/storecut_research.py). The far bins, by
        # contrast, come from 4-8 applications and their normalised scores grew with
        # distance on top of the spread trees' own growth (95% score 2.3 within two
        # doublings, 9.9 at two to three), so the two counted the growth twice: at two
        # to three doublings the intervals held every test run. Under the store-cut
        # backtest (python -m bench.accuracy_benchmark) this rule narrows the median
        # 90% interval (pooled 1.46 -> 1.33 extrapolate, 1.35 -> 1.29 few-shot) and
        # brings over-covered data sets toward 0.90 (MLPerf few-shot 0.98 -> 0.96,
        # CP2K 0.98 -> 0.96, Castro extrapolate 0.97 -> 0.95), none below 0.86.
        far = point.distance > 1.0
        if far.any():
            one = point.conformal.bounds(1.0, confidence)
            scale = point.reference_spread * point.distance
            lower_log = np.where(far, one.lower * scale, lower_log)
            upper_log = np.where(far, one.upper * scale, upper_log)
            at_widest = np.where(far, one.at_widest, at_widest)
        floored = np.zeros(p.size, dtype=bool)
        if point.floored:
            half_width = self.noise_floor.half_width_log(confidence, series.key.app)
            floored = (upper_log < half_width) | (lower_log > -half_width)
            lower_log = np.minimum(lower_log, -half_width)
            upper_log = np.maximum(upper_log, half_width)
        repeat = repeat_at_measured_scale(ctx, p)
        if repeat.any():  # a repeat's noise, where the series' own repeats tell it
            own = ctx.repeat_noise.half_width_log(confidence)
            if own is None:  # too few to hold the confidence: no narrower than they
                own_lower = np.minimum(lower_log, -ctx.repeat_noise.largest_log)
                own_upper = np.maximum(upper_log, ctx.repeat_noise.largest_log)
            else:
                own_lower, own_upper = np.full(p.size, -own), np.full(p.size, own)
                at_widest &= ~repeat
            lower_log = np.where(repeat, own_lower, lower_log)
            upper_log = np.where(repeat, own_upper, upper_log)
        if in_ramp:
            # Within the ramp the estimate goes from the median measured at the largest
            # scale to the corrected one a step out (correction_ramp), and the interval
            # with it: from the one there (the repeats' noise, or the noise floor) to the
            # calibrated one a step out, its log bounds blended by the same share. Read
            # off the spread trees there instead, it was as wide just past the edge as
            # a doubling out, and wider than that for weak scaling (the trees' answers
            # between the range's inside and half a doubling blended): RELeARN's
            # interval stepped from +-0.5% at 512 ranks to 1,136-1,481 s around 1,272 s
            # at 520, and narrowed to 1,166-1,378 s at 768. The nearest distance a
            # series' own nested examples calibrate is a step out; closer, the error of
            # a slope misjudged grows with the distance, as beyond a doubling
            # (the far rule above).
            share = point.parts.ramp
            ramped = (point.distance > 0) & (share < 1)
            edge, out = np.searchsorted(p, [ctx.scale_max, step_scale])
            lower_log = np.where(ramped, (1 - share) * lower_log[edge]
                                 + share * lower_log[out], lower_log)
            upper_log = np.where(ramped, (1 - share) * upper_log[edge]
                                 + share * upper_log[out], upper_log)
        if floor_ideal:
            edge = int(np.searchsorted(p, ctx.scale_max))
            edge_lower_s = float(point.runtime_s[edge] * np.exp(lower_log[edge]))
            lower_log = np.maximum(lower_log, ideal_floor_log(ctx, p, point.runtime_s,
                                                              edge_lower_s))
        beyond = np.array([b.beyond_calibration for b in bands], dtype=bool)
        return Predictions(
            runtime_s=point.runtime_s[inverse],
            lower_s=(point.runtime_s * np.exp(lower_log))[inverse],
            upper_s=(point.runtime_s * np.exp(upper_log))[inverse],
            law=ENSEMBLE_NAME, overhead_coefficient=np.exp(point.correction)[inverse],
            extrapolation_log2=point.distance[inverse], beyond_calibration=beyond[inverse],
            noise_floor=floored[inverse], peer_series=point.peer_series[inverse],
            at_widest_error=at_widest[inverse])

    def quantile(self, series: Series, scales: FloatArray, quantile: float,
                 ctx: SeriesContext | None = None,
                 peers: PeerCurves | None = None) -> FloatArray:
        """The ``quantile`` of the runtime at each of ``scales``: the upper bound of the
        central interval at confidence 2q - 1 (q above 0.5), the lower bound at 1 - 2q
        (below), the point prediction at 0.5."""
        if not 0 < quantile < 1:
            raise ValueError(f"a quantile is between 0 and 1, not {quantile:g}")
        if quantile == 0.5:
            return self.predict_columns(series, scales, 0.5, ctx, peers).runtime_s
        pred = self.predict_columns(series, scales, abs(2 * quantile - 1), ctx, peers)
        return pred.upper_s if quantile > 0.5 else pred.lower_s

    def exceedance(self, series: Series, scales: FloatArray, walltime_s: float | FloatArray,
                   ctx: SeriesContext | None = None,
                   peers: PeerCurves | None = None) -> FloatArray:
        """P(runtime > ``walltime_s``) at each of ``scales`` (the two broadcast against
        each other): the share of runs a walltime would kill, read off the interval
        model directly (the tail of the central interval whose upper bound is the
        walltime), not searched for over whole estimates. Below the point prediction
        it is read off the lower side (:meth:`_exceedance_bisected`): a walltime a queue
        capped at a fifth of the predicted runtime was reported killing 50% of runs.
        Within the ramp beyond the measured range, where the interval is a blend of two
        (:meth:`predict_columns`), it is read off the bounds alike."""
        p, walltime = np.broadcast_arrays(np.asarray(scales, dtype=float),
                                          np.asarray(walltime_s, dtype=float))
        ctx = ctx or fit_context(series)
        point = self._point(series, p, ctx, peers)
        log_ratio = np.log(walltime / point.runtime_s)
        tail = np.array([point.conformal.upper_tail(max(float(d), 0.0), float(r / s))
                         for d, r, s in zip(point.distance, log_ratio, point.spread,
                                            strict=True)])
        far = point.distance > 1.0  # proportional to the distance, as in predict_columns
        tail[far] = [point.conformal.upper_tail(1.0, float(r / (s * d)))
                     for d, r, s in zip(point.distance[far], log_ratio[far],
                                        point.reference_spread[far], strict=True)]
        if point.floored:
            tail = np.maximum(tail, self.noise_floor.upper_tail(log_ratio, series.key.app))
        repeat = repeat_at_measured_scale(ctx, p)
        if repeat.any():  # as predict_columns: the tail of the repeats' own noise, and
            # past their largest deviation, where they tell no finer than 1 / (2 (n + 1)),
            # the calibrated interval's, as its bounds there are (bert's 307.5 s, the
            # 99.8% bound, was said to kill 1.2% of runs, as was 240 s, its 90% bound)
            own = ctx.repeat_noise.upper_tail(log_ratio)
            past = log_ratio > ctx.repeat_noise.largest_log
            tail = np.where(repeat, np.where(past, np.minimum(own, tail), own), tail)
        # below the point, and within the ramp (where the interval is a blend of two,
        # predict_columns), read off the bounds themselves
        bisected = (log_ratio < 0) | ((point.distance > 0) & (point.parts.ramp < 1))
        if bisected.any():
            tail = tail.astype(float)
            tail[bisected] = [
                self._exceedance_bisected(series, scale, w, below, ctx, peers)
                for scale, w, below in zip(p[bisected], walltime[bisected],
                                           log_ratio[bisected] < 0, strict=True)]
        return tail

    def smallest_tail(self, series: Series, scales: FloatArray,
                      ctx: SeriesContext | None = None,
                      peers: PeerCurves | None = None) -> FloatArray:
        """The smallest P(runtime > walltime) the calibration errors resolve at each of
        ``scales`` (:meth:`~perfpredict.uncertainty.conformal.DistanceConformal.
        smallest_tail`, at the distance whose errors the interval reads: one doubling
        beyond it, as :meth:`predict_columns`): an :meth:`exceedance` below it is read
        past the widest of them, and says no more than that it is at most this."""
        ctx = ctx or fit_context(series)
        point = self._point(series, np.asarray(scales, dtype=float), ctx, peers)
        return np.array([point.conformal.smallest_tail(min(max(float(d), 0.0), 1.0))
                         for d in point.distance])

    def _exceedance_bisected(self, series: Series, scale: float, walltime_s: float,
                             below: bool, ctx: SeriesContext,
                             peers: PeerCurves | None) -> float:
        """P(runtime > ``walltime_s``) read off the interval's bounds (every rule of
        :meth:`predict_columns` applied: noise, repeats, the ramp, ideal scaling) by
        bisection in the confidence c: for a walltime ``below`` the point prediction,
        (1 + c) / 2 for the largest c whose lower bound is still at or above it, else
        (1 - c) / 2 for the largest c whose upper bound is still at or below it (where
        few residuals make a bound a step in c, a walltime on the step is outrun as
        often as its highest confidence says, as :meth:`DistanceConformal.upper_tail`
        reads the upper side). Beyond the widest interval resolved, that interval's
        tail."""
        def outside(confidence: float) -> bool:
            """The walltime lies at or beyond the bound at ``confidence`` (less a
            rounding margin: a walltime read off a bound comes back a few ulps off)."""
            pred = self.predict_columns(series, np.array([scale]), confidence, ctx, peers)
            if below:
                return bool(pred.lower_s[0] >= walltime_s * (1 - 1e-9))
            return bool(pred.upper_s[0] <= walltime_s * (1 + 1e-9))

        low, high = 0.0, float(TAIL_CONFIDENCES[-1])
        if outside(high):
            low = high
        else:
            for _ in range(30):  # the bounds move outward as the confidence rises
                mid = 0.5 * (low + high)
                low, high = (mid, high) if outside(mid) else (low, mid)
        return float((1.0 + low) / 2 if below else (1.0 - low) / 2)

    def app_rate(self, app: str) -> float:
        """The log error of the base per doubling beyond the measured range that the
        training series of ``app`` showed, pooled and shrunk toward 0 (c = 1); 0 for an
        application trained on without such evidence, or not at all.

        A series asked about draws on all of its application's evidence, its own nested
        extrapolations included: they are measurements, and the artifact keeps the sums
        per application only. In training a series sees the other folds' evidence only,
        as a target encoder is fitted across folds and then applied with every row.
        """
        log_sum, doublings, _ = self.app_evidence.get(app, (0.0, 0.0, 0))
        return log_sum / (doublings + APP_PRIOR_DOUBLINGS)

    def calibration(self, weak: bool) -> str:
        """What the intervals of this scaling kind were calibrated on
        (:data:`CALIBRATED_BY`)."""
        return self.calibrated_by["weak" if weak else "strong"]

    def is_new_app(self, app: str) -> bool:
        """Whether no more than one training series (the one asked about) is of ``app``:
        then there is nothing of the application to borrow."""
        return self.app_evidence.get(app, (0.0, 0.0, 0))[2] <= 1

    def thinly_calibrated(self, weak: bool) -> int | None:
        """The number of series of this scaling kind the intervals were calibrated with,
        when too few to calibrate the kind on its own (they were pooled); else None."""
        n_series = self.n_series_by_kind["weak" if weak else "strong"]
        return n_series if n_series < self.min_series_for_calibration else None

    def to_dict(self) -> dict[str, Any]:
        """The learned state as JSON-ready data; each booster once, as its tree table
        (:meth:`TreeEnsemble.to_table`), which an estimate reads in 0.3 ms where XGBoost's
        own JSON of the same trees took 13-21 ms to parse per booster."""
        return {
            "feature_names": list(FEATURE_NAMES),
            "base": ENSEMBLE_NAME, "apply_correction": self.apply_correction,
            "app_evidence": {app: list(sums) for app, sums in self.app_evidence.items()},
            "conformal": {k: c.to_dict() for k, c in self.conformal.items()},
            "calibrated_by": self.calibrated_by,
            "correction_trees": self._correction_tables(),
            "app_correction_trees": {app: trees.to_table()
                                     for app, trees in self.app_correction_trees.items()},
            "spread_trees": {method: trees.to_table()
                             for method, trees in self.spread_trees.items()},
            "noise_floor": self.noise_floor.to_dict(),
            "n_series": self.n_series, "n_examples": self.n_examples,
            "n_series_by_kind": self.n_series_by_kind,
            "min_series_for_calibration": self.min_series_for_calibration,
            "metrics": self.metrics,
            "drift": None if self.drift is None else self.drift.to_dict(),
            "exponent_evidence": {app: list(sums)
                                  for app, sums in self.exponent_evidence.items()},
        }

    def _correction_tables(self) -> dict[str, Any]:
        """The correction trees' table, once where both kinds share them (as artifacts
        from before they could differ hold them), else one per kind."""
        strong, weak = (self.correction_trees[k] for k in ("strong", "weak"))
        if strong is weak:
            return strong.to_table()
        return {k: trees.to_table() for k, trees in self.correction_trees.items()}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RuntimeModel:
        # an artifact from before a feature was appended: its trees never read it
        names = doc["feature_names"]
        if names != list(FEATURE_NAMES[:len(names)]) or doc["base"] != ENSEMBLE_NAME:
            raise ValueError("the artifact's features differ from this perfpredict's")
        calibrated_by, spread_tables = doc["calibrated_by"], doc["spread_trees"]
        if isinstance(calibrated_by, str):  # an artifact calibrated one way for both kinds
            spread_tables = {calibrated_by: spread_tables}
            calibrated_by = dict.fromkeys(KINDS, calibrated_by)
        return cls(
            apply_correction=dict(doc["apply_correction"]),
            app_evidence={app: (float(log_sum), float(doublings), int(count))
                          for app, (log_sum, doublings, count) in doc["app_evidence"].items()},
            conformal={k: DistanceConformal.from_dict(c) for k, c in doc["conformal"].items()},
            calibrated_by=calibrated_by,
            correction_trees=_correction_trees(doc["correction_trees"]),
            app_correction_trees=ReadByName(doc.get("app_correction_trees", {}),
                                             TreeEnsemble.from_table),
            spread_trees={method: TreeEnsemble.from_table(table)
                          for method, table in spread_tables.items()},
            noise_floor=NoiseFloor.from_dict(doc["noise_floor"]),
            n_series=doc["n_series"], n_examples=doc["n_examples"],
            n_series_by_kind=dict(doc["n_series_by_kind"]),
            min_series_for_calibration=doc["min_series_for_calibration"],
            metrics=doc["metrics"],
            # an artifact from before the drift took part: the three laws alone
            drift=None if doc.get("drift") is None else SlopeDrift.from_dict(doc["drift"]),
            # an artifact from before the exponents were pooled: each series' own
            exponent_evidence={app: tuple(float(v) for v in sums)
                               for app, sums in doc.get("exponent_evidence", {}).items()})


def _correction_trees(tables: dict[str, Any]) -> dict[str, TreeEnsemble]:
    """:meth:`RuntimeModel._correction_tables` read back: one table shared by both
    kinds, or one per kind."""
    if set(tables) == set(KINDS):
        return {k: TreeEnsemble.from_table(tables[k]) for k in KINDS}
    return dict.fromkeys(KINDS, TreeEnsemble.from_table(tables))


__all__ = ["KINDS", "PointParts", "Prediction", "Predictions", "RuntimeModel", "features",
           "kind_of"]

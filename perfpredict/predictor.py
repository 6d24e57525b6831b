"""The hybrid runtime predictor: a scaling law gives the shape, a learned overhead
coefficient corrects it, a conformal interval says how far to trust it.

    T(p) = T_law(p) * c(features),   log c learned by gradient-boosted trees

Training follows how predictions are used. For every series with three or more scales,
and every cut k, the laws are fitted on the k smallest scales and asked for the larger
ones (nested extrapolation). Pooled over all series, those examples decide

1. which law family to trust as the base, per scaling kind (weak or strong): the one
   with the smallest nested-extrapolation error, so no series picks its law from its own
   three points;
2. the overhead correction log c, learned on the law's nested errors with the
   extrapolation distance, the shape of the measured curve and what the application's
   other series showed beyond their measured range as features (so a new series of a
   known application borrows its application's overhead, and a new application falls
   back on the shape alone); it is applied to a scaling kind only if, cross-fitted by
   series, it beats the plain law;
3. the interval: split-conformal quantiles of the cross-fitted residuals, by distance,
   with interpolation examples (each interior scale of every cut of a series predicted
   from the cut's other scales) calibrating the intervals between measured scales; an
   application no other training series shares gets quantiles of residuals cross-fitted
   by application instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray
from perfpredict.overhead.contexts import (
    ContextBatch,
    SeriesTable,
    block_positions,
    fit_contexts,
)
from perfpredict.overhead.features import (
    CANDIDATE_LAWS,
    FEATURE_NAMES,
    SeriesContext,
    fit_context,
    law_log_predictions,
)
from perfpredict.overhead.regressor import OverheadRegressor
from perfpredict.series import Series
from perfpredict.uncertainty.conformal import DistanceConformal

KINDS = ("strong", "weak")
#: Added to |log residual| before taking its log: below 1% the spread is repetition noise.
SPREAD_FLOOR_LOG = 0.01
#: The shrinkage of an application's evidence toward c = 1, in doublings: its rate is
#: sum(w * log error) / (sum(w * doublings) + APP_PRIOR_DOUBLINGS), so an application
#: whose series have extrapolated little or once suggests little.
APP_PRIOR_DOUBLINGS = 2.0


def _kind(series: Series) -> str:
    return "weak" if series.weak else "strong"


@dataclass
class NestedExamples:
    """Nested-extrapolation examples: one per run beyond a cut of its series."""

    summary: list[FloatArray] = field(default_factory=list)
    scale: list[FloatArray] = field(default_factory=list)
    scale_max: list[FloatArray] = field(default_factory=list)
    law_logs: list[FloatArray] = field(default_factory=list)  # (n, n_laws)
    log_runtime: list[FloatArray] = field(default_factory=list)
    group: list[FloatArray] = field(default_factory=list)
    weight: list[FloatArray] = field(default_factory=list)
    kind: list[np.ndarray] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        if not self.scale:
            raise ValueError("no nested examples")
        return {name: np.concatenate(getattr(self, name)) for name in (
            "summary", "scale", "scale_max", "law_logs", "log_runtime", "group", "weight",
            "kind")}


#: Tasks the nested examples are split into on dask.distributed (a few per worker).
NESTED_CHUNKS = 64
#: Most nested examples to learn from; beyond it, the examples of a uniform sample of
#: series are used. The boosted-tree fits (5 folds x 3 repeats of cross-fitting for the
#: correction and for the spread, then both final fits: 32) each cost time in proportion
#: to the examples, while the regressor's nested error has stopped improving long before
#: this many (on 1M generated runs: 0.72, 0.73, 0.73, 0.73, 0.72 with 15k, 30k, 60k, 120k
#: and 240k examples; a center's store yields millions).
MAX_NESTED_EXAMPLES = 30_000


def nested_examples(series_list: list[Series], min_context: int = 2,
                    max_examples: int = MAX_NESTED_EXAMPLES,
                    random_state: int = 0) -> NestedExamples:
    """Fit on the k smallest scales of each series, target its larger runs, for every k.

    With more than ``max_examples`` examples, those of a uniform sample of series (drawn
    with ``random_state``, so training stays reproducible) are used, as many series as
    fit within ``max_examples``; each example's group stays its series' index in
    ``series_list``.
    """
    # training's own imports: an estimate imports this module too
    from perfpredict._imports import require
    from perfpredict.distributed import current_client

    indices = _sample_series(series_list, min_context, max_examples, random_state)
    client = current_client()
    if client is None:
        return _nested_part([series_list[i] for i in indices], indices.tolist(), min_context)
    # on dask.distributed: one task per chunk of series, merged back in series order
    dask = require("dask", "dask")
    chunks = np.array_split(indices, min(indices.size, NESTED_CHUNKS)) if indices.size else []
    tasks = [dask.delayed(_nested_part)([series_list[i] for i in chunk], chunk.tolist(),
                                        min_context) for chunk in chunks]
    parts: list[NestedExamples] = client.gather(client.compute(tasks))
    examples = NestedExamples()
    for part in parts:
        for name, values in vars(part).items():
            getattr(examples, name).extend(values)
    return examples


def _examples_per_run(table: SeriesTable, min_context: int) -> IntArray:
    """Nested examples each run of ``table`` is the target of: one per cut below it, and
    at an interior scale j (0-based) of a series of n scales one per cut of 3 to n scales
    that holds it inside: n - j - 1."""
    index = table.run_scale_index
    n_scales = table.n_scales[table.run_series()]
    interior = np.where(index > 0, np.maximum(n_scales - index - 1, 0), 0)
    return np.maximum(index - min_context + 1, 0) + interior


def _sample_series(series_list: list[Series], min_context: int, max_examples: int,
                   random_state: int) -> IntArray:
    """Indices of the series the nested examples are built from, ascending."""
    indices = np.arange(len(series_list))
    table = SeriesTable.of(series_list)
    per_series = np.bincount(table.run_series(), weights=_examples_per_run(table, min_context),
                             minlength=len(series_list))
    if per_series.sum() <= max_examples:
        return indices
    # only series that give examples: a sample of the others would hold none
    order = np.random.default_rng(random_state).permutation(indices[per_series > 0])
    n_kept = max(1, int(np.searchsorted(np.cumsum(per_series[order]), max_examples,
                                        side="right")))
    return np.sort(order[:n_kept])


def _nested_part(series_list: list[Series], groups: list[int],
                 min_context: int) -> NestedExamples:
    """:func:`nested_examples` of ``series_list``, each series' examples in its group.

    Every cut of every series is one context, all fitted at once; an example is a
    (context, run beyond its cut) pair, in the order of series, cuts and runs. Then the
    interpolation examples (:func:`_add_interior_examples`).
    """
    examples = NestedExamples()
    table = SeriesTable.of(series_list)
    n_cuts = np.maximum(table.n_scales - min_context, 0)
    if not n_cuts.any():  # a chunk of two-scale series (dask): nothing to learn from
        return examples
    cut_series = np.repeat(np.arange(len(series_list)), n_cuts)
    contexts = fit_contexts(table, series_list, cut_series,
                            min_context + block_positions(n_cuts))
    # pair every context with every run of its series, keep the runs beyond the cut
    runs_per_context = table.n_runs[cut_series]
    context = np.repeat(np.arange(cut_series.size), runs_per_context)
    run = table.run_start[cut_series][context] + block_positions(runs_per_context)
    beyond = table.run_scale_index[run] >= contexts.n_scales[context]
    context, run = context[beyond], run[beyond]
    weak = np.array([s.weak for s in series_list], dtype=bool)
    _add_examples(examples, table, weak, groups, contexts, context, run, cut_series[context])
    _add_interior_examples(examples, table, series_list, weak, groups)
    return examples


def _add_interior_examples(examples: NestedExamples, table: SeriesTable,
                           series_list: list[Series], weak: np.ndarray,
                           groups: list[int]) -> None:
    """Interpolation examples: for every cut of a series to its k smallest scales (k >= 3),
    each interior scale of the cut (neither its smallest nor its largest) predicted from
    the cut's other scales.

    Users also ask for node counts between measured ones, where the prediction is the
    law alone (the correction applies beyond the measured range). Without these
    examples the intervals there were calibrated on extrapolation residuals only: the
    90% intervals of ``evaluate --split random --repeats 5`` on the bundled data held
    0.85 of the test runs (MLPerf Training 0.87, RELeARN 0.80). Leaving each interior
    scale out of the whole series alone raised that to 0.89 (0.92, 0.81): a series
    missing one scale is interpolated more easily than one measured at a few scales far
    apart, as users' series often are. The cuts give those sparser contexts too.
    """
    n_cuts = np.maximum(table.n_scales - 2, 0)  # cuts to 3, 4, ..., n scales
    cut_owner = np.repeat(np.arange(len(series_list)), n_cuts)
    cut_size = 3 + block_positions(n_cuts)
    owner = np.repeat(cut_owner, cut_size - 2)
    if not owner.size:
        return
    top = table.scales[table.scale_start[owner] + np.repeat(cut_size, cut_size - 2) - 1]
    left_out = 1 + block_positions(cut_size - 2)  # the left-out scale's index in its series
    left_out_scale = table.scales[table.scale_start[owner] + left_out]
    others = [series_list[i].select((series_list[i].scale != scale)
                                    & (series_list[i].scale <= largest))
              for i, scale, largest in zip(owner.tolist(), left_out_scale.tolist(),
                                           top.tolist(), strict=True)]
    other_table = SeriesTable.of(others)
    contexts = fit_contexts(other_table, others, np.arange(len(others)),
                            other_table.n_scales)
    runs_per_context = table.n_runs[owner]
    context = np.repeat(np.arange(owner.size), runs_per_context)
    run = table.run_start[owner][context] + block_positions(runs_per_context)
    left = table.run_scale_index[run] == left_out[context]
    context, run = context[left], run[left]
    _add_examples(examples, table, weak, groups, contexts, context, run, owner[context])


def _add_examples(examples: NestedExamples, table: SeriesTable, weak: np.ndarray,
                  groups: list[int], contexts: ContextBatch, context: IntArray, run: IntArray,
                  series: IntArray) -> None:
    """Append one example per (``context[i]``, ``run[i]`` of ``table``) pair, the run
    belonging to series ``series[i]`` (``weak``: each series' scaling kind)."""
    p = table.run_scale[run]
    examples.summary.append(contexts.summary[context])
    examples.scale.append(p)
    examples.scale_max.append(contexts.scale_max[context])
    examples.law_logs.append(contexts.law_log_predictions(context, p))
    examples.log_runtime.append(np.log(table.runtime_s[run]))
    examples.group.append(np.asarray(groups, dtype=float)[series])
    # every (series, context, scale) counts once, however many repetitions it has
    scale_row = table.scale_start[series] + table.run_scale_index[run]
    examples.weight.append(1.0 / table.repetitions[scale_row])
    examples.kind.append(np.where(weak[series], "weak", "strong"))


def _features(summary: FloatArray, scale: FloatArray, scale_max: FloatArray,
              law_logs: FloatArray, base_log: FloatArray, app_rate: FloatArray) -> FloatArray:
    """The rows of :data:`FEATURE_NAMES`; ``app_rate``: the application's log error of
    the base law per doubling (:meth:`HybridPredictor.app_rate`) for each row."""
    distance = np.log2(scale / scale_max)
    return np.column_stack([distance, np.log2(scale), summary, law_logs - base_log[:, None],
                            app_rate * np.maximum(distance, 0.0)])


def _series_evidence(n_series: int, group: FloatArray, target: FloatArray, weight: FloatArray,
                     distance: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per series (``group`` holds each example's): the weighted sum of its examples' log
    errors of the base law (``target``) and of the doublings they reached."""
    index = group.astype(np.int64)
    log_sum = np.bincount(index, weights=weight * target, minlength=n_series)
    doublings = np.bincount(index, weights=weight * distance, minlength=n_series)
    return log_sum.astype(np.float64), doublings.astype(np.float64)


def _weighted_mean_abs(values: FloatArray, weight: FloatArray) -> float:
    return float(np.sum(np.abs(values) * weight) / np.sum(weight))


@dataclass
class Prediction:
    runtime_s: float
    lower_s: float
    upper_s: float
    law: str
    overhead_coefficient: float
    extrapolation_log2: float
    beyond_calibration: bool


@dataclass
class Predictions:
    """Predictions at many scales of one series, as columns: a batch estimate writes
    them as they are, without one :class:`Prediction` object per query."""

    runtime_s: FloatArray
    lower_s: FloatArray
    upper_s: FloatArray
    law: str
    overhead_coefficient: FloatArray
    extrapolation_log2: FloatArray
    beyond_calibration: np.ndarray  # bool

    def rows(self) -> list[Prediction]:
        """One :class:`Prediction` per scale, as :meth:`HybridPredictor.predict` returns."""
        return [Prediction(runtime_s=r, lower_s=lo, upper_s=up, law=self.law,
                           overhead_coefficient=c, extrapolation_log2=d, beyond_calibration=b)
                for r, lo, up, c, d, b in zip(
                    self.runtime_s.tolist(), self.lower_s.tolist(), self.upper_s.tolist(),
                    self.overhead_coefficient.tolist(), self.extrapolation_log2.tolist(),
                    self.beyond_calibration.tolist(), strict=True)]


class HybridPredictor:
    """Scaling law x learned overhead coefficient, with distance-aware conformal intervals.

    ``fit(series_list)`` learns from nested extrapolation across all series;
    ``predict(series, scales)`` extrapolates one series (its measured runs are the
    context) to new scales.
    """

    def __init__(self, n_folds: int = 5, n_repeats: int = 3, min_series_for_correction: int = 8,
                 regressor_params: dict[str, Any] | None = None, random_state: int = 0) -> None:
        self.n_folds = n_folds
        self.n_repeats = n_repeats
        self.min_series_for_correction = min_series_for_correction
        self.regressor_params = regressor_params
        self.random_state = random_state

    def _regressor(self) -> OverheadRegressor:
        return OverheadRegressor(random_state=self.random_state,
                                 **(self.regressor_params or {}))

    def fit(self, series_list: list[Series]) -> HybridPredictor:
        usable = [s for s in series_list if s.scales.size >= 3]
        if not usable:
            raise ValueError("no series with three or more scales to learn from")
        data = nested_examples(usable, random_state=self.random_state).arrays()
        weight, kind, group = data["weight"], data["kind"], data["group"]
        law_logs = data["law_logs"]
        distance = np.log2(data["scale"] / data["scale_max"])
        # the law and its correction are chosen and learned on extrapolation; the
        # interior (interpolation) examples only calibrate the intervals there
        beyond = distance > 0

        # 1. the base law per scaling kind, by pooled nested-extrapolation error
        self.base_law_: dict[str, str] = {}
        for k in KINDS:
            mask = (kind == k) & beyond
            if not mask.any():
                self.base_law_[k] = "amdahl" if k == "strong" else "gustafson"
                continue
            errors = [_weighted_mean_abs(data["log_runtime"][mask] - law_logs[mask, j],
                                         weight[mask]) for j in range(len(CANDIDATE_LAWS))]
            self.base_law_[k] = CANDIDATE_LAWS[int(np.argmin(errors))]
        base_index = np.array([CANDIDATE_LAWS.index(self.base_law_[k]) for k in kind])
        base_log = law_logs[np.arange(kind.size), base_index]
        target = data["log_runtime"] - base_log
        series_app, app_rate = self._fit_app_evidence(usable, group[beyond], target[beyond],
                                                      weight[beyond], distance[beyond])
        features = _features(data["summary"], data["scale"], data["scale_max"], law_logs,
                             base_log, app_rate[group.astype(np.int64)])

        # 2. cross-fitted correction, kept per kind only where it beats the plain law
        oof = self._oof_correction(features, target, weight, group, beyond)
        self.apply_correction_: dict[str, bool] = {}
        for k in KINDS:
            mask = (kind == k) & beyond
            n_series = np.unique(group[mask]).size
            if n_series < self.min_series_for_correction:
                self.apply_correction_[k] = False
                continue
            corrected = _weighted_mean_abs(target[mask] - oof[mask], weight[mask])
            plain = _weighted_mean_abs(target[mask], weight[mask])
            self.apply_correction_[k] = corrected < plain
        residual = self._residual(target, oof, kind, beyond)

        # 3. intervals: a spread model for |residual|, then conformal quantiles of the
        # normalised cross-fitted residuals, per kind where it has enough series
        log_spread, score = self._normalised_scores(features, residual, weight, group)
        pooled = DistanceConformal().fit(score, distance)
        self.conformal_: dict[str, DistanceConformal] = {}
        self.n_series_by_kind_: dict[str, int] = {}
        for k in KINDS:
            mask = kind == k
            own_series = int(np.unique(group[mask & beyond]).size)
            self.n_series_by_kind_[k] = own_series
            self.conformal_[k] = (DistanceConformal().fit(score[mask], distance[mask])
                                  if own_series >= self.min_series_for_correction else pooled)
        self.new_app_conformal_ = self._fit_new_app_conformal(
            features, target, weight, distance, kind, series_app[group.astype(np.int64)])
        self.spread_regressor_ = self._regressor().fit(features, log_spread, weight)
        self.regressor_ = self._regressor().fit(features[beyond], target[beyond],
                                                weight[beyond])
        self.n_series_ = len(usable)
        self.n_examples_ = int(beyond.sum())
        self.metrics_ = {
            "nested_mean_abs_log_error_plain": _weighted_mean_abs(target[beyond],
                                                                  weight[beyond]),
            "nested_mean_abs_log_error_hybrid": _weighted_mean_abs(residual[beyond],
                                                                   weight[beyond])}
        return self

    def _fit_app_evidence(self, usable: list[Series], group: FloatArray, target: FloatArray,
                          weight: FloatArray, distance: FloatArray) -> tuple[IntArray, FloatArray]:
        """Sum each application's evidence (:meth:`app_rate`) from the extrapolation
        examples given; return each series' application (an index) and the rate each
        series of ``usable`` trains with.

        A series trains with its application's rate from the series in the other folds
        only (cross-fitted target encoding, as scikit-learn's TargetEncoder). Leaving out
        just the series itself is not enough: with one application of many series (as
        RELeARN) the left-out rate moves with the series' own error, the trees read that
        error off it, and the calibrated intervals came out too narrow (RELeARN in
        ``evaluate --split random --repeats 5``: 0.84 of test runs inside 90% intervals).
        """
        n_series = len(usable)
        series_log, series_doublings = _series_evidence(n_series, group, target, weight,
                                                        distance)
        names, app_of = np.unique([s.key.app for s in usable], return_inverse=True)
        fold = np.random.default_rng(self.random_state).permutation(n_series) % self.n_folds
        cell = app_of * self.n_folds + fold  # (application, fold)
        cells = names.size * self.n_folds
        cell_log = np.bincount(cell, weights=series_log, minlength=cells)
        cell_doublings = np.bincount(cell, weights=series_doublings, minlength=cells)
        app_log = cell_log.reshape(names.size, self.n_folds).sum(axis=1)
        app_doublings = cell_doublings.reshape(names.size, self.n_folds).sum(axis=1)
        app_series = np.bincount(app_of, minlength=names.size)
        self.app_evidence_ = {name: (float(log_sum), float(doublings), int(count))
                              for name, log_sum, doublings, count in zip(
                                  names.tolist(), app_log, app_doublings, app_series,
                                  strict=True)}
        return app_of, ((app_log[app_of] - cell_log[cell])
                        / (app_doublings[app_of] - cell_doublings[cell] + APP_PRIOR_DOUBLINGS))

    def _fit_new_app_conformal(self, features: FloatArray, target: FloatArray,
                               weight: FloatArray, distance: FloatArray, kind: np.ndarray,
                               app: IntArray) -> DistanceConformal | None:
        """Intervals for an application no other training series shares, calibrated on
        residuals of trees that never saw the application (cross-fitted by application,
        with no application evidence); None with fewer applications than
        ``min_series_for_correction``, too few for their residuals to stand for the next
        one's (a pool of RELeARN, LULESH and one new code gave intervals of +-1%).

        The other intervals are calibrated on residuals cross-fitted by series: an
        application's other series were in training. Those residuals are exchangeable
        with a new series of a known application, not with a new application's. One
        assignment of applications to folds, not ``n_repeats``: these fits only serve
        queries about a new application, and one assignment already adds ten tree fits,
        28% of the training time on the bundled data (2.5 s to 3.2 s).
        """
        if np.unique(app).size < self.min_series_for_correction:
            return None
        features = features.copy()
        features[:, FEATURE_NAMES.index("app_prior_log")] = 0.0
        beyond = distance > 0
        oof = self._oof_correction(features, target, weight, app, beyond, n_repeats=1)
        residual = self._residual(target, oof, kind, beyond)
        _, score = self._normalised_scores(features, residual, weight, app, n_repeats=1)
        return DistanceConformal().fit(score, distance)

    def _oof_correction(self, features: FloatArray, target: FloatArray, weight: FloatArray,
                        group: np.ndarray, beyond: np.ndarray,
                        n_repeats: int | None = None) -> FloatArray:
        """Cross-fitted corrections (:meth:`_cross_fit` by ``group``) of the examples
        ``beyond`` the measured range, 0 for the others: the correction is learned and
        applied beyond the measured range only."""
        oof = np.zeros_like(target)
        oof[beyond] = self._cross_fit(features[beyond], target[beyond], weight[beyond],
                                      group[beyond], n_repeats)
        return oof

    def _residual(self, target: FloatArray, oof: FloatArray, kind: np.ndarray,
                  beyond: np.ndarray) -> FloatArray:
        """log(measured / predicted): the base law's error less the cross-fitted
        correction where it applies (beyond the measured range, in a kind that keeps it)."""
        corrected = beyond & np.where(kind == "weak", self.apply_correction_["weak"],
                                      self.apply_correction_["strong"])
        return np.where(corrected, target - oof, target)

    def _normalised_scores(self, features: FloatArray, residual: FloatArray,
                           weight: FloatArray, group: np.ndarray,
                           n_repeats: int | None = None) -> tuple[FloatArray, FloatArray]:
        """The log spread of each residual, and the residual over its cross-fitted spread
        (by ``group``): the normalised conformal scores."""
        log_spread = np.log(np.abs(residual) + SPREAD_FLOOR_LOG)
        spread = np.exp(self._cross_fit(features, log_spread, weight, group, n_repeats))
        return log_spread, residual / spread

    def _cross_fit(self, features: FloatArray, target: FloatArray, weight: FloatArray,
                   group: np.ndarray, n_repeats: int | None = None) -> FloatArray:
        """Out-of-fold predictions: each group (series) predicted by trees that never saw
        it, averaged over ``n_repeats`` (default: the predictor's) assignments of groups
        to folds.

        With about a hundred series, which series share a fold moves the out-of-fold
        spreads, and with them the calibrated intervals: over four values of
        ``random_state`` the bundled extrapolation backtest's median interval width
        ranged 0.95-1.42 (coverage 0.88-0.97) with one assignment, 0.87-1.11 (coverage
        0.89-0.95) averaged over three (repeated cross-fitting). A user retraining on
        the same store should not get intervals a third wider or narrower.
        """
        groups = np.unique(group)
        rng = np.random.default_rng(self.random_state)
        total = np.zeros_like(target)
        n_repeats = n_repeats or self.n_repeats
        for _ in range(n_repeats):
            fold_of = dict(zip(groups, rng.permutation(groups.size) % self.n_folds,
                               strict=True))
            folds = np.array([fold_of[g] for g in group])
            for fold in range(min(self.n_folds, groups.size)):
                test = folds == fold
                if test.all() or not test.any():
                    continue
                reg = self._regressor().fit(features[~test], target[~test], weight[~test])
                total[test] += reg.predict(features[test])
        return total / n_repeats

    def predict(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                ctx: SeriesContext | None = None) -> list[Prediction]:
        """Predictions for ``series`` (its runs as context) at each of ``scales``."""
        return self.predict_columns(series, scales, confidence, ctx).rows()

    def predict_columns(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                        ctx: SeriesContext | None = None) -> Predictions:
        """:meth:`predict` as columns, one vectorised pass for all of ``scales``.

        Every value depends on the scale alone, and a batch asks for the same few scales
        of a series many times over, so each distinct scale is predicted once.
        """
        ctx = ctx or fit_context(series)
        p, inverse = np.unique(np.asarray(scales, dtype=float), return_inverse=True)
        logs = law_log_predictions(ctx, p)
        kind = _kind(series)
        base_name = self.base_law_[kind]
        base_log = logs[base_name]
        law_matrix = np.column_stack([logs[name] for name in CANDIDATE_LAWS])
        n = p.size
        new_app = self.is_new_app(series.key.app)
        # a new application trained with no other series' evidence, so it answers so
        app_rate = 0.0 if new_app else self.app_rate(series.key.app)
        features = _features(np.tile(ctx.summary, (n, 1)), p, np.full(n, ctx.scale_max),
                             law_matrix, base_log, np.full(n, app_rate))
        distance = features[:, 0]
        correction = np.zeros(n)
        if self.apply_correction_[kind]:
            correction = np.where(distance > 0, self.regressor_.predict(features), 0.0)
        spread = np.exp(self.spread_regressor_.predict(features))
        conformal = self.conformal_[kind]
        if new_app and self.new_app_conformal_ is not None:
            conformal = self.new_app_conformal_
        bands = [conformal.bounds(max(float(d), 0.0), confidence) for d in distance]
        runtime_s = np.exp(base_log + correction)
        lower_s = runtime_s * np.exp(np.array([b.lower for b in bands]) * spread)
        upper_s = runtime_s * np.exp(np.array([b.upper for b in bands]) * spread)
        beyond = np.array([b.beyond_calibration for b in bands], dtype=bool)
        return Predictions(
            runtime_s=runtime_s[inverse], lower_s=lower_s[inverse], upper_s=upper_s[inverse],
            law=base_name, overhead_coefficient=np.exp(correction)[inverse],
            extrapolation_log2=distance[inverse], beyond_calibration=beyond[inverse])

    def app_rate(self, app: str) -> float:
        """The log error of the base law per doubling beyond the measured range that the
        training series of ``app`` showed, pooled and shrunk toward 0 (c = 1); 0 for an
        application trained on without such evidence, or not at all.

        A series asked about draws on all of its application's evidence, its own nested
        extrapolations included: they are measurements, and the artifact keeps the sums
        per application only. In training a series sees the other folds' evidence only
        (:meth:`_fit_app_evidence`), as a target encoder is fitted across folds and then
        applied with every row.
        """
        log_sum, doublings, _ = self.app_evidence_.get(app, (0.0, 0.0, 0))
        return log_sum / (doublings + APP_PRIOR_DOUBLINGS)

    def is_new_app(self, app: str) -> bool:
        """Whether no more than one training series (the one asked about) is of ``app``:
        then there is nothing of the application to borrow, and its intervals are
        calibrated for a new application."""
        return self.app_evidence_.get(app, (0.0, 0.0, 0))[2] <= 1

    def new_app_note(self, app: str) -> str | None:
        """What an estimate for ``app`` should say when the application is new (else
        None): it borrows nothing, and how its interval was calibrated."""
        if not self.is_new_app(app):
            return None
        if self.new_app_conformal_ is None:
            return (f"no other series of {app} was trained on, and too few applications "
                    "to calibrate intervals for a new one: nothing of the application to "
                    "borrow, and the interval may be too narrow")
        return (f"no other series of {app} was trained on: nothing of the application to "
                "borrow, and the interval is calibrated on applications left out of "
                "training")

    def thin_calibration(self, weak: bool) -> str | None:
        """A warning when this scaling kind had too few series of its own to calibrate
        its intervals (they were calibrated on all series pooled), else None."""
        kind = "weak" if weak else "strong"
        n_series = self.n_series_by_kind_[kind]
        if n_series >= self.min_series_for_correction:
            return None
        return (f"only {n_series} {kind}-scaling series with 3+ scales were trained on, so "
                "the interval is calibrated on all series pooled and may be too narrow; "
                "train on more series (e.g. 'perfpredict datasets load')")

    def to_dict(self) -> dict[str, Any]:
        """The learned state as JSON-ready data: each booster as XGBoost's own JSON, and
        as the tree table (:mod:`perfpredict.overhead.trees`) an estimate reads instead."""
        return {
            "params": {"n_folds": self.n_folds, "n_repeats": self.n_repeats,
                       "min_series_for_correction": self.min_series_for_correction,
                       "regressor_params": self.regressor_params,
                       "random_state": self.random_state},
            "feature_names": list(FEATURE_NAMES),
            "base_law": self.base_law_, "apply_correction": self.apply_correction_,
            "app_evidence": {app: list(sums) for app, sums in self.app_evidence_.items()},
            "new_app_conformal": (None if self.new_app_conformal_ is None
                                  else self.new_app_conformal_.to_dict()),
            "conformal": {k: c.to_dict() for k, c in self.conformal_.items()},
            "booster_json": self.regressor_.model_json_,
            "spread_booster_json": self.spread_regressor_.model_json_,
            # the same trees, as tables an estimate reads without parsing the JSON above
            "booster_table": self.regressor_.ensemble_.to_table(),
            "spread_booster_table": self.spread_regressor_.ensemble_.to_table(),
            "n_series": self.n_series_, "n_examples": self.n_examples_,
            "n_series_by_kind": self.n_series_by_kind_,
            "metrics": self.metrics_,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> HybridPredictor:
        if doc["feature_names"] != list(FEATURE_NAMES):
            raise ValueError("the artifact's features differ from this perfpredict's")
        self = cls(**doc["params"])
        self.base_law_ = dict(doc["base_law"])
        self.apply_correction_ = dict(doc["apply_correction"])
        self.app_evidence_ = {app: (float(log_sum), float(doublings), int(count))
                              for app, (log_sum, doublings, count) in doc["app_evidence"].items()}
        new_app = doc["new_app_conformal"]
        self.new_app_conformal_ = None if new_app is None else DistanceConformal.from_dict(new_app)
        self.conformal_ = {k: DistanceConformal.from_dict(c) for k, c in doc["conformal"].items()}
        # artifacts written before the tree tables answer from the boosters' JSON
        self.regressor_ = OverheadRegressor.from_json(doc["booster_json"],
                                                      doc.get("booster_table"))
        self.spread_regressor_ = OverheadRegressor.from_json(doc["spread_booster_json"],
                                                             doc.get("spread_booster_table"))
        self.n_series_, self.n_examples_ = doc["n_series"], doc["n_examples"]
        self.n_series_by_kind_ = dict(doc["n_series_by_kind"])
        self.metrics_ = doc["metrics"]
        return self


__all__ = ["FEATURE_NAMES", "HybridPredictor", "Prediction", "Predictions",
           "nested_examples"]

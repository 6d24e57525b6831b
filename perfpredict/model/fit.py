"""Training: the hybrid runtime model learned from nested extrapolation.

    T(p) = T_base(p) * c(features),   log c learned by gradient-boosted trees

Training follows how predictions are used. For every series with three or more scales,
and every cut k, the laws are fitted on the k smallest scales and asked for the larger
ones (nested extrapolation). The base is fixed (:data:`perfpredict.model.base_estimate.ENSEMBLE`,
the log-space mean of Amdahl, Amdahl + log and the power law, and for strong scaling
beyond the measured range the slope drift pooled from every training series), so no series
picks its law from its own three points and no pool picks one from nested contexts unlike
the use.
Pooled over all series, the examples decide

1. the overhead correction log c, learned on the base's nested errors with the
   extrapolation distance, the shape of the measured curve, what the application's
   other series showed beyond their measured range and where their power-law exponents
   lie (:mod:`perfpredict.overhead.shrinkage`) as features (so a new series of a
   known application borrows its application's overhead, and a new application falls
   back on the shape alone); it is applied to a scaling kind only if, cross-fitted by
   series, it beats the plain base; a store of too few applications borrows half of it
   from other applications' series (:meth:`HybridPredictor.fit`), and so has one even
   where its own series are too few to learn or judge one;
2. the interval: split-conformal quantiles of residuals cross-fitted by application
   (by series when the store holds too few applications), by distance, with
   interpolation examples (each interior scale of every cut of a series predicted from
   the cut's other scales, the base moved onto the runs around it as an estimate's is)
   calibrating the intervals between measured scales;
3. the noise floor under the intervals of series measured once per scale
   (:mod:`perfpredict.uncertainty.noise`).

:class:`HybridPredictor` follows the estimator contract (``fit`` returns self, learned
state in ``model_``, a :class:`perfpredict.model.runtime.RuntimeModel` that answers and
that an estimate loads without importing this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray
from perfpredict.laws.drift import SlopeDrift
from perfpredict.model.base_estimate import (
    correction_ramp,
    drift_log,
    edge_offset_log,
    ensemble_log,
)
from perfpredict.model.nested import nested_examples
from perfpredict.model.peers import PeerCurves
from perfpredict.model.runtime import (
    APP_PRIOR_DOUBLINGS,
    KINDS,
    Prediction,
    Predictions,
    RuntimeModel,
    features,
)
from perfpredict.model.series import Series
from perfpredict.overhead.contexts import SeriesTable
from perfpredict.overhead.features import FEATURE_NAMES, SUMMARY_NAMES, SeriesContext
from perfpredict.overhead.regressor import OverheadRegressor
from perfpredict.overhead.shrinkage import line_moments, pooled_exponent_log, series_sums
from perfpredict.overhead.trees import TreeEnsemble
from perfpredict.uncertainty.conformal import DistanceConformal
from perfpredict.uncertainty.noise import NoiseFloor

#: Added to |log residual| before taking its log: below 1% the spread is repetition noise.
SPREAD_FLOOR_LOG = 0.01
#: Fewest series of a scaling kind for the learned correction to be judged on them (with
#: fewer it applies only where half of it is borrowed, unjudged), and fewest
#: applications of a kind for its intervals to be calibrated by leaving applications out
#: (with fewer, their residuals do not stand for the next one's; see _app_scores).
MIN_SERIES_FOR_CORRECTION = 8


def _series_evidence(n_series: int, group: FloatArray, target: FloatArray, weight: FloatArray,
                     distance: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per series (``group`` holds each example's): the weighted sum of its examples' log
    errors of the base law (``target``) and of the doublings they reached."""
    index = group.astype(np.int64)
    log_sum = np.bincount(index, weights=weight * target, minlength=n_series)
    doublings = np.bincount(index, weights=weight * distance, minlength=n_series)
    return log_sum.astype(np.float64), doublings.astype(np.float64)


def _residual(target: FloatArray, oof: FloatArray, kind: np.ndarray, beyond: np.ndarray,
              apply_correction: dict[str, bool]) -> FloatArray:
    """log(measured / predicted): the base's error less the cross-fitted correction
    where it applies (beyond the measured range, in a kind that keeps it)."""
    corrected = beyond & np.where(kind == "weak", apply_correction["weak"],
                                  apply_correction["strong"])
    return np.where(corrected, target - oof, target)


def _weighted_mean_abs(values: FloatArray, weight: FloatArray) -> float:
    return float(np.sum(np.abs(values) * weight) / np.sum(weight))


def _noise_floor(series_list: list[Series]) -> NoiseFloor:
    """The run-to-run noise of every stored series with repeats, one or two scales too,
    read off the same repeat deviations the series' contexts carry."""
    table = SeriesTable.of(series_list)
    return NoiseFloor.fit(table.repeat_deviation_log, table.run_series(),
                          [s.key.app for s in series_list])


class HybridPredictor:
    """Scaling law x learned overhead coefficient, with distance-aware conformal intervals.

    ``fit(series_list)`` learns from nested extrapolation across all series;
    ``predict(series, scales)`` extrapolates one series (its measured runs are the
    context) to new scales, with the curves of ``series_list`` as its peers
    (:mod:`perfpredict.model.peers`), as an estimate has the trained store's.
    """

    def __init__(self, n_folds: int = 5, n_repeats: int = 3,
                 min_series_for_correction: int = MIN_SERIES_FOR_CORRECTION,
                 regressor_params: dict[str, Any] | None = None, random_state: int = 0) -> None:
        self.n_folds = n_folds
        self.n_repeats = n_repeats
        self.min_series_for_correction = min_series_for_correction
        self.regressor_params = regressor_params
        self.random_state = random_state

    def _fit_trees(self, features: FloatArray, target: FloatArray,
                   weight: FloatArray) -> OverheadRegressor:
        return OverheadRegressor(random_state=self.random_state,
                                 **(self.regressor_params or {})).fit(
            features, target, weight, client=self._client)

    def fit(self, series_list: list[Series], client: Any | None = None,
            borrowed_series: list[Series] | None = None) -> HybridPredictor:
        """Learn from ``series_list``; on ``client``'s dask.distributed cluster (nested
        examples and every tree fit), when given. The client is an argument of ``fit``,
        not a parameter of the estimator: parameters are saved as JSON, and a client is
        a live connection.

        ``borrowed_series`` (other applications', e.g. the bundled data sets', for a
        store of too few applications: :func:`too_few_applications`) join the
        intervals' calibration, which can then leave applications out
        (:meth:`_calibration`), and teach half of strong scaling's correction and all of
        weak scaling's (:meth:`_correction_trees`). The base's slope drift, the peers
        and whether strong scaling's correction applies are the store's own, except in a
        store without strong scaling, whose drift and judgement are learned with the
        borrowed series (:meth:`_borrows_wholly`); an estimate is only made for the
        store's series.
        """
        self._client = client
        self._borrowed_series = borrowed_series or []
        try:
            return self._fit(series_list)
        finally:
            self._client = None

    def _fit(self, series_list: list[Series]) -> HybridPredictor:
        usable_own = [s for s in series_list if s.scales.size >= 3]
        if not usable_own:
            raise ValueError("no series with three or more scales to learn from")
        # the borrowed series come last: an example is the store's own below this
        usable = usable_own + [s for s in self._borrowed_series if s.scales.size >= 3]
        data = nested_examples(usable, random_state=self.random_state,
                               client=self._client).arrays()
        weight, kind, group = data["weight"], data["kind"], data["group"]
        law_logs = data["law_logs"]
        distance = np.log2(data["scale"] / data["scale_max"])
        # the correction is learned on extrapolation; the interior (interpolation)
        # examples only calibrate the intervals there
        beyond = distance > 0
        table = SeriesTable.of(usable)
        names, app_of = np.unique([s.key.app for s in usable], return_inverse=True)
        fold = self._series_folds(len(usable))
        pooled_log, exponent_evidence = self._pool_exponents(usable, table, data, app_of,
                                                             fold, names)
        own = group < len(usable_own)
        own_beyond = own & beyond  # the examples the correction is learned and judged on
        # without borrowed series the store's own table is the whole one
        own_table = (table if len(usable_own) == len(usable)
                     else SeriesTable.of(usable_own))
        self.peers_ = PeerCurves.of(
            (s.key, s.scale_unit, s.weak, own_table.scales[start:end],
             own_table.medians_s[start:end])
            for s, start, end in zip(usable_own, own_table.scale_start[:-1],
                                     own_table.scale_start[1:], strict=True))
        # the store's own strong scaling shapes the slope drift and half the strong
        # kind's correction (_correction_trees); a kind the store borrows wholly learns
        # its correction from every example, and a store without strong scaling its
        # drift too (_borrows_wholly)
        wholly = self._borrows_wholly(usable_own)
        drift_series, drift_table = ((usable, table) if wholly["strong"]
                                     else (usable_own, own_table))
        # learned_from: the examples each kind's correction is learned and judged on
        # (the store's own; every one of a kind borrowed wholly); half_own: the store's
        # own examples whose correction is half its own trees' (a kind not borrowed
        # wholly, in a store that borrows)
        kind_wholly = np.where(kind == "weak", wholly["weak"], wholly["strong"])
        learned_from = own | kind_wholly
        half_own = own & ~kind_wholly & ~own.all()
        app = app_of[group.astype(np.int64)]
        alone_apps = self._apps_learning_alone(own & (kind == "strong") & beyond, app,
                                               group, names)
        drift = SlopeDrift.fit(drift_table.scales, drift_table.medians_s,
                               drift_table.scale_start,
                               np.array([not s.weak for s in drift_series], dtype=bool))
        base_log = ensemble_log(law_logs, drift_log(
            drift, kind == "strong", data["scale"], data["scale_max"],
            data["edge_log_runtime"],
            data["summary"][:, SUMMARY_NAMES.index("edge_slope")]))
        target = data["log_runtime"] - base_log
        app_rate, app_evidence = self._fit_app_evidence(
            names, app_of, fold, group[beyond], target[beyond], weight[beyond],
            distance[beyond])
        rows = features(data["summary"], data["scale"], data["scale_max"], law_logs,
                        base_log, app_rate[group.astype(np.int64)], pooled_log)

        # 1. cross-fitted correction, kept per kind only where it beats the plain base
        # (every example's correction cross-fitted over all examples; with borrowed
        # series, the store's own of a kind not borrowed wholly the mean of that and of
        # one cross-fitted over its own examples alone; an application learning its
        # half alone (_apps_learning_alone), in any store, the mean of that and of one
        # cross-fitted over its application's examples: as the deployed correction is
        # (_correction_trees); whether it applies is judged on the examples it learned
        # from (_borrows_wholly), and where they are too few to judge, it does: see
        # _correction_trees), ramped in over each context's last spacing as an
        # estimate's is (correction_ramp)
        ramp = correction_ramp(distance, data["edge_spacing_log2"])
        oof = self._oof_correction(rows, target, weight, group, beyond)
        if half_own.any() or alone_apps:
            every_oof, oof = oof, oof.copy()
            store_half = half_own.copy()  # where no application learns its half alone
            for members in alone_apps.values():
                store_half &= ~members
            if store_half.any():
                oof[store_half] = np.mean([every_oof[store_half], self._oof_correction(
                    rows[own], target[own], weight[own], group[own], beyond[own])[
                        store_half[own]]], axis=0)
            for members in alone_apps.values():
                oof[members] = np.mean([every_oof[members], self._oof_correction(
                    rows[members], target[members], weight[members], group[members],
                    beyond[members])], axis=0)
        oof = oof * ramp
        apply_correction: dict[str, bool] = {}
        for k in KINDS:
            mask = (kind == k) & (learned_from & beyond)
            n_series = np.unique(group[mask]).size
            if n_series < self.min_series_for_correction:
                apply_correction[k] = n_series > 0 and not own.all()
                continue
            corrected = _weighted_mean_abs(target[mask] - oof[mask], weight[mask])
            plain = _weighted_mean_abs(target[mask], weight[mask])
            apply_correction[k] = corrected < plain
        residual = _residual(target, oof, kind, beyond, apply_correction)

        # 2. intervals: a spread model for |residual|, then conformal quantiles of the
        # normalised cross-fitted residuals; cross-fitted by application in a scaling
        # kind with enough applications, else by series (_calibration); of the base
        # moved onto the measured runs as an estimate's is (_normalised_scores): inside
        # the measured range onto those around, beyond a strong-scaling context onto
        # those at its largest scale (edge_offset_log)
        n_series_by_kind = {k: int(np.unique(group[(kind == k) & beyond]).size)
                            for k in KINDS}
        strong = kind == "strong"
        offset_log = data["measured_offset_log"] + np.where(beyond, edge_offset_log(
            data["edge_law_logs"], data["edge_log_runtime"], strong & (drift is not None)
        ) * np.where(strong, 1.0, 1.0 - ramp), 0.0)
        calibrated_by, log_spreads, conformal = self._calibration(
            rows, target, residual, weight, group, distance, kind, app, apply_correction,
            n_series_by_kind, offset_log, ramp)
        correction_trees, app_correction_trees = self._correction_trees(
            rows, target, weight, beyond, own, wholly, alone_apps)
        self.model_ = RuntimeModel(
            apply_correction=apply_correction, app_evidence=app_evidence,
            exponent_evidence=exponent_evidence, conformal=conformal,
            calibrated_by=calibrated_by,
            correction_trees=correction_trees, app_correction_trees=app_correction_trees,
            spread_trees={method: self._fit_trees(rows, log_spread, weight).ensemble_
                          for method, log_spread in log_spreads.items()},
            # 3. the noise floor, from the series with repeats
            noise_floor=_noise_floor(series_list),
            n_series=len(usable_own), n_examples=int(own_beyond.sum()),
            n_series_by_kind=n_series_by_kind, drift=drift,
            min_series_for_calibration=self.min_series_for_correction,
            metrics={"nested_mean_abs_log_error_plain": _weighted_mean_abs(
                target[own_beyond], weight[own_beyond]),
                     "nested_mean_abs_log_error_hybrid": _weighted_mean_abs(
                residual[own_beyond], weight[own_beyond])})
        return self

    def _borrows_wholly(self, usable_own: list[Series]) -> dict[str, bool]:
        """Per scaling kind, whether its correction (no half of it the store's own,
        :meth:`_correction_trees`) and the judgement of whether it applies are learned
        from the borrowed series with the store's, not from the store's alone: weak
        scaling where the store borrows and holds some, strong scaling where it borrows
        and holds none, its slope drift then fitted on the borrowed series too.

        Why weak scaling: it learns its correction from strong scaling's examples through
        the shared trees (trees per scaling kind, weak scaling learned alone, scored
        RELeARN 18.2% against 5.1%: docs/accuracy.md, "Tried and rejected"), and a store
        that borrows has fewer than 8 strong-scaling applications to teach it. RELeARN
        alone, store-cut, three seeds (``python -m bench.accuracy_benchmark --dataset
        relearn --repeats 3 --seed S``, S = 0, 3, 6): borrowing nothing, 19.2% / 18.6% /
        19.8% MAPE with 90% intervals holding 0.38 / 0.43 / 0.37 of its runs; borrowing
        half the correction as stores of strong scaling do, 12.8% / 12.7% / 12.4% and
        0.71; that with the borrowed slope drift, 11.0% / 11.9% and 0.73 / 0.70 (seeds 0,
        3); all of it and the drift from the borrowed series, as here, 6.2% / 6.7% / 6.9%
        and 1.00 / 0.99 / 0.99, as training on the bundled data sets (``--with-bundled``)
        scores. Beside one to four strong-scaling applications (RELeARN with Castro,
        PencilFFTs, CP2K, VASP, LULESH and Castro, Castro and PencilFFTs; seeds 0-2 and
        3-5, each split: 24 cells), borrowing weak scaling's correction wholly instead of
        half lowered RELeARN's MAPE in 20 cells, 12.9% to 10.1% on average, and left
        its 90% intervals holding fewer than 0.85 of its runs in 4 cells instead of 15
        (more than 0.95 in 17 instead of none), the strong-scaling codes' predictions
        unchanged (docs/accuracy.md, "Weak scaling in a store of few applications").
        A store without weak scaling judges that kind on its own examples, as before:
        judged on the borrowed ones, their residuals corrected in the calibration that
        strong scaling shares, the intervals of a store of the four HPC data sets
        narrowed (VASP's few-shot coverage 0.913 to 0.870, CP2K's 0.822 to 0.793; seed
        0), for no change to any prediction.

        Why strong scaling only without any of its own: a borrowed strong-scaling
        example's base needs the slope drift, which a store without strong scaling
        cannot fit; and the correction, judged on the store's own examples with no
        strong-scaling one among them, left the strong kind's residuals uncorrected in
        the spread trees that weak scaling's intervals share, so that a store of RELeARN
        and LULESH held 0.79 of RELeARN's runs instead of 0.87 (seed 0; the same points,
        10.7% MAPE). Where the store has strong scaling of its own, half is borrowed
        (:meth:`_correction_trees`).
        """
        if not self._borrowed_series:
            return dict.fromkeys(KINDS, False)
        weak = [s.weak for s in usable_own]
        return {"weak": any(weak), "strong": all(weak)}

    def _correction_trees(self, rows: FloatArray, target: FloatArray, weight: FloatArray,
                          beyond: np.ndarray, own: np.ndarray, wholly: dict[str, bool],
                          alone_apps: dict[str, np.ndarray],
                          ) -> tuple[dict[str, TreeEnsemble], dict[str, TreeEnsemble]]:
        """Per scaling kind, the correction trees, learned on the extrapolation examples
        (``beyond``): on every example where the store borrows nothing or the kind
        borrows wholly (:meth:`_borrows_wholly`); else the mean of trees learned on the
        store's own examples (``own``) and of trees learned on every example. And per
        application of ``alone_apps`` (:meth:`_apps_learning_alone`), the mean of trees
        learned on its own examples alone and of those learned on every example.

        Why half: the few applications of such a store teach a correction that carries
        its dominant code's saturation to the others (VASP's 165 series in a store of
        the four HPC data sets), and trees that also learned from the bundled data sets'
        applications know more codes but less of the store's; which of the two carries
        to a store's codes, its own nested examples (about one doubling, at small scale)
        did not tell (docs/accuracy.md, "Stores of a few series"). A fixed mean in log
        space, as for the base's laws and the peers, over five store-cut backtests of
        three seeds of that store (``python -m bench.accuracy_benchmark --repeats 3
        --seed S --dataset vasp_archer --dataset cp2k_readme --dataset castro_scaling
        --dataset pencilffts_jeanzay``, S = 0, 3, ..., 12): pooled MAPE 21.3% -> 20.5%
        in extrapolation (every data set lower, PencilFFTs 34.6% -> 27.2%), 20.5% ->
        20.7% in few-shot (no data set higher by more than 0.3 points); training on the
        bundled data sets in full (``--with-bundled``) scored 20.2% and 21.4%.

        A store of fewer than ``min_series_for_correction`` series of a kind is too
        small to learn a correction alone or to judge one on its own examples, and
        without one it was optimistic for codes that stop scaling; borrowing, it applies
        this half-borrowed one unjudged. In store-cut backtests of stores of four series
        of one data set (``python -m bench.accuracy_benchmark --small-stores 4 --repeats
        6 [--seed 100]``: two sets of six draws per data set) that lowered the MAPE in
        19 of 20 (data set, split) cells and tied the last, pooled 35.0% -> 30.6% in
        extrapolation and 33.4% -> 30.7% in few-shot (seed 0; training on the bundled
        data sets in full scored 30.7% and 32.5%), where applying it only where it beat
        the plain base on the store's own nested examples scored worse in 9 of 10 cells,
        and withholding it only where they establish harm (a paired t-test over the
        series at 5%) worse in each of the three cells where the test fired (4 of 60
        trainings; docs/accuracy.md, "Tried and rejected").
        """
        every = self._fit_trees(rows[beyond], target[beyond], weight[beyond]).ensemble_

        def half_with(learned_on: np.ndarray) -> TreeEnsemble:
            return TreeEnsemble.mean([self._fit_trees(
                rows[learned_on], target[learned_on], weight[learned_on]).ensemble_, every])

        by_app = {name: half_with(members & beyond) for name, members in alone_apps.items()}
        if own.all() or all(wholly.values()):
            return dict.fromkeys(KINDS, every), by_app
        half = half_with(own & beyond)
        return {k: every if wholly[k] else half for k in KINDS}, by_app

    def _apps_learning_alone(self, own_strong: np.ndarray, app: IntArray,
                             group: FloatArray, names: np.ndarray) -> dict[str, np.ndarray]:
        """The store's own strong-scaling applications that learn half of their
        correction on their own examples alone, each with the mask of its examples
        (every one of its series', the interior too): beside another application, those
        with ``min_series_for_correction`` series or more extrapolated in ``own_strong``
        (the store's own strong-scaling extrapolation examples), enough to learn a
        correction as a store of one code does. Their correction is the mean of those
        trees and the ones learned on every example; in a store that borrows, that
        replaces the store's own half (:meth:`_correction_trees`).

        Why: the trees learned on every example cannot keep the codes apart, and the
        code with the most series sets the shape of the others' correction (VASP's 165
        series, MLPerf Training's many submitters of a few models). Store-cut, Castro and
        CP2K in one store (``python -m bench.accuracy_benchmark --repeats 3 --dataset
        castro_scaling --dataset cp2k_readme``, seed 0): the base alone scored Castro
        18.6% alone and 17.9% beside CP2K, but with the correction 16.6% alone and
        19.8% beside CP2K; with each application's half learned alone, 15.7%. Over the
        six stores of two of the four HPC data sets and the four together (seed 0),
        extrapolation's pooled MAPE fell in six of seven (CP2K + VASP 20.2% -> 20.8%:
        VASP learned better beside CP2K's examples) and few-shot's rose in four, by
        0.2-2.3 points (docs/accuracy.md, "Half the correction borrowed").

        The same holds where nothing is borrowed: in the acceptance store (every data
        set; ``python -m bench.accuracy_benchmark --seed-spread 5 --repeats 3``, five
        backtests of three seeds) seven applications learn alone in extrapolation (VASP,
        Castro's two, PencilFFTs.jl, three MLPerf Training models) and nine in few-shot,
        and the pooled MAPE fell from 21.2% to 20.3% (extrapolation) and from 20.7% to
        20.0% (few-shot): MLPerf Training 27.7% to 24.1%, Castro 16.8% to 15.7% (its
        median APE now below Amdahl + log's), VASP's few-shot 22.8% to 21.9% (now below
        Amdahl + log's 22.6%), CP2K's few-shot 21.6% to 19.5%, but VASP's extrapolation
        20.3% to 20.7% and PencilFFTs' 24.3% to 24.9%; 16 of the 24 acceptance cells
        instead of 15. With each data set left out in turn (``--leave-out source
        --repeats 3``, seeds 0-2), 22.7% to 21.9% and 23.0% to 20.7%.
        """
        apps = np.unique(app[own_strong])
        if apps.size < 2:
            return {}  # the store's own correction is already its one application's
        members = {}
        for index in apps:
            extrapolated = own_strong & (app == index)
            if np.unique(group[extrapolated]).size >= self.min_series_for_correction:
                members[str(names[index])] = np.isin(group, np.unique(group[extrapolated]))
        return members

    def predict(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                ctx: SeriesContext | None = None) -> list[Prediction]:
        """:meth:`RuntimeModel.predict` of the fitted model."""
        return self.model_.predict(series, scales, confidence, ctx, self.peers_)

    def predict_columns(self, series: Series, scales: FloatArray, confidence: float = 0.9,
                        ctx: SeriesContext | None = None) -> Predictions:
        """:meth:`RuntimeModel.predict_columns` of the fitted model."""
        return self.model_.predict_columns(series, scales, confidence, ctx, self.peers_)

    def _series_folds(self, n_series: int) -> IntArray:
        """The fold of each training series for the application evidence: a series'
        nested examples borrow from its application's series in the other folds only."""
        return np.random.default_rng(self.random_state).permutation(n_series) % self.n_folds

    def _app_sums(self, per_series: FloatArray, app_of: IntArray, fold: IntArray,
                  n_apps: int) -> tuple[FloatArray, FloatArray]:
        """Columns of ``per_series`` summed per application, and for each series its
        application's sums less those of the series in its fold (cross-fitted)."""
        cell = app_of * self.n_folds + fold  # (application, fold)
        cells = np.stack([np.bincount(cell, weights=column, minlength=n_apps * self.n_folds)
                          for column in per_series.T], axis=1)
        app_total = cells.reshape(n_apps, self.n_folds, -1).sum(axis=1)
        return app_total, app_total[app_of] - cells[cell]

    def _pool_exponents(self, usable: list[Series], table: SeriesTable,
                        data: dict[str, np.ndarray], app_of: IntArray, fold: IntArray,
                        names: np.ndarray,
                        ) -> tuple[FloatArray, dict[str, tuple[float, ...]]]:
        """Each example's ``pooled_exponent_log`` feature (its context's power law with
        the exponent shrunk toward the application's, :mod:`perfpredict.overhead.shrinkage`),
        every context borrowing from its application's strong-scaling series in the
        other folds only (0 for weak scaling), and each application's exponent evidence
        from all its strong-scaling series, as the artifact keeps it.

        A feature for the trees, not a change of the base. Shrinking the ensemble's power
        member itself moved the plain base little (its few-shot MAPE on the seed-0
        store-cut round of the accuracy benchmark: VASP 26.9 -> 26.6, MLPerf 34.0 ->
        31.0), the trees relearned around it (cross-fitted nested error after correction
        0.090 either way), and the shared trees carried the change into RELeARN's
        weak-scaling correction (its mean log c 0.31 -> 0.38), so that under
        ``python -m bench.accuracy_benchmark --repeats 3`` RELeARN's few-shot 90%
        coverage fell 0.88 -> 0.71 and VASP's few-shot MAPE rose 23.1 -> 24.0, with the
        shrinkage in contexts of at most three scales or in all. As a feature, the trees
        use the application's exponent where the nested errors say it helps (MLPerf's
        models, whose series' exponents are alike) and pass it by where series differ
        (VASP's NCORE/KPAR variants: between-series s.d. of the exponent 0.24, against
        a residual s.d. of 0.09 about a series' line).
        """
        strong = np.array([not s.weak for s in usable], dtype=bool)
        _, sxx, exponent, residual_ss = line_moments(
            np.log(table.scales), np.log(table.medians_s), table.scale_start[:-1],
            table.n_scales)
        per_series = series_sums(sxx, exponent, residual_ss, table.n_scales) * strong[:, None]
        app_total, other_folds = self._app_sums(per_series, app_of, fold, names.size)
        pooled = pooled_exponent_log(data["power_exponent"], data["log_scale_ss"],
                                     data["log_scale_mean"], np.log(data["scale"]),
                                     other_folds[data["group"].astype(np.int64)])
        evidence = {name: tuple(float(v) for v in sums)
                    for name, sums in zip(names.tolist(), app_total, strict=True)
                    if sums[0] > 0}
        return np.where(data["kind"] == "strong", pooled, 0.0), evidence

    def _fit_app_evidence(self, names: np.ndarray, app_of: IntArray, fold: IntArray,
                          group: FloatArray, target: FloatArray, weight: FloatArray,
                          distance: FloatArray,
                          ) -> tuple[FloatArray, dict[str, tuple[float, float, int]]]:
        """Sum each application's evidence (:meth:`RuntimeModel.app_rate`) from the
        extrapolation examples given; return the rate each training series (``app_of``:
        its application's index in ``names``) trains with, and the evidence per
        application.

        A series trains with its application's rate from the series in the other folds
        only (cross-fitted target encoding, as scikit-learn's TargetEncoder). Leaving out
        just the series itself is not enough: with one application of many series (as
        RELeARN) the left-out rate moves with the series' own error, the trees read that
        error off it, and the calibrated intervals came out too narrow (RELeARN in
        ``evaluate --split random --repeats 5``: 0.84 of test runs inside 90% intervals).
        """
        series_log, series_doublings = _series_evidence(app_of.size, group, target, weight,
                                                        distance)
        per_series = np.column_stack([series_log, series_doublings, np.ones(app_of.size)])
        app_total, other = self._app_sums(per_series, app_of, fold, names.size)
        evidence = {name: (float(log_sum), float(doublings), int(count))
                    for name, (log_sum, doublings, count) in zip(
                        names.tolist(), app_total, strict=True)}
        return other[:, 0] / (other[:, 1] + APP_PRIOR_DOUBLINGS), evidence

    def _calibration(self, rows: FloatArray, target: FloatArray, residual: FloatArray,
                     weight: FloatArray, group: FloatArray, distance: FloatArray,
                     kind: np.ndarray, app: IntArray, apply_correction: dict[str, bool],
                     n_series_by_kind: dict[str, int], offset_log: FloatArray,
                     ramp: FloatArray,
                     ) -> tuple[dict[str, str], dict[str, FloatArray],
                                dict[str, DistanceConformal]]:
        """How each scaling kind is calibrated (:data:`CALIBRATED_BY`); per way of
        calibrating that some kind uses, the log spread of every example's residual so
        cross-fitted (each its own spread trees: the strong-scaling spreads stay those of
        the residuals they are calibrated with); each kind's conformal quantiles.

        By application where the kind's examples come from ``min_series_for_correction``
        applications or more: the quantiles of the normalised residuals of every example
        cross-fitted by application (:meth:`_app_scores`). Else by series: the kind's
        own quantiles of residuals cross-fitted by series where it has enough series,
        else those of all examples.

        Decided per kind, not for the store as a whole: when a kind has one or two
        applications, the residuals of trees that never saw one are those of a kind with
        nothing like it to learn from, while an estimate is only made for a trained
        application. Under the store-cut backtest (``python -m bench.accuracy_benchmark``:
        21 strong-scaling applications, two weak, RELeARN and LULESH), calibrating every
        kind by application gave RELeARN's 90% intervals a median relative width of 2.74
        in extrapolation and 3.53 in few-shot, where its median error was 7% and 10%,
        and they held every run (with its application left out, the weak-scaling
        correction had nothing to learn from, and the spread trees learned that weak
        scaling errs widely); calibrated by series, with its own spread trees, the weak
        kind's widths were 0.31 and 0.53 and its few-shot coverage 0.92, while the strong
        kind's intervals stayed as they were. By series for every kind instead held 0.77
        and 0.70 of VASP's runs (bench/storecut_research.py).
        """
        n_apps = {k: int(np.unique(app[kind == k]).size) for k in KINDS}
        calibrated_by = {k: "application" if n_apps[k] >= self.min_series_for_correction
                         else "series" for k in KINDS}
        by_app = np.array([calibrated_by[k] == "application" for k in kind.tolist()],
                          dtype=bool)
        log_spreads: dict[str, FloatArray] = {}
        conformal: dict[str, DistanceConformal] = {}
        if by_app.any():
            spread_app, score_app = self._app_scores(rows, target, weight, distance, kind,
                                                     app, apply_correction, offset_log,
                                                     ramp)
            log_spreads["application"] = spread_app
            pooled_app = DistanceConformal().fit(score_app, distance)
            conformal.update({k: pooled_app for k in KINDS
                              if calibrated_by[k] == "application"})
        if not by_app.all():
            spread_series, score = self._normalised_scores(rows, residual, offset_log,
                                                           weight, group)
            log_spreads["series"] = spread_series
            pooled = DistanceConformal().fit(score, distance)
            conformal.update({k: (DistanceConformal().fit(score[kind == k],
                                                          distance[kind == k])
                                  if n_series_by_kind[k] >= self.min_series_for_correction
                                  else pooled)
                              for k in KINDS if calibrated_by[k] == "series"})
        return calibrated_by, log_spreads, conformal

    def _app_scores(self, features: FloatArray, target: FloatArray, weight: FloatArray,
                    distance: FloatArray, kind: np.ndarray, app: IntArray,
                    apply_correction: dict[str, bool], offset_log: FloatArray,
                    ramp: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The log spreads and normalised conformal scores of residuals of trees that
        never saw the residual's application (cross-fitted by application, with no
        application evidence), their corrections ramped in by ``ramp`` as an estimate's
        are (:func:`perfpredict.model.base_estimate.correction_ramp`).

        Why by application: a store that has never run an application at large scale
        (the use) has no series whose residuals beyond the measured range are
        exchangeable with the query's; an application's other series were. Under the
        store-cut backtest (bench/storecut_research.py, fixed ensemble base), residuals
        cross-fitted by series gave 90% intervals holding 0.80 of the test runs pooled
        in extrapolation and 0.72 in few-shot (VASP 0.73 and 0.61, PencilFFTs 0.62 and
        0.52); by application, 0.87 and 0.83. Needs ``min_series_for_correction``
        applications or more: with fewer, their residuals do not stand for the next
        one's (a pool of RELeARN, LULESH and one new code gave intervals of +-1%). One
        assignment of applications to folds, not ``n_repeats``.
        """
        features = features.copy()
        features[:, FEATURE_NAMES.index("app_prior_log")] = 0.0
        features[:, FEATURE_NAMES.index("pooled_exponent_log")] = 0.0
        beyond = distance > 0
        oof = self._oof_correction(features, target, weight, app, beyond, n_repeats=1) * ramp
        residual = _residual(target, oof, kind, beyond, apply_correction)
        return self._normalised_scores(features, residual, offset_log, weight, app,
                                       n_repeats=1)

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

    def _normalised_scores(self, features: FloatArray, residual: FloatArray,
                           offset_log: FloatArray, weight: FloatArray, group: np.ndarray,
                           n_repeats: int | None = None) -> tuple[FloatArray, FloatArray]:
        """The log spread of each residual, and the residual of the prediction made
        (inside the measured range the base moved by ``offset_log`` onto the measured
        runs, :func:`perfpredict.model.base_estimate.measured_offset_log`) over its
        cross-fitted spread (by ``group``): the normalised conformal scores.

        The spread is learned on the residuals of the base itself inside the measured
        range, as before the base was moved there: normalised conformal intervals hold
        for any spread, which only ranks how hard a query is, and a series' miss of its
        own laws between measured scales says how hard moving it is too (a series that
        bends or is noisy). Learned on the moved residuals, the interpolation examples
        moved the extrapolation intervals through the trees both share: over five
        store-cut backtests of three seeds the coverage of six of the twelve (data set,
        split) cells moved by 0.011-0.066 (RELeARN's extrapolation 0.947 -> 0.963, CP2K's
        few-shot 0.926 -> 0.953), no prediction beyond the measured range moving; learned
        on the base's residuals, no cell's moved by more than 0.002 (the interior bin's
        quantiles are pooled with the next bin's, :class:`DistanceConformal`).
        """
        log_spread = np.log(np.abs(residual) + SPREAD_FLOOR_LOG)
        spread = np.exp(self._cross_fit(features, log_spread, weight, group, n_repeats))
        return log_spread, (residual - offset_log) / spread

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
                reg = self._fit_trees(features[~test], target[~test], weight[~test])
                total[test] += reg.predict(features[test])
        return total / n_repeats


def too_few_applications(series_list: list[Series],
                         minimum: int = MIN_SERIES_FOR_CORRECTION) -> bool:
    """Whether ``series_list`` holds series of three or more scales, but strong-scaling
    ones from fewer than ``minimum`` applications (or none): too few to calibrate their
    intervals on applications left out (:meth:`HybridPredictor._calibration`), so that
    they would be calibrated by series, which held too few test runs beyond the measured
    range in store-cut backtests of such stores: 0.58 and 0.73 of VASP's (extrapolation,
    few-shot), 0.61 and 0.46 of PencilFFTs', 0.82 and 0.83 of Castro's, 0.73 and 0.75 in
    a store of the four HPC data sets (docs/accuracy.md). A store of weak scaling alone
    counts too: its correction learns from strong scaling's examples
    (:meth:`HybridPredictor._borrows_wholly`)."""
    return (len(strong_applications(series_list)) < minimum
            and any(s.scales.size >= 3 for s in series_list))


def strong_applications(series_list: list[Series]) -> set[str]:
    """The applications of ``series_list``'s strong-scaling series of three or more
    scales: those the correction and the intervals learn strong scaling from."""
    return {s.key.app for s in series_list if not s.weak and s.scales.size >= 3}


__all__ = ["HybridPredictor", "strong_applications", "too_few_applications"]

"""Series contexts in bulk: the candidate laws and shape summary of many series, or of
the k smallest scales of many series, computed as arrays.

Training needs a context for every cut of every series (the nested examples) and for
every series in full (the artifact's entries): tens of thousands of fits of a handful of
points each. One Python call per context took about 1 ms, minutes on a center's store.
Here the runs of all series are laid out as flat columns once (:class:`SeriesTable`),
and contexts with the same number of scales are fitted together
(:meth:`perfpredict.laws.base.ScalingLaw.fit_rows`): medians, slopes, the power law and
the laws' predictions as array operations, the non-negative least squares one C call per
fit. A single series' context (:func:`perfpredict.overhead.features.fit_context`) goes
through the same code, so training and prediction see the same fits, to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from perfpredict.laws import LAWS, ScalingLaw
from perfpredict.laws.base import FloatArray, IntArray, line_fit_rows
from perfpredict.model.series import Series
from perfpredict.uncertainty.noise import RepeatNoise

#: Laws the hybrid weighs; each must be fittable from two scales except where noted.
CANDIDATE_LAWS = ("amdahl", "amdahl_log", "gustafson", "power")
#: The law that stands in for one a context has too few scales to determine.
FALLBACK_LAW = "amdahl"
#: An interval between consecutive measured scales of fixed work is a cache effect (the
#: per-node working set dropped into cache) where its speed-up beats ideal scaling by
#: more than this factor: 10%, beyond what the run-to-run noise of two medians makes
#: (a few percent). The laws are fitted to the scales after the last such interval.
SUPERLINEAR_FACTOR = 1.1
#: Fewest scales left after a cache effect for the laws to be fitted to them alone: as
#: many as every candidate law needs (Amdahl + log: three).
MIN_SCALES_AFTER_CACHE = 3


@dataclass
class SeriesContext:
    """Everything the predictor derives from one series' measured runs."""

    series: Series
    scales: FloatArray
    medians_s: FloatArray
    laws: dict[str, ScalingLaw]
    summary: FloatArray  # the features that do not depend on the query scale
    #: how far its repeated runs landed from the others at their scale; the interval of
    #: a repeat at a measured scale where there are enough (RuntimeModel.predict_columns)
    repeat_noise: RepeatNoise

    @property
    def repeated(self) -> bool:
        """Some measured scale was run more than once, so the series shows its own
        run-to-run noise; without, an interval is widened to that of trained series
        with repeats (:class:`perfpredict.uncertainty.noise.NoiseFloor`)."""
        return self.repeat_noise.deviations_log.size > 0

    @property
    def scale_max(self) -> float:
        return float(self.scales[-1])

    @property
    def scale_min(self) -> float:
        return float(self.scales[0])

    @property
    def laws_scale_min(self) -> float:
        """The smallest scale the laws were fitted to: above :attr:`scale_min` where
        they start after a cache effect (:func:`after_cache_effect`)."""
        return min((law.fitted_scale_min_ for law in self.laws.values()),
                   default=self.scale_min)


def block_positions(sizes: IntArray) -> IntArray:
    """0, 1, ..., size - 1 for each block of ``sizes``, concatenated."""
    total = int(sizes.sum())
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.arange(total, dtype=np.int64) - starts


class SeriesTable(NamedTuple):
    """A list of series as flat columns: their runs, series after series, and their
    distinct scales (ascending within a series) with what the runs at each measured."""

    run_start: IntArray  # (n_series + 1,): where each series' runs begin
    run_scale: FloatArray
    runtime_s: FloatArray
    run_scale_index: IntArray  # the run's scale among its series' distinct scales
    scale_start: IntArray  # (n_series + 1,): where each series' distinct scales begin
    scales: FloatArray
    medians_s: FloatArray  # median runtime at each distinct scale
    noise_log: FloatArray  # std of the log runtimes there (0 for a single run)
    repetitions: IntArray  # runs at each distinct scale
    #: per run, |log| of its runtime against the mean of the other runs at its scale
    #: (NaN for a run alone there), leave-one-out as a new run meets the runs before it:
    #: what :class:`~perfpredict.uncertainty.noise.RepeatNoise` and the noise floor read
    repeat_deviation_log: FloatArray
    io_bytes_per_node: FloatArray  # median over the runs there that record it, else NaN

    @classmethod
    def of(cls, series_list: list[Series]) -> SeriesTable:
        if not series_list:
            raise ValueError("no series")
        sizes = np.array([s.scale.size for s in series_list], dtype=np.int64)
        series_of = np.repeat(np.arange(len(series_list)), sizes)
        run_scale = np.concatenate([s.scale for s in series_list])
        runtime = np.concatenate([s.runtime_s for s in series_list])
        order = np.lexsort((runtime, run_scale, series_of))
        sorted_series, sorted_scale, sorted_runtime = (
            series_of[order], run_scale[order], runtime[order])
        new = np.ones(order.size, dtype=bool)
        new[1:] = ((sorted_series[1:] != sorted_series[:-1])
                   | (sorted_scale[1:] != sorted_scale[:-1]))
        first = np.flatnonzero(new)
        count = np.diff(np.append(first, order.size))
        # np.median: the middle run, or the mean of the two middle runs
        medians = (sorted_runtime[first + (count - 1) // 2]
                   + sorted_runtime[first + count // 2]) / 2
        log_runtime = np.log(sorted_runtime)
        group = np.cumsum(new) - 1
        log_sums = np.add.reduceat(log_runtime, first)
        deviation = log_runtime - (log_sums / count)[group]
        noise = np.sqrt(np.add.reduceat(deviation * deviation, first) / count)
        at_scale = count[group]
        others_mean = (log_sums[group] - log_runtime) / np.maximum(at_scale - 1, 1)
        repeat_deviation = np.empty(order.size)
        repeat_deviation[order] = np.where(at_scale >= 2, np.abs(log_runtime - others_mean),
                                           np.nan)
        n_scales = np.bincount(sorted_series[first], minlength=len(series_list))
        scale_start = np.concatenate([[0], np.cumsum(n_scales)]).astype(np.int64)
        run_group = np.empty(order.size, dtype=np.int64)
        run_group[order] = group
        return cls(run_start=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   run_scale=run_scale, runtime_s=runtime,
                   run_scale_index=run_group - scale_start[series_of],
                   scale_start=scale_start, scales=sorted_scale[first], medians_s=medians,
                   noise_log=noise, repetitions=count, repeat_deviation_log=repeat_deviation,
                   io_bytes_per_node=_io_medians(series_list, series_of, run_scale, first))

    @property
    def n_scales(self) -> IntArray:
        """Distinct scales of each series."""
        return np.diff(self.scale_start)

    @property
    def n_runs(self) -> IntArray:
        return np.diff(self.run_start)

    def run_series(self) -> IntArray:
        """The series index of each run."""
        return np.repeat(np.arange(self.n_runs.size), self.n_runs)


def _io_medians(series_list: list[Series], series_of: IntArray, run_scale: FloatArray,
                first: IntArray) -> FloatArray:
    """Per distinct scale (the groups :meth:`SeriesTable.of` finds, starting at ``first``
    in run order sorted by series and scale), the median I/O bytes per node of the runs
    that record it; NaN where none does."""
    if all(s.io_bytes is None for s in series_list):  # the common case: skip the sort
        return np.full(first.size, np.nan)
    per_node = np.concatenate([s.io_bytes_per_node() for s in series_list])
    ordered = per_node[np.lexsort((per_node, run_scale, series_of))]  # NaN last in a group
    known = np.add.reduceat(~np.isnan(ordered), first)
    # the middle known run, or the mean of the two middle ones (as SeriesTable's medians)
    median = (ordered[first + np.maximum(known - 1, 0) // 2] + ordered[first + known // 2]) / 2
    return np.where(known > 0, median, np.nan)


class ContextBatch(NamedTuple):
    """Contexts as columns, one row per (series, k smallest scales) pair."""

    table: SeriesTable
    series_index: IntArray
    n_scales: IntArray
    scale_max: FloatArray
    #: Features that do not depend on the query scale, in the order of
    #: :data:`perfpredict.overhead.features.FEATURE_NAMES` from "log2_scale_max" on.
    summary: FloatArray
    #: Each candidate law's state per context (NaN where it has too few scales).
    law_states: dict[str, dict[str, FloatArray]]

    def law_log_predictions(self, rows: IntArray, p: FloatArray) -> FloatArray:
        """log runtime each candidate law (columns, in :data:`CANDIDATE_LAWS` order) of
        context ``rows[i]`` predicts at ``p[i]``; a law a context cannot determine (too
        few scales) stands in with Amdahl's prediction."""
        out = np.repeat(self._law_log(FALLBACK_LAW, rows, p)[:, None], len(CANDIDATE_LAWS),
                        axis=1)
        for j, name in enumerate(CANDIDATE_LAWS):
            fitted = self.n_scales[rows] >= LAWS[name].min_scales
            if name != FALLBACK_LAW and fitted.any():
                out[fitted, j] = self._law_log(name, rows[fitted], p[fitted])
        return out

    def _law_log(self, name: str, rows: IntArray, p: FloatArray) -> FloatArray:
        state = {key: values[rows] for key, values in self.law_states[name].items()}
        return np.log(LAWS[name].from_state(state).predict(p))

    def context(self, row: int, series: Series) -> SeriesContext:
        """Context ``row`` as one :class:`SeriesContext` (``series`` is its series)."""
        start = int(self.table.scale_start[self.series_index[row]])
        end = start + int(self.n_scales[row])
        laws = {name: LAWS[name].from_state({key: float(values[row])
                                             for key, values in self.law_states[name].items()})
                for name in CANDIDATE_LAWS if self.n_scales[row] >= LAWS[name].min_scales}
        index = int(self.series_index[row])
        runs = slice(int(self.table.run_start[index]), int(self.table.run_start[index + 1]))
        deviation = self.table.repeat_deviation_log[runs][
            self.table.run_scale_index[runs] < self.n_scales[row]]
        return SeriesContext(series, self.table.scales[start:end],
                             self.table.medians_s[start:end], laws, self.summary[row].copy(),
                             RepeatNoise(np.sort(deviation[~np.isnan(deviation)])))


def _series_columns(series_list: list[Series]) -> FloatArray:
    """The summary features that are the series' own: weak, layout, problem size."""
    rows = []
    for series in series_list:
        size = series.problem_size_num
        rows.append((
            float(series.weak),
            np.log2(series.ranks_per_node) if series.ranks_per_node else np.nan,
            series.threads_per_rank if series.threads_per_rank else np.nan,
            np.log10(size) if size and size > 0 else np.nan))
    return np.array(rows, dtype=float).reshape(len(series_list), 4)


def fit_contexts(table: SeriesTable, series_list: list[Series], series_index: IntArray,
                 n_scales: IntArray) -> ContextBatch:
    """Fit the candidate laws to the ``n_scales[i]`` smallest distinct scales of series
    ``series_index[i]`` (at least two) of ``table`` (built from ``series_list``), for
    every i, on the per-scale medians, and summarise each context's shape."""
    series_index = np.asarray(series_index, dtype=np.int64)
    n_scales = np.asarray(n_scales, dtype=np.int64)
    if np.any(n_scales < 2):
        raise ValueError("a series needs at least two measured scales")
    n = series_index.size
    start = table.scale_start[series_index]
    top = start + n_scales - 1
    states: dict[str, dict[str, FloatArray]] = {name: {} for name in CANDIDATE_LAWS}
    mean_slope = np.empty(n)
    holdout = np.full((n, len(CANDIDATE_LAWS)), np.nan)
    fixed_work = np.array([not s.weak and s.fixed_work for s in series_list], dtype=bool)
    law_start = np.zeros(n, dtype=np.int64)
    for k in np.unique(n_scales).tolist():
        rows = np.flatnonzero(n_scales == k)
        columns = start[rows, None] + np.arange(k)
        p, t = table.scales[columns], table.medians_s[columns]
        law_start[rows] = after_cache_effect(p, t, fixed_work[series_index[rows]])
        mean_slope[rows] = line_fit_rows(np.log2(p), np.log2(t))[0]
    # the laws of contexts with the same scales and start, fitted together
    for k, skip in sorted({(int(k), int(s)) for k, s in zip(n_scales, law_start, strict=True)}):
        rows = np.flatnonzero((n_scales == k) & (law_start == skip))
        columns = start[rows, None] + np.arange(skip, k)
        p, t = table.scales[columns], table.medians_s[columns]
        for j, name in enumerate(CANDIDATE_LAWS):
            if k - skip < LAWS[name].min_scales:
                continue
            for key, values in LAWS[name].fit_rows(p, t).items():
                states[name].setdefault(key, np.full(n, np.nan))[rows] = values
            if k - skip - 1 >= max(2, LAWS[name].min_scales):
                holdout[rows, j] = _holdout_log_error(name, p, t)
    scale_max = table.scales[top]
    edge = _two_point_slope(table, top - 1)
    first = _two_point_slope(table, start)
    summary = np.column_stack([
        np.log2(scale_max), n_scales.astype(float), edge, mean_slope, edge - first,
        table.noise_log[top], np.log2(np.maximum(table.io_bytes_per_node[top], 1.0)),
        _series_columns(series_list)[series_index], holdout])
    return ContextBatch(table, series_index, n_scales, scale_max, summary, states)


def after_cache_effect(p: FloatArray, t: FloatArray, fixed_work: np.ndarray) -> IntArray:
    """Per row of scales ``p`` and median runtimes ``t`` (rows x k, increasing scales),
    the first column the laws are fitted from: the one after the last interval that
    beat ideal scaling by more than :data:`SUPERLINEAR_FACTOR`, for fixed work and where
    :data:`MIN_SCALES_AFTER_CACHE` or more scales follow it; else 0.

    DESIGN.md: "when the per-node working set drops into cache, runtime falls faster
    than 1/p, then the curve turns. A law that cannot express it (Amdahl) is wrong in
    both directions around the turn." Fitted across the turn, Amdahl's and Amdahl +
    log's serial terms go to 0 (ideal scaling without end) and the power law's exponent
    below -1 (faster than ideal without end): CP2K's LiH HFX on Jaguar, 6,569 s at 128
    nodes and 1,370 s at 256 (4.8 times faster for twice the nodes), then 1.9 and 1.8
    times per doubling to 1,024 nodes, was predicted 65 s at 8,192 nodes, where it ran
    256 s. The regime after the turn is the one that goes on; the turn itself is a step
    the laws cannot carry past the measured range. Time-to-train (not fixed work) beats
    ideal scaling where batch sizes change, and is fitted whole."""
    beat = (t[:, :-1] / t[:, 1:]) > SUPERLINEAR_FACTOR * (p[:, 1:] / p[:, :-1])
    k = p.shape[1]
    # the column after the last beating interval (0 where none beat ideal)
    after = np.where(beat.any(axis=1), k - 1 - np.argmax(beat[:, ::-1], axis=1), 0)
    return np.where(fixed_work & (k - after >= MIN_SCALES_AFTER_CACHE), after, 0)


def _holdout_log_error(name: str, p: FloatArray, t: FloatArray) -> FloatArray:
    """log(prediction / measured median) at each row's largest scale, of law ``name``
    fitted on the smaller ones: how well the law extrapolates within the series itself,
    the evidence the issue asks a law to be chosen by (the trees weigh it, rather than a
    choice from one held-out point)."""
    law = LAWS[name]
    predicted = law.from_state(law.fit_rows(p[:, :-1], t[:, :-1])).predict(p[:, -1])
    return np.log(predicted / t[:, -1])


def _two_point_slope(table: SeriesTable, index: IntArray) -> FloatArray:
    """d log T / d log p between distinct scales ``index`` and ``index + 1``."""
    columns = index[:, None] + np.arange(2)
    return line_fit_rows(np.log2(table.scales[columns]), np.log2(table.medians_s[columns]))[0]


def full_contexts(series_list: list[Series]) -> tuple[IntArray, ContextBatch]:
    """Contexts of every series in ``series_list`` with two or more distinct scales, on
    all of them: (the index of each such series, their contexts in that order)."""
    table = SeriesTable.of(series_list)
    fitted = np.flatnonzero(table.n_scales >= 2)
    return fitted, fit_contexts(table, series_list, fitted, table.n_scales[fitted])

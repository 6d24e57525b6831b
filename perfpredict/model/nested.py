"""Nested extrapolation: the examples the hybrid learns from.

For every series with three or more scales and every cut k, the laws are fitted on the
k smallest scales and asked for the larger ones; every interior scale of a cut is also
predicted from the cut's other scales (interpolation, for the intervals between measured
scales). Training (:mod:`perfpredict.model.fit`) learns the correction and calibrates the
intervals on these examples, so they are built the way predictions are used: from a
context of a series' smaller runs, asking about a scale it has not measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray, IntArray
from perfpredict.model.base_estimate import ensemble_log, measured_offset_log
from perfpredict.model.series import Series
from perfpredict.overhead.contexts import (
    ContextBatch,
    SeriesTable,
    block_positions,
    fit_contexts,
)
from perfpredict.overhead.shrinkage import line_moments


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
    #: log median runtime at the context's largest scale
    edge_log_runtime: list[FloatArray] = field(default_factory=list)
    #: the context's mean log scale, S_xx and power-law exponent (shrinkage.line_moments)
    log_scale_mean: list[FloatArray] = field(default_factory=list)
    log_scale_ss: list[FloatArray] = field(default_factory=list)
    power_exponent: list[FloatArray] = field(default_factory=list)
    #: inside the measured range, the base's miss at the measured scales around the
    #: example's (interpolated; :func:`perfpredict.model.base_estimate.measured_offset_log`)
    #: that the base is moved by; 0 beyond it, where training moves a strong-scaling
    #: base by its miss at the context's largest scale
    #: (:func:`perfpredict.model.base_estimate.edge_offset_log`, from ``edge_law_logs``)
    measured_offset_log: list[FloatArray] = field(default_factory=list)
    #: the laws' log predictions at the context's largest scale (n, n_laws)
    edge_law_logs: list[FloatArray] = field(default_factory=list)
    #: log2 of the context's largest scale over its second largest
    edge_spacing_log2: list[FloatArray] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        if not self.scale:
            raise ValueError("no nested examples")
        return {name: np.concatenate(getattr(self, name)) for name in (
            "summary", "scale", "scale_max", "law_logs", "log_runtime", "group", "weight",
            "kind", "edge_log_runtime", "log_scale_mean", "log_scale_ss", "power_exponent",
            "measured_offset_log", "edge_law_logs", "edge_spacing_log2")}


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
                    random_state: int = 0, client: Any | None = None) -> NestedExamples:
    """Fit on the k smallest scales of each series, target its larger runs, for every k;
    on ``client``'s dask.distributed cluster, one task per chunk of series, when given.

    With more than ``max_examples`` examples, those of a uniform sample of series (drawn
    with ``random_state``, so training stays reproducible) are used, as many series as
    fit within ``max_examples``; each example's group stays its series' index in
    ``series_list``.
    """
    from perfpredict._imports import require

    indices = _sample_series(series_list, min_context, max_examples, random_state)
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
    base moved onto the runs at the measured scales around the query, as it is here
    (the correction applies beyond the measured range). Without these
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
    left_out_row = table.scale_start[owner[context]] + left_out[context]
    below, above = left_out_row - 1, left_out_row + 1  # the cut holds both
    offset_log = measured_offset_log(
        table.scales[below], _base_miss_log(contexts, context, table, below),
        table.scales[above], _base_miss_log(contexts, context, table, above),
        table.run_scale[run])
    _add_examples(examples, table, weak, groups, contexts, context, run, owner[context],
                  offset_log)


def _base_miss_log(contexts: ContextBatch, context: IntArray, table: SeriesTable,
                   scale_row: IntArray) -> FloatArray:
    """log measured median less log base of context ``context[i]`` at the measured scale
    ``scale_row[i]`` of ``table`` (inside the measured range: no slope drift)."""
    scale = table.scales[scale_row]
    base_log = ensemble_log(contexts.law_log_predictions(context, scale),
                            np.full(scale.size, np.nan))
    return np.log(table.medians_s[scale_row]) - base_log


def _add_examples(examples: NestedExamples, table: SeriesTable, weak: np.ndarray,
                  groups: list[int], contexts: ContextBatch, context: IntArray, run: IntArray,
                  series: IntArray, measured_offset: FloatArray | None = None) -> None:
    """Append one example per (``context[i]``, ``run[i]`` of ``table``) pair, the run
    belonging to series ``series[i]`` (``weak``: each series' scaling kind), the base
    moved by ``measured_offset`` (inside the measured range; none beyond it)."""
    p = table.run_scale[run]
    examples.measured_offset_log.append(np.zeros(p.size) if measured_offset is None
                                        else measured_offset)
    examples.summary.append(contexts.summary[context])
    examples.scale.append(p)
    examples.scale_max.append(contexts.scale_max[context])
    examples.law_logs.append(contexts.law_log_predictions(context, p))
    # once per context, not per example: a context has as many examples as runs beyond it
    every_context = np.arange(contexts.scale_max.size)
    examples.edge_law_logs.append(contexts.law_log_predictions(
        every_context, contexts.scale_max)[context])
    examples.log_runtime.append(np.log(table.runtime_s[run]))
    examples.group.append(np.asarray(groups, dtype=float)[series])
    # every (series, context, scale) counts once, however many repetitions it has
    scale_row = table.scale_start[series] + table.run_scale_index[run]
    examples.weight.append(1.0 / table.repetitions[scale_row])
    examples.kind.append(np.where(weak[series], "weak", "strong"))
    top = (contexts.table.scale_start[contexts.series_index[context]]
           + contexts.n_scales[context] - 1)
    examples.edge_log_runtime.append(np.log(contexts.table.medians_s[top]))
    # every context holds two scales or more
    examples.edge_spacing_log2.append(np.log2(contexts.table.scales[top]
                                              / contexts.table.scales[top - 1]))
    x_mean, sxx, exponent, _ = line_moments(
        np.log(contexts.table.scales), np.log(contexts.table.medians_s),
        contexts.table.scale_start[contexts.series_index], contexts.n_scales)
    examples.log_scale_mean.append(x_mean[context])
    examples.log_scale_ss.append(sxx[context])
    examples.power_exponent.append(exponent[context])


__all__ = ["MAX_NESTED_EXAMPLES", "NestedExamples", "nested_examples"]

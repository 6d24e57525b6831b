"""Who is tested on what, and what each predictor may learn from while it is.

A backtest has a *split* (which runs of a series are its context and which are predicted)
and a *protocol* (what the rest of the store looks like to the predictor meanwhile).

Splits by scale (per series with at least four distinct scales; every repetition at a
scale goes to the same side, so no measurement of a test scale leaks into the context):

* ``extrapolate``: context = the lower half of its distinct scales, test = the upper half.
* ``fewshot``: context = its three smallest scales, test = the rest.
* ``random``: as many test scales as ``extrapolate`` holds out, drawn at random from all
  but the smallest (which stays in the context, so speedups against it exist); the rest
  is the context. It measures interpolation between measured scales as well as
  extrapolation. The draw is seeded by ``random_state`` and the series' key, so a
  series' split does not change when other series are added to the store.

The ``time`` split asks what a center would have seen had it trained perfpredict on the
day its records were half written: the cut is the median submission time of the store's
runs (start or end time where the submission is unknown), the context is every run
submitted at or before it, the test every run submitted after it. A series is tested when
it has runs at two or more distinct scales before the cut and runs after it; test runs may
repeat a context scale (jobs are rerun) or lie beyond it. Runs still running at the cut
count as context: the store records when a job was submitted, not when a user would have
read its runtime. Runs without any time are not used. Nothing after the cut is visible to
anything, so the time split is a store cut whatever the protocol.

Protocols (what the predictor sees of the series that are not being predicted):

* ``store-cut`` (the default): every tested series is cut at once and one predictor is
  trained on the cut store, untested series (fewer than four scales) in full. Nothing
  beyond a cut is seen by anything, which is how a store looks that has never run its
  applications at the scales asked about: the use.
* ``by-series``: cross-fitting. Tested series are split into folds, and a fold is
  predicted by a predictor trained on every other series *in full* plus the fold's own
  contexts: the case "other applications on this machine have already run large". It
  is easier than the use, and its figures are reported beside the store cut's, labelled.
* ``leave-out`` by data set (``source``) or ``system``: per group, one predictor trained
  on that group's series cut and the rest of the store in full, predicting the group's
  tested series: transfer to a new center (or a new machine) whose own runs stop at
  the cut.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from perfpredict.errors import BadInputError, NotTrainedError
from perfpredict.laws.base import FloatArray
from perfpredict.model.series import Series
from perfpredict.utc import utc_text

SCALE_SPLITS = ("extrapolate", "fewshot", "random")
SPLITS = (*SCALE_SPLITS, "time")
PROTOCOLS = ("store-cut", "by-series")
LEAVE_OUT = ("source", "system")
MIN_TEST_SCALES = 4


def context_scales(series: Series, split: str, random_state: int = 0) -> FloatArray:
    """The distinct scales of ``series`` that a scale split gives the predictor."""
    scales = series.scales
    n_context = max(2, math.ceil(scales.size / 2))
    if split == "extrapolate":
        return scales[:n_context]
    if split == "fewshot":
        return scales[:3]
    if split == "random":
        rng = np.random.default_rng([random_state, zlib.crc32("\x1f".join(series.key).encode())])
        drawn = rng.choice(scales[1:], size=n_context - 1, replace=False)
        return np.sort(np.concatenate([scales[:1], drawn]))
    raise ValueError(f"unknown split {split!r}; choose one of: {', '.join(SCALE_SPLITS)}")


@dataclass(frozen=True)
class Holdout:
    """One tested series: what the predictor may see of it, and which of its runs to predict."""

    context: Series
    test: np.ndarray  # one bool per run of the tested series


@dataclass(frozen=True)
class SplitPlan:
    """The holdouts of a split, and each series as a predictor may see it while it is
    not itself tested (``full``; None: not at all, such as a series with no run before
    the time split's cut).

    ``cut(i)`` is series ``i`` as the store looks when every tested series is cut.
    """

    holdouts: dict[int, Holdout]
    full: list[Series | None]

    def cut(self, i: int) -> Series | None:
        holdout = self.holdouts.get(i)
        return self.full[i] if holdout is None else holdout.context


@dataclass(frozen=True)
class TrainingRound:
    """One predictor's training: the series it learns from (``pool``) and the indices of
    the tested series it then predicts."""

    pool: list[Series]
    tested: list[int]


def plan_split(series_list: list[Series], split: str, random_state: int = 0) -> SplitPlan:
    """The holdouts of ``split`` (see the module docstring) over ``series_list``."""
    if split == "time":
        return _time_plan(series_list)
    holdouts = {}
    for i, series in enumerate(series_list):
        if series.scales.size >= MIN_TEST_SCALES:
            keep = context_scales(series, split, random_state)
            in_context = np.isin(series.scale, keep)
            holdouts[i] = Holdout(series.select(in_context), ~in_context)
    if not holdouts:
        raise NotTrainedError(
            "no series has four or more distinct scales to backtest; ingest more runs")
    return SplitPlan(holdouts, list(series_list))


def training_rounds(plan: SplitPlan, protocol: str = "store-cut",
                    leave_out_group: Callable[[int], str] | None = None, n_folds: int = 5,
                    random_state: int = 0) -> list[TrainingRound]:
    """The predictors a backtest trains under ``protocol`` (or, with ``leave_out_group``,
    one per group of series, each seeing its own group cut and the rest in full)."""
    if protocol not in PROTOCOLS:
        raise BadInputError(f"unknown protocol {protocol!r}; choose one of: "
                            f"{', '.join(PROTOCOLS)}")
    tests = sorted(plan.holdouts)
    if all(plan.full[i] is plan.holdouts[i].context for i in tests):
        # nothing lies beyond a cut (the time split): every protocol is the store cut
        return [_round(plan, set(tests))]
    if leave_out_group is not None:
        groups: dict[str, set[int]] = {}
        for i in tests:
            groups.setdefault(leave_out_group(i), set()).add(i)
        return [_round(plan, tested, cut_too={i for i in range(len(plan.full))
                                              if leave_out_group(i) == g})
                for g, tested in sorted(groups.items())]
    if protocol == "store-cut":
        return [_round(plan, set(tests), cut_too=set(range(len(plan.full))))]
    rng = np.random.default_rng(random_state)
    fold_of = dict(zip(tests, rng.permutation(len(tests)) % n_folds, strict=True))
    return [_round(plan, {i for i in tests if fold_of[i] == fold})
            for fold in range(min(n_folds, len(tests)))]


def _round(plan: SplitPlan, tested: set[int], cut_too: set[int] | None = None) -> TrainingRound:
    """The tested series and the series in ``cut_too`` as the cut store has them, every
    other series in full."""
    cut = tested | (cut_too or set())
    seen = (plan.cut(i) if i in cut else plan.full[i]
            for i in range(len(plan.full)))
    return TrainingRound([s for s in seen if s is not None], sorted(tested))


def time_cut_epoch_s(series_list: list[Series]) -> float:
    """The time split's cut: the median submission time of the runs that have one."""
    times = [s.submitted_epoch_s for s in series_list if s.submitted_epoch_s is not None]
    known = np.concatenate([np.empty(0), *times])
    if np.isnan(known).all():
        raise NotTrainedError(
            "the time split needs submission times and no run of a scaling series has "
            "one; ingest runs with a submit_time column (CSV), or scheduler jobs that "
            "state their problem size or variant")
    return float(np.nanmedian(known))


def _time_plan(series_list: list[Series]) -> SplitPlan:
    cut_s = time_cut_epoch_s(series_list)
    holdouts: dict[int, Holdout] = {}
    visible: list[Series | None] = []
    for i, series in enumerate(series_list):
        submitted = series.submitted_epoch_s
        if submitted is None:
            visible.append(None)
            continue
        before = submitted <= cut_s  # NaN compares false: undated runs are on no side
        context = series.select(before)
        visible.append(context if before.any() else None)
        after = submitted > cut_s
        if context.scales.size >= 2 and after.any():
            holdouts[i] = Holdout(context, after)
    if not holdouts:
        raise NotTrainedError(
            f"no series has runs at two or more scales submitted by {utc_text(cut_s)} (the "
            "median submission time) and runs submitted after it; the time split needs "
            "series measured over time")
    return SplitPlan(holdouts, visible)

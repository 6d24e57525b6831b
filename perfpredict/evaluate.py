"""Backtests on the store: the hybrid against each law alone, Extra-P and a black box,
measured in one run on the same splits.

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
submitted at or before it, the test every run submitted after it. Nothing submitted
after the cut is used anywhere, not by the other series' training runs nor by the black
box, so one predictor, trained on the whole pre-cut store, predicts every tested series.
A series is tested when it has runs at two or more distinct scales before the cut and
runs after it; test runs may repeat a context scale (jobs are rerun) or lie beyond it.
Runs still running at the cut count as context: the store records when a job was
submitted, not when a user would have read its runtime. Runs without any time are not
used.

The scale splits are cross-fitted: series are split into folds, and a fold's series are
predicted by a predictor trained on every other series in full plus the fold's own
context runs, never on the runs being predicted. The black box sees the same runs. Every
figure is over test runs (each repetition counts), except ``within_10pct`` which is the
share of series whose mean absolute percentage error is at most 10%.

``repeats`` runs a scale split again with other fold assignments (and, for ``random``,
other draws) and pools the predictions, so every figure is a mean over the repetitions:
with a few dozen series, which series train a fold's predictor moves a data set's
coverage by several points, and one assignment's figure says more about the assignment
than about the method (repeated cross-validation).

A series' test runs hit or miss their intervals together (its repetitions share one
context), so a data set's coverage is known only to within a few points. The 95% interval
of the coverage (``coverage_ci_low`` to ``coverage_ci_high``) comes from a bootstrap that
resamples whole series, not runs.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfpredict.errors import BadInputError, NotTrainedError
from perfpredict.laws import LAWS
from perfpredict.laws.base import FloatArray
from perfpredict.predictor import HybridPredictor
from perfpredict.series import SERIES_KEY, Series, build_series, key_part

SCALE_SPLITS = ("extrapolate", "fewshot", "random")
SPLITS = (*SCALE_SPLITS, "time")
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
    """Who is tested on what, and what the predictors may learn from.

    ``visible`` is each series as a predictor may see it while *other* series are tested
    (None: not at all). When every tested series' ``visible`` is its own context, one
    predictor serves all of them and there is nothing to cross-fit.
    """

    holdouts: dict[int, Holdout]
    visible: list[Series | None]
    cross_fitted: bool


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
    return SplitPlan(holdouts, list(series_list), cross_fitted=True)


def time_cut_epoch_s(series_list: list[Series]) -> float:
    """The time split's cut: the median submission time of the runs that have one."""
    times = [s.submitted_epoch_s for s in series_list if s.submitted_epoch_s is not None]
    known = np.concatenate([np.empty(0), *times])
    if np.isnan(known).all():
        raise NotTrainedError(
            "the time split needs submission times and no stored run has one; ingest "
            "scheduler logs (sacct, SWF, PBS, LSF) or a CSV with a submit_time column")
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
            f"no series has runs at two or more scales submitted by {_utc_text(cut_s)} (the "
            "median submission time) and runs submitted after it; the time split needs "
            "series measured over time")
    return SplitPlan(holdouts, visible, cross_fitted=False)


def _utc_text(epoch_s: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch_s, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class _Outcomes:
    """Per method: predictions for the test runs, grouped for the report."""

    rows: list[dict[str, Any]] = field(default_factory=list)

    n_repeats: int = 1

    def add(self, method: str, group: str, series: str, true_s: FloatArray,
            pred_s: FloatArray, lower_s: FloatArray | None = None,
            upper_s: FloatArray | None = None) -> None:
        for i in range(true_s.size):
            self.rows.append({
                "method": method, "group": group, "series": series, "true": true_s[i],
                "pred": pred_s[i],
                "lower": None if lower_s is None else lower_s[i],
                "upper": None if upper_s is None else upper_s[i]})


def _blackbox(train: list[Series], codes: dict[str, dict[str, int]]) -> Callable[..., FloatArray]:
    """XGBoost on raw features (scale, layout, size, app, system) -> log runtime."""
    import xgboost

    def features(series: Series, p: FloatArray) -> FloatArray:
        app, system = series.key.app, series.key.system
        n = p.size
        return np.column_stack([
            np.log2(p), np.full(n, series.ranks_per_node or np.nan),
            np.full(n, series.threads_per_rank or np.nan),
            np.full(n, math.log10(series.problem_size_num) if series.problem_size_num else np.nan),
            np.full(n, codes["app"].setdefault(app, len(codes["app"]))),
            np.full(n, codes["system"].setdefault(system, len(codes["system"]))),
            np.full(n, float(series.weak)), np.full(n, series.scale_unit == "nodes"),
        ])

    x = np.vstack([features(s, s.scale) for s in train])
    y = np.concatenate([np.log(s.runtime_s) for s in train])
    model = xgboost.XGBRegressor(n_estimators=300, max_depth=6, learning_rate=0.05,
                                 n_jobs=1, random_state=0).fit(x, y)
    return lambda series, p: np.exp(model.predict(features(series, p)))


def _law_prediction(name: str, context: Series, p: FloatArray) -> FloatArray:
    scales, medians = context.medians()
    law = LAWS[name]()
    if scales.size < law.min_scales:
        law = LAWS["amdahl"]()
    return law.fit(scales, medians).predict(p)


def _fit_hybrid(pool: list[Series], random_state: int) -> HybridPredictor:
    """The hybrid trained on ``pool``, or a domain error when it has nothing to learn
    from (a time cut can leave every series with two scales or fewer)."""
    if not any(s.scales.size >= 3 for s in pool):
        raise NotTrainedError(
            "no series the backtest may train on has three or more distinct scales; "
            "ingest more runs")
    return HybridPredictor(random_state=random_state).fit(pool)


def backtest(series_list: list[Series], split: str, group_of: Callable[[Series], str],
             confidence: float = 0.9, n_folds: int = 5, random_state: int = 0,
             repeats: int = 1) -> _Outcomes:
    """Predict every tested run of ``split`` ``repeats`` times, with the fold assignments
    (and draws) of ``random_state``, ``random_state + 1``, ..., pooled."""
    outcomes = _Outcomes(n_repeats=repeats)
    for seed in range(random_state, random_state + repeats):
        outcomes.rows += _backtest_once(series_list, split, group_of, confidence, n_folds,
                                        seed).rows
    return outcomes


def _backtest_once(series_list: list[Series], split: str, group_of: Callable[[Series], str],
                   confidence: float, n_folds: int, random_state: int) -> _Outcomes:
    plan = plan_split(series_list, split, random_state)
    tests = sorted(plan.holdouts)
    n_folds = n_folds if plan.cross_fitted else 1
    rng = np.random.default_rng(random_state)
    fold_of = {i: f for i, f in zip(tests, rng.permutation(len(tests)) % n_folds, strict=True)}
    outcomes = _Outcomes()
    for fold in range(min(n_folds, len(tests))):
        in_fold = [i for i in tests if fold_of[i] == fold]
        contexts = {i: plan.holdouts[i].context for i in in_fold}
        pool = [s for i, s in enumerate(plan.visible) if s is not None and i not in contexts]
        pool += list(contexts.values())
        hybrid = _fit_hybrid(pool, random_state)
        blackbox = _blackbox(pool, {"app": {}, "system": {}})
        for i in in_fold:
            series, context = series_list[i], contexts[i]
            test = plan.holdouts[i].test
            p, true = series.scale[test], series.runtime_s[test]
            group, name = group_of(series), series.name
            preds = hybrid.predict(context, p, confidence)
            outcomes.add("hybrid", group, name, true, np.array([x.runtime_s for x in preds]),
                         np.array([x.lower_s for x in preds]),
                         np.array([x.upper_s for x in preds]))
            for law in ("amdahl", "amdahl_log", "extrap"):
                outcomes.add(law, group, name, true, _law_prediction(law, context, p))
            if series.weak:
                outcomes.add("gustafson", group, name, true,
                             _law_prediction("gustafson", context, p))
            outcomes.add("blackbox_xgboost", group, name, true, blackbox(context, p))
    return outcomes


def summarise(outcomes: _Outcomes) -> list[dict[str, Any]]:
    """One row per (group, method) plus an 'all' group: the evaluate table."""
    buckets: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in outcomes.rows:
        buckets[(row["group"], row["method"])].append(row)
        buckets[("all", row["method"])].append(row)
    table = []
    for (group, method), rows in sorted(buckets.items()):
        true = np.array([r["true"] for r in rows])
        pred = np.array([r["pred"] for r in rows])
        ape = np.abs(pred - true) / true
        per_series: dict[str, list[float]] = defaultdict(list)
        for r, e in zip(rows, ape, strict=True):
            per_series[r["series"]].append(e)
        entry: dict[str, Any] = {
            "group": group, "method": method, "n_series": len(per_series),
            "n_runs": round(len(rows) / outcomes.n_repeats),
            "mape_pct": 100 * float(ape.mean()),
            "median_ape_pct": 100 * float(np.median(ape)),
            "within_10pct_series": float(np.mean([np.mean(v) <= 0.10
                                                  for v in per_series.values()])),
            "bias_pct": 100 * float(np.median((pred - true) / true)),
            "coverage": None, "coverage_ci_low": None, "coverage_ci_high": None,
            "median_rel_width": None,
        }
        if rows[0]["lower"] is not None:
            lower = np.array([r["lower"] for r in rows])
            upper = np.array([r["upper"] for r in rows])
            inside = (true >= lower) & (true <= upper)
            entry["coverage"] = float(np.mean(inside))
            entry["coverage_ci_low"], entry["coverage_ci_high"] = _series_bootstrap_interval(
                inside, [r["series"] for r in rows])
            entry["median_rel_width"] = float(np.median((upper - lower) / pred))
        table.append(entry)
    return table


def _series_bootstrap_interval(inside: np.ndarray, series: list[str],
                               n_resamples: int = 2000) -> tuple[float, float]:
    """95% interval of the share of ``inside`` runs, resampling whole series."""
    names, index = np.unique(np.asarray(series), return_inverse=True)
    hits = np.bincount(index, weights=inside.astype(float), minlength=names.size)
    runs = np.bincount(index, minlength=names.size).astype(float)
    draw = np.random.default_rng(0).integers(0, names.size, (n_resamples, names.size))
    shares = hits[draw].sum(axis=1) / runs[draw].sum(axis=1)
    low, high = np.quantile(shares, [0.025, 0.975])
    return float(low), float(high)


def evaluate_frame(frame, split: str = "extrapolate", group_by: str = "source",  # type: ignore[no-untyped-def]
                   confidence: float = 0.9, repeats: int = 1) -> list[dict[str, Any]]:
    """The evaluate table for a runs DataFrame (``runs_frame``)."""
    series_list = build_series(frame)
    sources = _series_sources(frame) if group_by == "source" else {}

    def group_of(series: Series) -> str:
        if group_by == "app":
            return series.key.app
        if group_by == "system":
            return series.key.system
        return sources.get(series.key, "store")

    return summarise(backtest(series_list, split, group_of, confidence, repeats=repeats))


def _series_sources(frame) -> dict[tuple[str, ...], str]:  # type: ignore[no-untyped-def]
    """Series key -> the name of the data set (ingest file's folder or stem) it came from."""
    if "source" not in frame:
        return {}
    out: dict[tuple[str, ...], str] = {}
    for row in frame[[*SERIES_KEY, "source"]].itertuples(index=False):
        key = tuple(key_part(v) for v in row[:-1])
        path = Path(str(row[-1]))
        out.setdefault(key, path.parent.name if path.name.startswith("runs.csv") else path.stem)
    return out


def evaluate(store, split: str = "extrapolate", group_by: str = "source",  # type: ignore[no-untyped-def]
             confidence: float = 0.9, app: list[str] | None = None,
             repeats: int = 1) -> list[dict[str, Any]]:
    """Backtest the store's runs; see the module docstring."""
    from perfpredict.store.queries import runs_frame

    if repeats < 1:
        raise BadInputError(f"--repeats must be 1 or more, not {repeats}")
    return evaluate_frame(runs_frame(store, app=app, with_source=True), split, group_by,
                          confidence, repeats)

"""Where the store-cut intervals' calibration comes from, against where the test runs miss.

One store-cut backtest of the acceptance store (``bench/accuracy_benchmark.py``'s data
sets, one seed, one repeat): the strong-scaling calibration examples beyond the measured
range (the normalised scores the conformal quantiles are taken from, cross-fitted by
application) and the test runs, split two ways:

- by the edge slope of the context (d ln T / d ln p between its two largest scales), by
  data set and by the number of scales the context holds: the share below / above the
  90% bounds, calibration against test;
- by doublings beyond the cut: how many calibration examples each data set gives, and
  each data set's test runs with the share above their interval;
- by data set and doublings beyond the cut: the test runs' coverage, and how their
  intervals' width grows with distance against how their errors do;
- with ``--interval-variants``: each data set's coverage if the conformal quantiles were
  taken per kind of work (Mondrian), the series that time a target (MLPerf Training's
  time-to-train, whose work, the epochs to converge, changes with the global batch size
  and so with scale) apart from those of fixed work, on the lower side only or on both;
  if the intervals grew beyond one doubling with the distance from the middle of the
  measured range rather than from its edge (:func:`centroid_growth_bounds`); and if fixed
  work's intervals beyond the range were the central 90% of the conformal distribution
  truncated at ideal scaling, or [ideal scaling, its 90% quantile] where ideal scaling
  cuts off more than the lower 5% (:func:`ideal_truncated_bounds`).

The tables of docs/accuracy.md, "What would settle the rest". A research tool: it
listens in on :class:`perfpredict.model.fit.HybridPredictor`'s calibration with
``unittest.mock`` (wrapping, not replacing, its methods), so the figures are those of the
predictor as it is.

    OMP_NUM_THREADS=1 python -m bench.calibration_composition [--split fewshot] [--seed 0]
    OMP_NUM_THREADS=1 python -m bench.calibration_composition --interval-variants \
        [--split fewshot] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from typing import Any
from unittest import mock

import numpy as np

from bench.accuracy_benchmark import JUDGED, REPORTED, build_store
from perfpredict.evaluate import series_sources
from perfpredict.evaluate.protocols import plan_split, training_rounds
from perfpredict.model import fit
from perfpredict.model.fit import HybridPredictor
from perfpredict.model.nested import nested_examples
from perfpredict.model.runtime import ideal_floor_log
from perfpredict.model.series import build_series
from perfpredict.overhead.features import FEATURE_NAMES, SUMMARY_NAMES, fit_context
from perfpredict.store.queries import runs_frame
from perfpredict.uncertainty.conformal import _LEVELS, DistanceConformal

EDGE_SLOPE_BINS = (-np.inf, -0.8, -0.5, -0.2, np.inf)
DISTANCE_BINS = (0.0, 1.0, 2.0, 3.0, 4.5, np.inf)


def calibration_and_tests(split: str, seed: int, names: tuple[str, ...] = JUDGED + REPORTED,
                          ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray],
                                     dict[str, np.ndarray]]:
    """The strong-scaling calibration examples beyond the measured range, and the
    strong-scaling test runs, of one store-cut backtest of a store of the data sets
    ``names``: per example or run, its context's edge slope, its distance in doublings
    beyond the cut, whether it falls below or above the 90% bounds, and its data set;
    each test run's log error and its interval's log bounds about the point, the
    conformal lower bound before fixed work's is raised to ideal scaling and that bound
    (-inf where none), whether the noise floor set the bounds, whether the series is of
    fixed work, and how many doublings its context spans. Third, every example the
    conformal quantiles were taken from (both kinds, every distance): its normalised
    score, distance, data set and whether its series is of fixed work."""
    seen: dict[str, Any] = {}
    calibration = HybridPredictor._calibration
    app_scores = HybridPredictor._app_scores

    def spy_nested_examples(series_list, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen["series"] = series_list  # what the examples' groups index
        return nested_examples(series_list, *args, **kwargs)

    def spy_calibration(self, rows, target, residual, weight, group, distance, kind,  # type: ignore[no-untyped-def]
                        *args, **kwargs):
        seen.update(rows=rows, group=group, distance=distance, kind=kind)
        return calibration(self, rows, target, residual, weight, group, distance, kind,
                           *args, **kwargs)

    def spy_app_scores(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        spread, score = app_scores(self, *args, **kwargs)
        seen["score"] = score
        return spread, score

    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{tmp}/store.db", names)
        frame = runs_frame(store, with_source=True)
        store.dispose()
    series_list = build_series(frame)
    source = series_sources(frame)
    plan = plan_split(series_list, split, seed)
    (cut_store,) = training_rounds(plan, "store-cut", None, 5, seed)
    with mock.patch.object(HybridPredictor, "_calibration", spy_calibration), \
            mock.patch.object(HybridPredictor, "_app_scores", spy_app_scores), \
            mock.patch.object(fit, "nested_examples", spy_nested_examples):
        hybrid = HybridPredictor(random_state=seed).fit(cut_store.pool, borrowed_series=[])
    if hybrid.model_.calibrated_by["strong"] != "application":
        raise SystemExit("the store's strong scaling is calibrated by series: "
                         "add data sets until it holds enough applications")
    conformal = hybrid.model_.conformal["strong"]
    example_series = [seen["series"][int(g)] for g in seen["group"]]
    example_data_set = np.array([source.get(s.key) for s in example_series])
    scores = {"score": seen["score"], "distance": seen["distance"],
              "data_set": example_data_set,
              "fixed_work": np.array([s.fixed_work for s in example_series])}
    keep = (seen["kind"] == "strong") & (seen["distance"] > 0)
    distance = seen["distance"][keep]
    bounds = [conformal.bounds(d, 0.9) for d in distance.tolist()]
    calibration_rows = {
        "edge_slope": seen["rows"][keep, FEATURE_NAMES.index("edge_slope")],
        "n_scales": seen["rows"][keep, FEATURE_NAMES.index("n_scales")].astype(int),
        "distance": distance,
        "below": seen["score"][keep] < np.array([b.lower for b in bounds]),
        "above": seen["score"][keep] > np.array([b.upper for b in bounds]),
        "data_set": example_data_set[keep],
    }
    tests = []
    for i in cut_store.tested:
        series = series_list[i]
        if series.weak:
            continue
        context = plan.holdouts[i].context
        scales = series.scale[plan.holdouts[i].test]
        measured_s = series.runtime_s[plan.holdouts[i].test]
        predicted = hybrid.predict_columns(context, scales, 0.9)
        unbounded = hybrid.predict_columns(replace(context, fixed_work=False), scales, 0.9)
        ctx = fit_context(context)
        edge_slope = ctx.summary[SUMMARY_NAMES.index("edge_slope")]
        edge_lower_s = float(hybrid.predict_columns(
            context, np.array([ctx.scale_max]), 0.9).lower_s[0])
        ideal_log = (ideal_floor_log(ctx, scales, predicted.runtime_s, edge_lower_s)
                     if series.fixed_work else np.full(scales.size, -np.inf))
        span_log2 = float(np.log2(context.scales.max() / context.scales.min()))
        tests += [{"edge_slope": edge_slope, "n_scales": context.scales.size,
                   "span_log2": span_log2,
                   "distance": float(np.log2(p / context.scales.max())),
                   "below": t < lo, "above": t > hi, "data_set": source.get(series.key),
                   "log_error": float(np.log(t / point)),
                   "lower_log": float(np.log(lo / point)),
                   "upper_log": float(np.log(hi / point)),
                   # relative to its own point: fixed work's point is no faster than
                   # ideal scaling (ideal_log), the unbounded one may be
                   "conformal_lower_log": float(np.log(conformal_lo / free_point)),
                   "ideal_lower_log": ideal, "floored": floored,
                   "fixed_work": series.fixed_work}
                  for p, t, lo, hi, point, conformal_lo, free_point, ideal, floored in zip(
                      scales.tolist(), measured_s.tolist(), predicted.lower_s.tolist(),
                      predicted.upper_s.tolist(), predicted.runtime_s.tolist(),
                      unbounded.lower_s.tolist(), unbounded.runtime_s.tolist(),
                      ideal_log.tolist(),
                      predicted.noise_floor.tolist(), strict=True)]
    return (calibration_rows, {key: np.array([row[key] for row in tests]) for key in tests[0]},
            scores)


def work_kind_bounds(scores: dict[str, np.ndarray], test: dict[str, np.ndarray],
                     sides: str) -> tuple[np.ndarray, np.ndarray]:
    """Each test run's log bounds if the conformal quantiles were taken per kind of work
    (the series that time a target, ``Series.fixed_work`` false, apart from those of
    fixed work) on the lower side (``sides="lower"``) or on both (``"both"``): its
    conformal bounds times the ratio of its kind's quantile to the pooled one at the
    distance its bounds were read at (the one-doubling bounds beyond a doubling,
    :meth:`perfpredict.model.runtime.RuntimeModel.predict_columns`), the lower one then
    raised to ideal scaling for fixed work as the predictor raises it. Bounds the noise
    floor set stay."""
    pooled = DistanceConformal().fit(scores["score"], scores["distance"])
    by_kind = {kind: DistanceConformal().fit(scores["score"][mine], scores["distance"][mine])
               for kind, mine in ((True, scores["fixed_work"]), (False, ~scores["fixed_work"]))}
    lower, upper = test["conformal_lower_log"].copy(), test["upper_log"].copy()
    for i, (distance, fixed_work) in enumerate(zip(test["distance"].tolist(),
                                                   test["fixed_work"].tolist(), strict=True)):
        if test["floored"][i]:
            continue
        at = min(distance, 1.0)
        old = pooled.bounds(at, 0.9)
        new = by_kind[fixed_work].bounds(at, 0.9)
        lower[i] *= new.lower / old.lower
        if sides == "both":
            upper[i] *= new.upper / old.upper
    return np.maximum(lower, test["ideal_lower_log"]), upper


def centroid_growth_bounds(test: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each test run's log bounds if beyond one doubling they grew with the distance from
    the middle of the context's measured range, as a line fitted in log-log errs, rather
    than from its edge: the one-doubling bounds times (d + S/2) / (1 + S/2) for a context
    spanning S doublings, where today's rule takes d; the lower one then raised to ideal
    scaling for fixed work as the predictor raises it. Bounds the noise floor set stay."""
    distance, span = test["distance"], test["span_log2"]
    rescale = np.where((distance > 1) & ~test["floored"],
                       (distance + span / 2) / (1 + span / 2) / np.maximum(distance, 1), 1.0)
    return (np.maximum(test["conformal_lower_log"] * rescale, test["ideal_lower_log"]),
            test["upper_log"] * rescale)


def ideal_truncated_bounds(scores: dict[str, np.ndarray], test: dict[str, np.ndarray],
                           shape: str) -> tuple[np.ndarray, np.ndarray]:
    """Each fixed-work test run's log bounds beyond the measured range if the conformal
    distribution there (the pooled normalised scores at the distance its bounds were
    read at, times its interval's scale) were known to hold nothing below ideal scaling:
    ``shape="central"``, the central 90% of that distribution truncated at ideal scaling
    (the share m below it removed, the rest renormalised: the (m + 0.05 (1 - m)) and
    (0.95 + 0.05 m) quantiles); ``"one-sided"``, where ideal scaling cuts off more than
    the lower 5%, [ideal scaling, the (0.9 + 0.1 m) quantile], the whole miss rate spent
    above. Neither bound narrower than today's on the side it widens. Bounds the noise
    floor set stay, as do those of time-to-train and weak scaling. The quantiles are the
    distance bin's own, before the predictor makes them monotone in distance (its
    isotonic pooling), so a run whose bin was pooled moves by a little more or less than
    the predictor's bounds would; the scale is read off the pooled bound."""
    pooled = DistanceConformal().fit(scores["score"], scores["distance"])
    lower, upper = test["lower_log"].copy(), test["upper_log"].copy()
    for i in np.flatnonzero(np.isfinite(test["ideal_lower_log"]) & ~test["floored"]):
        at = min(float(test["distance"][i]), 1.0)
        index, _ = pooled._bin_and_stretch(at)
        levels = np.asarray(pooled.bins_[index]["quantiles"])
        scale = upper[i] / pooled.bounds(at, 0.9).upper  # spread, peers and distance

        def quantile(level: float, levels: np.ndarray = levels, scale: float = scale) -> float:
            return float(np.interp(level, _LEVELS, levels)) * scale

        ideal = float(test["ideal_lower_log"][i])
        cut = float(np.interp(ideal / scale, levels, _LEVELS))  # m, the share below ideal
        if shape == "central":
            lower[i] = max(quantile(cut + 0.05 * (1 - cut)), ideal)
            upper[i] = max(quantile(0.95 + 0.05 * cut), upper[i])
        elif cut > 0.05:
            lower[i], upper[i] = ideal, quantile(0.9 + 0.1 * cut)
    return lower, upper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="extrapolate", choices=("extrapolate", "fewshot"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interval-variants", action="store_true",
                        help="only the coverage of the interval variants, pooled over "
                             "--seeds")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    if args.interval_variants:
        print_interval_variants(args.split, args.seeds)
        return
    calibration, test, _ = calibration_and_tests(args.split, args.seed)

    def misses(rows: dict[str, np.ndarray], inside: np.ndarray) -> str:
        return (f"{rows['below'][inside].mean():.3f} / {rows['above'][inside].mean():.3f} "
                f"({inside.sum()})" if inside.any() else "-")

    print(f"## {args.split}, seed {args.seed}: below / above the 90% bounds (count)\n")
    print("| edge slope | calibration | test |\n|---|---|---|")
    for low, high in zip(EDGE_SLOPE_BINS[:-1], EDGE_SLOPE_BINS[1:], strict=True):
        print(f"| ({low}, {high}] | " + " | ".join(
            misses(rows, (rows["edge_slope"] > low) & (rows["edge_slope"] <= high))
            for rows in (calibration, test)) + " |")
    for key, label in (("data_set", "data set"), ("n_scales", "scales in the context")):
        print(f"\n| {label} | calibration | test |\n|---|---|---|")
        for value in sorted(set(calibration[key].tolist()) | set(test[key].tolist())):
            print(f"| {value} | " + " | ".join(misses(rows, rows[key] == value)
                                               for rows in (calibration, test)) + " |")

    print(f"\n## {args.split}, seed {args.seed}: by doublings beyond the cut\n")
    print("| doublings | calibration examples | test runs (share above) |\n|---|---|---|")
    for low, high in zip(DISTANCE_BINS[:-1], DISTANCE_BINS[1:], strict=True):
        in_cal = (calibration["distance"] > low) & (calibration["distance"] <= high)
        in_test = (test["distance"] > low) & (test["distance"] <= high)
        names, counts = np.unique(calibration["data_set"][in_cal], return_counts=True)
        examples = ", ".join(f"{n} {c}" for n, c in sorted(
            zip(names.tolist(), counts.tolist(), strict=True), key=lambda x: -x[1]))
        runs = []
        for name in sorted(set(test["data_set"][in_test].tolist())):
            mine = in_test & (test["data_set"] == name)
            share_above = test["above"][mine].mean()
            runs.append((int(mine.sum()), f"{name} {mine.sum()} ({share_above:.2f})"))
        print(f"| ({low}, {high}] | {examples or '-'} | "
              f"{', '.join(text for _, text in sorted(runs, reverse=True)) or '-'} |")

    print(f"\n## {args.split}, seed {args.seed}: test runs by data set and doublings beyond "
          "the cut: runs, coverage, median upper half-width (log) / 90th percentile of "
          "|log error|\n")
    bands = list(zip(DISTANCE_BINS[:-1], DISTANCE_BINS[1:], strict=True))
    print("| data set | " + " | ".join(f"({low}, {high}]" for low, high in bands) + " |")
    print("|---" * (len(bands) + 1) + "|")
    for name in sorted(set(test["data_set"].tolist())):
        cells = []
        for low, high in bands:
            mine = ((test["data_set"] == name) & (test["distance"] > low)
                    & (test["distance"] <= high))
            inside = ~(test["below"][mine] | test["above"][mine])
            cells.append(f"{mine.sum()}, {inside.mean():.2f}, "
                         f"{np.median(test['upper_log'][mine]):.2f} / "
                         f"{np.quantile(np.abs(test['log_error'][mine]), 0.9):.2f}"
                         if mine.any() else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")


def print_interval_variants(split: str, seeds: list[int]) -> None:
    """Per data set, the test runs' coverage and share below / above their 90% intervals
    as they are, with the quantiles per kind of work (:func:`work_kind_bounds`), with
    the growth from the middle of the measured range (:func:`centroid_growth_bounds`) and
    with fixed work's distribution truncated at ideal scaling
    (:func:`ideal_truncated_bounds`), and each column's median relative width."""
    columns: dict[str, list[np.ndarray]] = {"today": [], "lower": [], "both": [],
                                            "centroid": [], "central": [], "one-sided": []}
    data_sets, errors = [], []
    for seed in seeds:
        _, test, scores = calibration_and_tests(split, seed)
        data_sets.append(test["data_set"])
        errors.append(test["log_error"])
        columns["today"].append(np.stack([test["lower_log"], test["upper_log"]]))
        for sides in ("lower", "both"):
            columns[sides].append(np.stack(work_kind_bounds(scores, test, sides)))
        columns["centroid"].append(np.stack(centroid_growth_bounds(test)))
        for shape in ("central", "one-sided"):
            columns[shape].append(np.stack(ideal_truncated_bounds(scores, test, shape)))
    data_set, error = np.concatenate(data_sets), np.concatenate(errors)
    print(f"## {split}, seeds {' '.join(map(str, seeds))}: coverage (below / above) of the "
          "test runs' 90% intervals\n")
    print("| data set | runs | today | quantiles per kind of work, lower side | "
          "per kind, both sides | growth from the middle of the range | "
          "truncated at ideal scaling, central | truncated, one-sided |")
    print("|---" * 8 + "|")
    for name in [*sorted(set(data_set.tolist())), "all"]:
        mine = data_set == name if name != "all" else np.ones(data_set.size, dtype=bool)
        cells = []
        for bounds in columns.values():
            lower, upper = np.concatenate(bounds, axis=1)
            below, above = error[mine] < lower[mine], error[mine] > upper[mine]
            width = np.median(np.exp(upper[mine]) - np.exp(lower[mine]))
            cells.append(f"{1 - below.mean() - above.mean():.3f} "
                         f"({below.mean():.3f} / {above.mean():.3f}; {width:.2f})")
        print(f"| {name} | {mine.sum()} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

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
  intervals' width grows with distance against how their errors do.

The tables of docs/accuracy.md, "What would settle the rest". A research tool: it
listens in on :class:`perfpredict.model.fit.HybridPredictor`'s calibration with
``unittest.mock`` (wrapping, not replacing, its methods), so the figures are those of the
predictor as it is.

    OMP_NUM_THREADS=1 python -m bench.calibration_composition [--split fewshot] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any
from unittest import mock

import numpy as np

from bench.accuracy_benchmark import JUDGED, REPORTED, build_store
from perfpredict.evaluate import series_sources
from perfpredict.evaluate.protocols import plan_split, training_rounds
from perfpredict.model import fit
from perfpredict.model.fit import HybridPredictor
from perfpredict.model.nested import nested_examples
from perfpredict.model.series import build_series
from perfpredict.overhead.features import FEATURE_NAMES, SUMMARY_NAMES, fit_context
from perfpredict.store.queries import runs_frame

EDGE_SLOPE_BINS = (-np.inf, -0.8, -0.5, -0.2, np.inf)
DISTANCE_BINS = (0.0, 1.0, 2.0, 3.0, 4.5, np.inf)


def calibration_and_tests(split: str, seed: int, names: tuple[str, ...] = JUDGED + REPORTED,
                          ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The strong-scaling calibration examples beyond the measured range, and the
    strong-scaling test runs, of one store-cut backtest of a store of the data sets
    ``names``: per example or run, its context's edge slope, its distance in doublings
    beyond the cut, whether it falls below or above the 90% bounds, and its data set."""
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
    keep = (seen["kind"] == "strong") & (seen["distance"] > 0)
    distance = seen["distance"][keep]
    bounds = [conformal.bounds(d, 0.9) for d in distance.tolist()]
    calibration_rows = {
        "edge_slope": seen["rows"][keep, FEATURE_NAMES.index("edge_slope")],
        "n_scales": seen["rows"][keep, FEATURE_NAMES.index("n_scales")].astype(int),
        "distance": distance,
        "below": seen["score"][keep] < np.array([b.lower for b in bounds]),
        "above": seen["score"][keep] > np.array([b.upper for b in bounds]),
        "data_set": np.array([source.get(seen["series"][int(g)].key)
                              for g in seen["group"][keep]]),
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
        edge_slope = fit_context(context).summary[SUMMARY_NAMES.index("edge_slope")]
        tests += [{"edge_slope": edge_slope, "n_scales": context.scales.size,
                   "distance": float(np.log2(p / context.scales.max())),
                   "below": t < lo, "above": t > hi, "data_set": source.get(series.key),
                   "abs_log_error": abs(float(np.log(t / point))),
                   "upper_half_width": float(np.log(hi / point))}
                  for p, t, lo, hi, point in zip(scales.tolist(), measured_s.tolist(),
                                                 predicted.lower_s.tolist(),
                                                 predicted.upper_s.tolist(),
                                                 predicted.runtime_s.tolist(), strict=True)]
    return calibration_rows, {key: np.array([row[key] for row in tests]) for key in tests[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="extrapolate", choices=("extrapolate", "fewshot"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    calibration, test = calibration_and_tests(args.split, args.seed)

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
                         f"{np.median(test['upper_half_width'][mine]):.2f} / "
                         f"{np.quantile(test['abs_log_error'][mine], 0.9):.2f}"
                         if mine.any() else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

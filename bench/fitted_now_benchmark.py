"""What answering a series the predictor was not trained with costs: its laws fitted at
the estimate (a code's runs ingested after ``train``), against the same series trained
with, on the store-cut backtest of the acceptance data sets.

For each application in turn, a predictor is trained on the cut store without any of
that application's series, as if its runs had been ingested after ``train``, and the
application's cut series are predicted from their measured scales as an estimate fits
them (:meth:`perfpredict.estimate.estimates.LoadedPredictor.find_series`: the same
fit ``train`` makes). Beside it, the predictor trained on the whole cut store (the
acceptance backtest's) predicts the same runs. Both are read per data set: MAPE, median
APE and 90% coverage. The store holds eight or more strong-scaling applications without
any one of them, so neither predictor borrows the bundled data sets.

Run: PERFPREDICT_SHARED=../shared OMP_NUM_THREADS=1 python -m bench.fitted_now_benchmark
         [--split extrapolate] [--seed 0] [--repeats 1]
     (one training per application and seed, about 25 per seed: 15 minutes a seed on
     two cores; prints a markdown table)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.accuracy_benchmark import build_store
from perfpredict.evaluate import plan_split, series_sources, summarise
from perfpredict.evaluate.baselines import law_names, law_prediction
from perfpredict.evaluate.metrics import Outcomes
from perfpredict.model.fit import HybridPredictor, too_few_applications
from perfpredict.model.series import Series, build_series

TRAINED = "trained with"
FITTED_NOW = "fitted now"


def backtest(series_list: list[Series], sources: dict[Any, str], split: str,
             seeds: range, confidence: float = 0.9) -> Outcomes:
    """Both predictors' predictions of every tested run, grouped by data set."""
    outcomes = Outcomes(n_repeats=len(seeds))
    for seed in seeds:
        plan = plan_split(series_list, split, seed)
        pool = [s for s in map(plan.cut, range(len(series_list))) if s is not None]
        tested_apps = sorted({series_list[i].key.app for i in plan.holdouts})
        predictors = {
            TRAINED: dict.fromkeys(tested_apps, _fit(pool, seed)),
            FITTED_NOW: {app: _fit([s for s in pool if s.key.app != app], seed)
                         for app in tested_apps}}
        for i, holdout in plan.holdouts.items():
            series = series_list[i]
            p, true = series.scale[holdout.test], series.runtime_s[holdout.test]
            group = sources.get(series.key, "store")
            for method, by_app in predictors.items():
                preds = by_app[series.key.app].predict_columns(holdout.context, p, confidence)
                outcomes.add(method, group, series.name, true, preds.runtime_s,
                             preds.lower_s, preds.upper_s)
            for law in law_names(series):
                outcomes.add(law, group, series.name, true,
                             law_prediction(law, holdout.context, p))
    return outcomes


def _fit(pool: list[Series], seed: int) -> HybridPredictor:
    if too_few_applications(pool):
        raise SystemExit("the store has too few strong-scaling applications without one of "
                         "them: the predictor would borrow, which this benchmark leaves out")
    return HybridPredictor(random_state=seed).fit(pool)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="extrapolate", choices=("extrapolate", "fewshot"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    from perfpredict.store.queries import runs_frame

    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{Path(tmp) / 'acceptance.db'}")
        frame = runs_frame(store, with_source=True)
        store.dispose()
    series_list = build_series(frame)
    outcomes = backtest(series_list, series_sources(frame), args.split,
                        range(args.seed, args.seed + args.repeats))
    print(f"split {args.split}, seeds {args.seed}-{args.seed + args.repeats - 1}\n")
    print(table(summarise(outcomes)))
    print(f"\nmean |log error| difference per run (fitted now less trained with): "
          f"{_paired_log_gap(outcomes):+.4f}")


def table(summary: list[dict[str, Any]]) -> str:
    """Markdown: per data set, both predictors' MAPE / median APE / coverage and the
    single law (Amdahl, Amdahl + log, Gustafson, the power law, Extra-P) with the lowest
    MAPE on the same runs."""
    rows = {(r["group"], r["method"]): r for r in summary}
    lines = ["| data set | runs | trained with: MAPE / median APE / coverage | fitted now: "
             "MAPE / median APE / coverage | best single law: MAPE / median APE |",
             "|---|---|---|---|---|"]
    for group in sorted({g for g, _ in rows}, key=lambda g: (g == "all", g)):
        cells = [f"{r['mape_pct']:.1f} / {r['median_ape_pct']:.1f} / {r['coverage']:.3f}"
                 for r in (rows[(group, TRAINED)], rows[(group, FITTED_NOW)])]
        n_runs = rows[(group, TRAINED)]["n_runs"]  # a law of one kind does not cover all
        laws = [r for (g, m), r in rows.items()
                if g == group and m not in (TRAINED, FITTED_NOW) and r["n_runs"] == n_runs]
        best = min(laws, key=lambda r: r["mape_pct"])
        lines.append(f"| {group} | {n_runs} | {cells[0]} | "
                     f"{cells[1]} | {best['mape_pct']:.1f} / {best['median_ape_pct']:.1f} "
                     f"({best['method']}) |")
    return "\n".join(lines)


def _paired_log_gap(outcomes: Outcomes) -> float:
    """How much farther, in log runtime, the fitted-now predictions land than the
    trained-with ones, run by run (the rows of the two methods come in the same order)."""
    def errors(method: str) -> np.ndarray:
        return np.array([abs(np.log(r["pred"] / r["true"])) for r in outcomes.rows
                         if r["method"] == method])
    return float(np.mean(errors(FITTED_NOW) - errors(TRAINED)))


if __name__ == "__main__":
    main()

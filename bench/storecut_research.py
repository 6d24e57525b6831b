"""Store-cut research backtest of the hybrid against each law, Extra-P and a black box.

Kept beside ``bench/accuracy_benchmark.py`` (the evaluate layer's store-cut protocol, which
the figures in the docs come from) for the experiments of issue 13's hypotheses: the old
by-series protocol on the same rows, a subset of data sets (``--only``), and fixed-weight
averages of the laws scored beside the baselines. A store that never ran an application at
large scale: every tested series (4+ distinct scales) is cut at once (``extrapolate``:
its lower half; ``fewshot``: its three smallest scales), one hybrid and one black box
are trained on the cut pool (untested series in full), and the upper parts are scored.
Nothing beyond a cut is seen by anything.

    OMP_NUM_THREADS=1 python bench/storecut_research.py [--split extrapolate] [--json out.json]

Reads the real data sets in ../shared/datasets and the bundled ones; a data set's
``variant`` column is folded into its problem size so curves of other builds and inputs
(VASP's NCORE/KPAR) do not mix. This is a research tool: ``perfpredict evaluate
--protocol store-cut`` is the user's.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from perfpredict.evaluate.baselines import blackbox as fit_blackbox
from perfpredict.evaluate.baselines import law_prediction as _law_prediction
from perfpredict.evaluate.protocols import context_scales
from perfpredict.laws.drift import SlopeDrift
from perfpredict.model.series import Series, build_series
from perfpredict.overhead.contexts import SeriesTable

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"
DATASETS = {
    "vasp_archer": SHARED / "vasp_archer" / "runs.csv",
    "cp2k_readme": SHARED / "cp2k_readme" / "runs.csv",
    "castro_scaling": SHARED / "castro_scaling" / "runs.csv",
    "pencilffts_jeanzay": SHARED / "pencilffts_jeanzay" / "runs.csv",
    "mlperf_training": ROOT / "datasets" / "mlperf_training" / "runs.csv.gz",
    "relearn": ROOT / "datasets" / "relearn" / "runs.csv.gz",
}
BASELINES = ("amdahl", "amdahl_log", "power", "extrap", "gustafson", "blackbox_xgboost")


def load_series(name: str, path: Path, cache_dir: Path) -> list[Series]:
    """The data set's series, through ``ingest csv`` and the store (cached by name)."""
    cached = cache_dir / f"{name}.pkl"
    if cached.exists():
        return pickle.loads(cached.read_bytes())  # noqa: S301 - our own research cache
    from perfpredict.ingest.pipeline import ingest_file
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    frame = pd.read_csv(path)
    if "variant" in frame:
        variant = frame.pop("variant").fillna("").astype(str)
        frame["problem_size"] = frame["problem_size"].astype(str).where(
            variant == "", frame["problem_size"].astype(str) + " | " + variant)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "runs.csv"
        frame.to_csv(csv, index=False)
        with open_store(f"sqlite:///{tmp}/store.db", upgrade=True) as store:
            ingest_file(store, "csv", csv)
            series = build_series(runs_frame(store))
    cached.write_bytes(pickle.dumps(series))
    return series


def cut_store(data: dict[str, list[Series]], split: str):  # type: ignore[no-untyped-def]
    """(pool, tests): every series with 4+ scales cut by ``split``, the rest in full."""
    pool, tests = [], []
    for name, series_list in data.items():
        for series in series_list:
            if series.scales.size >= 4:
                keep = np.isin(series.scale, context_scales(series, split))
                context = series.select(keep)
                pool.append(context)
                tests.append((name, series, context, ~keep))
            else:
                pool.append(series)
    return pool, tests


def score(rows: list[dict]) -> dict[str, dict[str, dict[str, float]]]:  # type: ignore[type-arg]
    """Per data set (and 'pooled') and method: MAPE, median APE, coverage, width."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    frame = pd.DataFrame(rows)
    frame["ape"] = (frame["pred"] - frame["true"]).abs() / frame["true"]
    for group, part in [*frame.groupby("data"), ("pooled", frame)]:
        out[group] = {}
        for method, m in part.groupby("method"):
            entry = {"mape": 100 * m["ape"].mean(), "median_ape": 100 * m["ape"].median(),
                     "n_runs": len(m), "n_series": m["series"].nunique()}
            if m["lower"].notna().all():
                inside = (m["true"] >= m["lower"]) & (m["true"] <= m["upper"])
                entry["coverage"] = float(inside.mean())
                entry["median_rel_width"] = float(((m["upper"] - m["lower"]) / m["pred"])
                                                  .median())
            out[group][method] = entry
    return out


def run(data: dict[str, list[Series]], split: str, fit_predictor, confidence: float = 0.9,  # type: ignore[no-untyped-def]
        protocol: str = "store-cut", n_folds: int = 5):
    """Rows of predictions of every tested run; under ``by-series`` (the old protocol,
    for comparison) a fold's series are predicted by a predictor trained on every other
    series in full plus the fold's contexts."""
    pool, tests = cut_store(data, split)
    if protocol == "store-cut":
        folds = [(pool, tests)]
    else:
        full = [s for series_list in data.values() for s in series_list]
        fold_of = np.random.default_rng(0).permutation(len(tests)) % n_folds
        folds = []
        for fold in range(n_folds):
            mine = [t for t, f in zip(tests, fold_of, strict=True) if f == fold]
            held = {id(t[1]) for t in mine}
            folds.append(([s for s in full if id(s) not in held] + [t[2] for t in mine], mine))
    rows: list[dict] = []  # type: ignore[type-arg]
    started = time.perf_counter()
    for train, fold_tests in folds:
        predictor = fit_predictor(train)
        rows += _predict_tests(predictor, fit_blackbox(train), fit_drift(train),
                               fold_tests, confidence)
    return rows, time.perf_counter() - started, predictor


def fit_drift(pool: list[Series]) -> SlopeDrift | None:
    """The hybrid's slope drift (:mod:`perfpredict.laws.drift`) fitted on the cut pool,
    to score alone and in the laws' mean."""
    table = SeriesTable.of(pool)
    return SlopeDrift.fit(table.scales, table.medians_s, table.scale_start,
                          np.array([not s.weak for s in pool], dtype=bool))


def drift_prediction(drift: SlopeDrift, context: Series, p: np.ndarray) -> np.ndarray:
    """The slope drift's runtime at ``p`` beyond ``context``'s largest measured scale."""
    table = SeriesTable.of([context])
    lp, lt = np.log(table.scales[-2:]), np.log(table.medians_s[-2:])
    edge_slope = (lt[1] - lt[0]) / (lp[1] - lp[0])
    return np.exp(drift.predict_log(np.full(p.size, lp[1]), np.full(p.size, lt[1]),
                                    np.full(p.size, edge_slope), p))


def _predict_tests(predictor, blackbox, drift, tests, confidence):  # type: ignore[no-untyped-def]
    rows: list[dict] = []  # type: ignore[type-arg]
    for name, series, context, test in tests:
        p, true = series.scale[test], series.runtime_s[test]
        base = {"data": name, "series": series.name, "true": true, "p": p,
                "d": np.log2(p / context.scales.max())}
        preds = predictor.predict_columns(context, p, confidence)
        methods = {"hybrid": (preds.runtime_s, preds.lower_s, preds.upper_s)}
        laws = {law: _law_prediction(law, context, p)
                for law in ("amdahl", "amdahl_log", "power", "extrap")}
        methods.update({law: (pred, None, None) for law, pred in laws.items()})
        # fixed-weight log-space averages: candidates, not baselines (names start with ~)
        if not series.weak and drift is not None:
            laws["drift"] = drift_prediction(drift, context, p)
            methods["~drift"] = (laws["drift"], None, None)
        for combo in (("amdahl_log", "power"), ("amdahl", "amdahl_log", "power"),
                      ("amdahl", "amdahl_log", "power", "drift")):
            if all(c in laws for c in combo):
                mean = np.exp(np.mean([np.log(laws[c]) for c in combo], axis=0))
                methods["~" + "+".join(combo)] = (mean, None, None)
        if series.weak:
            methods["gustafson"] = (_law_prediction("gustafson", context, p), None, None)
        methods["blackbox_xgboost"] = (blackbox(context, p), None, None)
        for method, (pred, lower, upper) in methods.items():
            rows += [{**{k: (v[i] if isinstance(v, np.ndarray) else v)
                         for k, v in base.items()}, "method": method, "pred": pred[i],
                      "lower": None if lower is None else lower[i],
                      "upper": None if upper is None else upper[i]} for i in range(p.size)]
    return rows


def report(table: dict, split: str) -> None:  # type: ignore[type-arg]
    print(f"== {split}")
    for group, methods in table.items():
        best = min((m for m in methods if m != "hybrid" and m[0] != "~"),
                   key=lambda m: methods[m]["mape"])
        h = methods["hybrid"]
        b = methods[best]
        print(f"{group:20s} n={h['n_series']:3d} hybrid {h['mape']:6.1f} / {h['median_ape']:5.1f}"
              f" cov {h.get('coverage', float('nan')):.2f} w {h.get('median_rel_width', 0):.2f}"
              f" | best {best:16s} {b['mape']:6.1f} / {b['median_ape']:5.1f}"
              f" | " + " ".join(f"{m}:{v['mape']:.1f}" for m, v in methods.items()
                                if m not in ("hybrid", best)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("extrapolate", "fewshot"), action="append")
    parser.add_argument("--protocol", choices=("store-cut", "by-series"), default="store-cut")
    parser.add_argument("--only", action="append", help="train and test on these data sets")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir())
                        / "perfpredict-storecut")
    args = parser.parse_args(argv)
    args.cache.mkdir(exist_ok=True)
    data = {name: load_series(name, path, args.cache) for name, path in DATASETS.items()
            if path.exists() and (not args.only or name in args.only)}
    from perfpredict.model.fit import HybridPredictor

    results = {}
    for split in args.split or ["extrapolate", "fewshot"]:
        rows, fit_s, _ = run(data, split, lambda pool: HybridPredictor().fit(pool),
                             protocol=args.protocol)
        table = score(rows)
        report(table, split)
        print(f"(hybrid trained in {fit_s:.1f} s)", file=sys.stderr)
        results[split] = table
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""Between and below measured scales: the estimate against the laws' mean and each law.

Inside a series' measured range an estimate is the laws' mean moved onto the runs measured
on either side of the query (:func:`perfpredict.model.base_estimate.measured_offset_log`), and
below it onto the runs at the smallest measured scale. This measures the first on every
test run of the random split (store cut, every data set of the acceptance store, as
``bench.accuracy_benchmark`` builds it) that lies strictly between two measured scales of
its context, and the second on each series of four or more scales with its smallest scale
left out and predicted from the rest. Up to the largest measured scale an estimate does
not depend on training (the correction and the peers act beyond it), so the shipped
predictor answers for every context and nothing is trained: a run takes seconds.

Run:
    python -m bench.interpolation_benchmark                 # seeds 0-2, pooled
    python -m bench.interpolation_benchmark --seeds 15      # seeds 0-14, one row each
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.accuracy_benchmark import JUDGED, REPORTED, SHARED_DATASETS, build_store
from perfpredict import artifact
from perfpredict.evaluate import series_sources
from perfpredict.evaluate.protocols import plan_split
from perfpredict.model.base_estimate import ENSEMBLE
from perfpredict.model.runtime import RuntimeModel
from perfpredict.model.series import Series, build_series
from perfpredict.overhead.features import SeriesContext, fit_context, law_log_predictions
from perfpredict.store.queries import runs_frame

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "predictor.json"
#: Columns of :func:`inside_ape`'s rows: the estimate, the laws' mean it starts from, and
#: each law of the mean alone.
METHODS = ("estimate", "laws_mean", "amdahl", "amdahl_log", "power")


def acceptance_series(shared_datasets: Path = SHARED_DATASETS,
                      names: tuple[str, ...] = JUDGED + REPORTED,
                      ) -> tuple[list[Series], dict[Any, str]]:
    """The series of the acceptance store (as ``bench.accuracy_benchmark`` builds it) and
    each one's data set."""
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{tmp}/store.db", names, shared_datasets)
        frame = runs_frame(store, with_source=True)
        store.dispose()
    return build_series(frame), series_sources(frame)


def inside_ape(series_list: list[Series], sources: dict[Any, str],
               seeds: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Per data set, one row per test run inside its context's measured range and one
    column per :data:`METHODS`: the absolute percentage error, the seeds' runs pooled."""
    model = _shipped_model()
    rows: dict[str, list[np.ndarray]] = {}
    for seed in seeds:
        for index, holdout in plan_split(series_list, "random", seed).holdouts.items():
            ctx = fit_context(holdout.context)
            series = series_list[index]
            p, measured_s = series.scale[holdout.test], series.runtime_s[holdout.test]
            inside = (p > ctx.scale_min) & (p < ctx.scale_max)
            if inside.any():
                rows.setdefault(sources[series.key], []).append(_ape(
                    model, holdout.context, ctx, p[inside], measured_s[inside]))
    return {name: np.concatenate(parts) for name, parts in rows.items()}


def below_ape(series_list: list[Series], sources: dict[Any, str]) -> dict[str, np.ndarray]:
    """:func:`inside_ape`'s columns for the runs at each series' smallest scale (series of
    four or more scales), predicted from the series' other scales."""
    model = _shipped_model()
    rows: dict[str, list[np.ndarray]] = {}
    for series in series_list:
        if series.scales.size < 4:
            continue
        smallest = series.scale == series.scales[0]
        context = series.select(~smallest)
        rows.setdefault(sources[series.key], []).append(_ape(
            model, context, fit_context(context), series.scale[smallest],
            series.runtime_s[smallest]))
    return {name: np.concatenate(parts) for name, parts in rows.items()}


def _shipped_model() -> RuntimeModel:
    return RuntimeModel.from_dict(artifact.read_file(SHIPPED)["predictor"])


def _ape(model: RuntimeModel, context: Series, ctx: SeriesContext, p: np.ndarray,
         measured_s: np.ndarray) -> np.ndarray:
    """The absolute percentage error of each of :data:`METHODS` (columns) at each of
    ``p``, predicted from ``context`` (fitted: ``ctx``)."""
    logs = law_log_predictions(ctx, p)
    predicted_s = np.column_stack([
        model.predict_columns(context, p, ctx=ctx).runtime_s,
        np.exp(np.mean([logs[name] for name in ENSEMBLE], axis=0)),
        *(np.exp(logs[name]) for name in ENSEMBLE)])
    return 100 * np.abs(predicted_s / measured_s[:, None] - 1)


def _table(ape: dict[str, np.ndarray]) -> str:
    lines = ["| data set | runs | " + " | ".join(f"{m} MAPE" for m in METHODS) + " |",
             "|---|---|" + "---|" * len(METHODS)]
    groups = [*sorted(ape.items()), ("all", np.concatenate(list(ape.values())))]
    for name, values in groups:
        lines.append(f"| {name} | {values.shape[0]} | "
                     + " | ".join(f"{v:.1f}" for v in values.mean(axis=0)) + " |")
    pooled = groups[-1][1]
    lines.append(f"| all, median APE | {pooled.shape[0]} | "
                 + " | ".join(f"{v:.1f}" for v in np.median(pooled, axis=0)) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3,
                        help="seeds 0..N-1: pooled with the default 3, one row each beyond")
    args = parser.parse_args()
    series_list, sources = acceptance_series()
    print("Below the measured range: each series' smallest scale from its others\n")
    print(_table(below_ape(series_list, sources)))
    print("\nBetween measured scales: the random split's runs inside their context's range\n")
    if args.seeds <= 3:
        print(_table(inside_ape(series_list, sources, tuple(range(args.seeds)))))
        return
    print("| seed | runs | " + " | ".join(f"{m} MAPE" for m in METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for seed in range(args.seeds):
        pooled = np.concatenate(list(inside_ape(series_list, sources, (seed,)).values()))
        print(f"| {seed} | {pooled.shape[0]} | "
              + " | ".join(f"{v:.1f}" for v in pooled.mean(axis=0)) + " |")


if __name__ == "__main__":
    main()

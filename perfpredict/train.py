"""Training: the store's runs -> a sealed runtime-predictor artifact, saved in the store.

The artifact carries the learned predictor and, for every series with two or more
measured scales, its measured medians and fitted law parameters, so that an estimate
needs neither the runs nor the training libraries.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from perfpredict import __version__, artifact
from perfpredict.errors import NotTrainedError
from perfpredict.overhead.contexts import SeriesContext, full_contexts
from perfpredict.predictor import HybridPredictor
from perfpredict.series import Series, build_series

#: Fewest scheduler jobs (with submit times) worth fitting a walltime advisor on.
MIN_WALLTIME_JOBS = 200


@dataclass
class TrainReport:
    n_runs: int
    n_series: int = 0
    n_series_learned_from: int = 0
    base_law: dict[str, str] | None = None
    apply_correction: dict[str, bool] | None = None
    metrics: dict[str, float] | None = None
    artifact_sha256: str | None = None
    walltime_jobs: int = 0  # jobs the walltime advisor was fitted on (0: not fitted)

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def series_entries(series_list: list[Series]) -> list[dict[str, Any]]:
    """What an estimate needs to know about each series with two or more measured
    scales, all series' laws fitted at once."""
    indices, contexts = full_contexts(series_list)
    return [_entry(contexts.context(row, series_list[i]))
            for row, i in enumerate(indices.tolist())]


def _entry(ctx: SeriesContext) -> dict[str, Any]:
    series = ctx.series
    return {
        "key": list(series.key), "scale_unit": series.scale_unit, "weak": series.weak,
        "scales": ctx.scales.tolist(), "medians_s": ctx.medians_s.tolist(),
        "summary": [None if v != v else float(v) for v in ctx.summary],
        "laws": {name: law.to_dict() for name, law in ctx.laws.items()},
        "n_runs": int(series.runtime_s.size), "io_share": series.io_share,
        "problem_size_num": series.problem_size_num,
        "ranks_per_node": series.ranks_per_node, "threads_per_rank": series.threads_per_rank,
    }


def build_artifact(series_list: list[Series], n_runs: int,
                   predictor: HybridPredictor | None = None) -> dict[str, Any]:
    """Fit the hybrid on ``series_list`` and pack it with the series' entries."""
    predictor = predictor or HybridPredictor()
    predictor.fit(series_list)
    entries = series_entries(series_list)
    fingerprint = hashlib.sha256(json.dumps(
        [[e["key"], e["scales"], e["medians_s"]] for e in entries]).encode()).hexdigest()
    return artifact.seal({
        "kind": artifact.KIND_RUNTIME, "perfpredict_version": __version__,
        "created_epoch_s": time.time(),
        "training": {"n_runs": n_runs, "n_series": len(entries),
                     "data_fingerprint": fingerprint},
        "predictor": predictor.to_dict(), "series": entries,
    })


def _train_runtime(store, series_list: list[Series],  # type: ignore[no-untyped-def]
                   n_runs: int) -> TrainReport:
    """Fit and save the runtime predictor when some series has three or more scales."""
    from perfpredict.store.artifacts import save_artifact

    report = TrainReport(n_runs=n_runs)
    if any(s.scales.size >= 3 for s in series_list):
        doc = save_artifact(store, build_artifact(series_list, n_runs))
        predictor = doc["predictor"]
        report.n_series = doc["training"]["n_series"]
        report.n_series_learned_from = predictor["n_series"]
        report.base_law = predictor["base_law"]
        report.apply_correction = predictor["apply_correction"]
        report.metrics = predictor["metrics"]
        report.artifact_sha256 = doc["sha256"]
    return report


def train(store, apps: list[str] | None = None,  # type: ignore[no-untyped-def]
          dask: str | None = None) -> TrainReport:
    """Train on the store's runs (optionally only ``apps``) and save the artifacts there:
    the runtime predictor when some series has three or more scales, and the walltime
    advisor when the store holds scheduler jobs with submit times.

    ``dask``, a scheduler address or ``"local"``, trains the runtime predictor on
    dask.distributed (see :mod:`perfpredict.distributed`); None trains in this process.
    """
    from perfpredict.store.queries import count_submitted_jobs, runs_frame

    frame = None
    if dask is None:
        frame = runs_frame(store, app=apps)
        report = _train_runtime(store, build_series(frame), len(frame))
    else:
        from perfpredict.distributed import dask_training, read_series

        with dask_training(dask) as client:
            report = _train_runtime(store, *read_series(client, store.url, apps))
    n_jobs = count_submitted_jobs(store, app=apps)
    if n_jobs >= MIN_WALLTIME_JOBS:
        from perfpredict.advise.walltime import WalltimeAdvisor, save_walltime_advisor

        if frame is None:  # the walltime advisor is fitted in this process
            frame = runs_frame(store, app=apps)
        save_walltime_advisor(store, WalltimeAdvisor().fit(frame))
        report.walltime_jobs = n_jobs
    if report.artifact_sha256 is None and not report.walltime_jobs:
        raise NotTrainedError(
            f"nothing to train on: the store holds {report.n_runs} runs, but no series "
            "(application, system, problem size, variant, layout) with three or more measured "
            f"scales and fewer than {MIN_WALLTIME_JOBS} scheduler jobs with submit times; "
            "ingest more runs (e.g. 'perfpredict datasets load')")
    return report

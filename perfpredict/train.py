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
from perfpredict.overhead.features import fit_context
from perfpredict.predictor import HybridPredictor
from perfpredict.series import Series, build_series


@dataclass
class TrainReport:
    n_runs: int
    n_series: int
    n_series_learned_from: int
    base_law: dict[str, str]
    apply_correction: dict[str, bool]
    metrics: dict[str, float]
    artifact_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def series_entry(series: Series) -> dict[str, Any]:
    """What an estimate needs to know about one series."""
    ctx = fit_context(series)
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
    entries = [series_entry(s) for s in series_list if s.scales.size >= 2]
    fingerprint = hashlib.sha256(json.dumps(
        [[e["key"], e["scales"], e["medians_s"]] for e in entries]).encode()).hexdigest()
    return artifact.seal({
        "kind": artifact.KIND_RUNTIME, "perfpredict_version": __version__,
        "created_epoch_s": time.time(),
        "training": {"n_runs": n_runs, "n_series": len(entries),
                     "data_fingerprint": fingerprint},
        "predictor": predictor.to_dict(), "series": entries,
    })


def train(store, apps: list[str] | None = None) -> TrainReport:  # type: ignore[no-untyped-def]
    """Train on the store's runs (optionally only ``apps``) and save the artifact there."""
    from perfpredict.store.artifacts import save_artifact
    from perfpredict.store.queries import runs_frame

    frame = runs_frame(store, app=apps)
    series_list = build_series(frame)
    if not any(s.scales.size >= 3 for s in series_list):
        raise NotTrainedError(
            f"nothing to train on: the store holds {len(frame)} runs but no series "
            "(application, system, problem size, layout) with three or more measured "
            "scales; ingest more runs (e.g. 'perfpredict datasets load')")
    doc = build_artifact(series_list, len(frame))
    save_artifact(store, doc)
    predictor = doc["predictor"]
    return TrainReport(
        n_runs=len(frame), n_series=doc["training"]["n_series"],
        n_series_learned_from=predictor["n_series"], base_law=predictor["base_law"],
        apply_correction=predictor["apply_correction"], metrics=predictor["metrics"],
        artifact_sha256=doc["sha256"])

"""Between measured scales, on real data (slow; reads ../shared, CI runs it): an estimate
inside a series' measured range is the laws' mean moved onto the runs measured around it
(:func:`perfpredict.model.runtime.measured_offset_log`), and that is measured against the
laws' mean alone on every run of the random split (store cut) that lies strictly between
two of its context's measured scales, every data set of the acceptance store.

Margins: over fifteen seeds (0-14) the moved estimate's MAPE was below the laws' mean's
in every seed (by 0.6-2.5 points, 1.8-2.1 over each three consecutive seeds), its median
APE too (by 1.3-2.8); pooled over seeds 0-2, 2,196 runs: 13.6% -> 11.8% (median
8.1% -> 6.2%). MLPerf Training and PencilFFTs, whose per-scale medians are noisier, moved
by -0.7 to +2.3 points from seed to seed; VASP, CP2K, Castro and RELeARN fell in every
seed but one (CP2K's seed 8, +0.6).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.accuracy_benchmark import JUDGED, REPORTED, build_store
from perfpredict import artifact
from perfpredict.evaluate import series_sources
from perfpredict.evaluate.protocols import plan_split
from perfpredict.model.runtime import ENSEMBLE, RuntimeModel
from perfpredict.model.series import build_series
from perfpredict.overhead.features import fit_context, law_log_predictions
from perfpredict.store.queries import runs_frame
from tests.conftest import shared_path

pytestmark = pytest.mark.slow
SEEDS = (0, 1, 2)
SHIPPED = Path(__file__).resolve().parents[2] / "models" / "predictor.json"


@pytest.fixture(scope="module")
def inside_ape(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """Per data set, rows of (APE of the estimate, APE of the laws' mean), in percent.
    Inside the measured range an estimate does not depend on training (the correction
    and the peers act beyond it), so the shipped predictor answers for every context."""
    store = build_store(f"sqlite:///{tmp_path_factory.mktemp('inside') / 'store.db'}",
                        JUDGED + REPORTED, shared_datasets=shared_path("datasets"))
    frame = runs_frame(store, with_source=True)
    store.dispose()
    series_list, sources = build_series(frame), series_sources(frame)
    model = RuntimeModel.from_dict(artifact.read_file(SHIPPED)["predictor"])
    rows: dict[str, list[tuple[float, float]]] = {}
    for seed in SEEDS:
        for index, holdout in plan_split(series_list, "random", seed).holdouts.items():
            ctx = fit_context(holdout.context)
            series = series_list[index]
            p, measured_s = series.scale[holdout.test], series.runtime_s[holdout.test]
            inside = (p > ctx.scale_min) & (p < ctx.scale_max)
            if not inside.any():
                continue
            p, measured_s = p[inside], measured_s[inside]
            estimate_s = model.predict_columns(holdout.context, p, ctx=ctx).runtime_s
            logs = law_log_predictions(ctx, p)
            laws_mean_s = np.exp(np.mean([logs[name] for name in ENSEMBLE], axis=0))
            rows.setdefault(sources[series.key], []).extend(zip(
                100 * np.abs(estimate_s / measured_s - 1),
                100 * np.abs(laws_mean_s / measured_s - 1), strict=True))
    return {name: np.array(values) for name, values in rows.items()}


def test_between_measured_scales_the_estimate_beats_the_laws_mean(inside_ape) -> None:  # type: ignore[no-untyped-def]
    pooled = np.concatenate(list(inside_ape.values()))
    assert pooled.shape[0] > 1500
    estimate_mape, laws_mape = pooled.mean(axis=0)
    assert estimate_mape < laws_mape - 1.0, (estimate_mape, laws_mape)
    estimate_median, laws_median = np.median(pooled, axis=0)
    assert estimate_median < laws_median - 0.5, (estimate_median, laws_median)


@pytest.mark.parametrize("data_set", ["vasp_archer", "cp2k_readme", "castro_scaling",
                                      "relearn"])
def test_between_measured_scales_curves_that_bend_are_followed(inside_ape,  # type: ignore[no-untyped-def]
                                                               data_set: str) -> None:
    """The data sets whose estimates fell in 14 or 15 of the fifteen seeds."""
    estimate_mape, laws_mape = inside_ape[data_set].mean(axis=0)
    assert estimate_mape < laws_mape, (estimate_mape, laws_mape)

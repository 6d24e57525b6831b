"""``train --dask``: the same predictor, within a stated tolerance, on dask.distributed."""

from __future__ import annotations

import pytest

from perfpredict import datasets
from perfpredict.predictor import HybridPredictor
from perfpredict.series import Series, build_series

#: Largest difference allowed in a nested mean |log error| between the two paths: XGBoost
#: on Dask samples rows (``subsample``) per worker, so its trees differ a little.
TOLERANCE = 0.03


def _bundled_series() -> list[Series]:
    import pandas as pd

    frames = [datasets.load(name) for name in ("relearn", "lulesh_thicket")]
    frame = pd.concat(frames, ignore_index=True)
    frame["id"] = range(len(frame))
    for column in ("nodes", "state", "extra"):
        frame[column] = None
    frame["censored"] = False
    return build_series(frame)


@pytest.mark.slow
def test_dask_training_matches_the_single_process_path() -> None:
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.distributed import use_client

    series = _bundled_series()
    single = HybridPredictor().fit(series).metrics_
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client, use_client(client)):
        on_dask = HybridPredictor().fit(series).metrics_
    assert single.keys() == on_dask.keys()
    for name, value in single.items():
        assert on_dask[name] == pytest.approx(value, abs=TOLERANCE), (name, single, on_dask)

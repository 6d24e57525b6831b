"""The overhead regressor: XGBoost on log(T_measured / T_law)."""

from __future__ import annotations

from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.overhead.trees import TreeEnsemble


class OverheadRegressor:
    """Gradient-boosted trees predicting the log overhead coefficient log c.

    Strong leaf regularisation (``reg_lambda``) and a minimum evidence per leaf
    (``min_child_weight``) shrink the correction toward c = 1 where few series support it.
    One thread, always, and the trees' row sampling seeded by ``random_state``: trained
    on the same store, the same trees on any machine (issue 14, item 8: a coverage test
    passed on one machine and failed on another). The nested examples are small enough
    that XGBoost's per-tree thread synchronisation costs more than a second thread saves,
    and the machines this runs on are shared.
    """

    #: XGBoost's threads per fit: not a parameter, so no caller makes results depend on
    #: the machine's cores.
    n_threads = 1

    def __init__(self, n_estimators: int = 300, max_depth: int = 3,
                 learning_rate: float = 0.03, min_child_weight: float = 3.0,
                 reg_lambda: float = 5.0, subsample: float = 0.8,
                 random_state: int = 0) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.subsample = subsample
        self.random_state = random_state

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "n_estimators", "max_depth", "learning_rate", "min_child_weight", "reg_lambda",
            "subsample", "random_state")}

    def fit(self, features: FloatArray, log_overhead: FloatArray,
            sample_weight: FloatArray | None = None,
            client: Any | None = None) -> OverheadRegressor:
        """Fit in this process, or with ``xgboost.dask`` on ``client``'s workers."""
        import xgboost

        params = {"objective": "reg:squarederror", "base_score": 0.0, "tree_method": "hist",
                  "n_jobs": self.n_threads, **self.get_params()}
        if client is None:
            booster = xgboost.XGBRegressor(**params)
            booster.fit(features, log_overhead, sample_weight=sample_weight)
        else:
            booster = _fit_on_dask(client, params, features, log_overhead, sample_weight)
        self.model_json_: str = booster.get_booster().save_raw("json").decode()
        self.ensemble_ = TreeEnsemble.from_xgboost_json(self.model_json_)
        return self

    def predict(self, features: FloatArray) -> FloatArray:
        return np.asarray(self.ensemble_.predict(features), dtype=float)


def _fit_on_dask(client: Any, params: dict[str, Any], features: FloatArray,
                 target: FloatArray, sample_weight: FloatArray | None) -> Any:
    """The same regressor trained by ``xgboost.dask`` on the client's workers, the rows
    split in one partition per worker so that each trains on its share."""
    from perfpredict._imports import require

    xgboost_dask = require("xgboost.dask", "dask")
    dask_array = require("dask.array", "dask")
    n_workers = max(1, len(client.scheduler_info()["workers"]))
    rows = max(1, -(-features.shape[0] // n_workers))

    def partitioned(values: FloatArray) -> Any:
        return dask_array.from_array(values, chunks=(rows, *values.shape[1:]))

    booster = xgboost_dask.DaskXGBRegressor(**params)
    booster.client = client
    booster.fit(partitioned(features), partitioned(target),
                sample_weight=None if sample_weight is None else partitioned(sample_weight))
    return booster

"""What the hybrid must beat, measured on the same split: each analytical law alone,
fitted to the series' context, and a black box that learns from the same training pool
as the hybrid (so nothing beyond a cut reaches it either)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from perfpredict.laws import LAWS
from perfpredict.laws.base import FloatArray
from perfpredict.series import Series

#: laws fitted to every tested series' context; Gustafson only to weak-scaling series
STRONG_LAWS = ("amdahl", "amdahl_log", "power", "extrap")
WEAK_LAWS = ("gustafson",)
BLACKBOX = "blackbox_xgboost"


def law_names(series: Series) -> tuple[str, ...]:
    """The laws a series is compared against."""
    return STRONG_LAWS + WEAK_LAWS if series.weak else STRONG_LAWS


def law_prediction(name: str, context: Series, p: FloatArray) -> FloatArray:
    """The law ``name`` fitted to the context's median runtime per scale, at ``p``
    (Amdahl where the context has too few scales to determine it)."""
    scales, medians = context.medians()
    law = LAWS[name]()
    if scales.size < law.min_scales:
        law = LAWS["amdahl"]()
    return law.fit(scales, medians).predict(p)


def blackbox(pool: list[Series],
             random_state: int = 0) -> Callable[[Series, FloatArray], FloatArray]:
    """XGBoost on raw features (scale, layout, size, app, system) -> log runtime, trained
    on every run of ``pool``."""
    import xgboost

    codes: dict[str, dict[str, int]] = {"app": {}, "system": {}}

    def features(series: Series, p: FloatArray) -> FloatArray:
        app, system = series.key.app, series.key.system
        n = p.size
        return np.column_stack([
            np.log2(p), np.full(n, series.ranks_per_node or np.nan),
            np.full(n, series.threads_per_rank or np.nan),
            np.full(n, math.log10(series.problem_size_num) if series.problem_size_num else np.nan),
            np.full(n, codes["app"].setdefault(app, len(codes["app"]))),
            np.full(n, codes["system"].setdefault(system, len(codes["system"]))),
            np.full(n, float(series.weak)), np.full(n, series.scale_unit == "nodes"),
        ])

    x = np.vstack([features(s, s.scale) for s in pool])
    y = np.concatenate([np.log(s.runtime_s) for s in pool])
    model = xgboost.XGBRegressor(n_estimators=300, max_depth=6, learning_rate=0.05,
                                 n_jobs=1, random_state=random_state).fit(x, y)
    return lambda series, p: np.exp(model.predict(features(series, p)))

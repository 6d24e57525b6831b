"""A run repeated at a measured scale: how often its interval holds the repeat.

Most jobs a center runs are repeats of a node count already measured, and their walltime
is read off the interval there. Each run at a scale its series measured more than once is
left out and predicted, at that scale, from the rest of its series (which still shows the
scale), by a predictor trained on the other folds of series of the acceptance store (as
``bench.accuracy_benchmark`` builds it); the table gives, per data set, the share of
those runs inside the interval an estimate gives (the series' own repeats' noise where
they are enough, :class:`perfpredict.uncertainty.noise.RepeatNoise`), the share inside
the interval calibrated on held-out scales that stood there before, how often the
series' own repeats decided, and the median width (log upper / lower) of both. Castro,
CP2K and PencilFFTs measured each scale once and have no rows.

Run: python -m bench.repeat_run_benchmark [--seed 0] [--folds 5] [--confidence 0.9]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import numpy as np

from bench.interpolation_benchmark import acceptance_series
from perfpredict.model.fit import HybridPredictor
from perfpredict.model.series import Series
from perfpredict.overhead.features import fit_context
from perfpredict.uncertainty.noise import RepeatNoise

#: Columns of :func:`repeat_hits`' rows: the repeat inside the interval, inside the
#: interval calibrated on held-out scales, whether the series' own repeats decided, and
#: the two intervals' widths (log upper / lower).
COLUMNS = ("inside", "inside_calibrated", "own_decides", "width", "width_calibrated")


def repeat_hits(series_list: list[Series], sources: dict[Any, str], seed: int = 0,
                n_folds: int = 5, confidence: float = 0.9) -> dict[str, np.ndarray]:
    """Per data set, one row per repeated run and one column per :data:`COLUMNS`."""
    fold = np.random.default_rng(seed).permutation(len(series_list)) % n_folds
    rows: dict[str, list[list[float]]] = {}
    for k in range(n_folds):
        model = HybridPredictor(random_state=seed).fit(
            [s for s, f in zip(series_list, fold, strict=True) if f != k]).model_
        for series in (s for s, f in zip(series_list, fold, strict=True)
                       if f == k and s.scales.size >= 2):
            scales, counts = np.unique(series.scale, return_counts=True)
            for run in np.flatnonzero(np.isin(series.scale, scales[counts > 1])):
                context = series.select(np.arange(series.scale.size) != run)
                ctx = fit_context(context)
                p, measured_s = series.scale[[run]], series.runtime_s[run]
                today = model.predict_columns(context, p, confidence, ctx)
                # still repeated (no noise floor), too few repeats to decide
                calibrated = model.predict_columns(context, p, confidence, replace(
                    ctx, repeat_noise=RepeatNoise(ctx.repeat_noise.deviations_log[:1])))
                rows.setdefault(sources[series.key], []).append([
                    today.lower_s[0] <= measured_s <= today.upper_s[0],
                    calibrated.lower_s[0] <= measured_s <= calibrated.upper_s[0],
                    ctx.repeat_noise.decides,
                    np.log(today.upper_s[0] / today.lower_s[0]),
                    np.log(calibrated.upper_s[0] / calibrated.lower_s[0])])
    return {name: np.array(values, dtype=float) for name, values in rows.items()}


def _table(hits: dict[str, np.ndarray]) -> str:
    """Shares of the first three columns, medians of the widths."""
    lines = ["| data set | repeated runs | " + " | ".join(COLUMNS) + " |",
             "|---|---|" + "---|" * len(COLUMNS)]
    for name, values in [*sorted(hits.items()), ("all", np.concatenate(list(hits.values())))]:
        figures = [*values[:, :3].mean(axis=0), *np.median(values[:, 3:], axis=0)]
        lines.append(f"| {name} | {values.shape[0]} | "
                     + " | ".join(f"{v:.3f}" for v in figures) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--confidence", type=float, default=0.9)
    args = parser.parse_args()
    series_list, sources = acceptance_series()
    print(_table(repeat_hits(series_list, sources, args.seed, args.folds, args.confidence)))


if __name__ == "__main__":
    main()

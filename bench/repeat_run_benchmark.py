"""A run repeated at a measured scale: how often its interval holds the repeat.

Most jobs a center runs are repeats of a node count already measured, and their walltime
is read off the interval there. Every series is predicted by a predictor trained on the
other folds of series of the acceptance store (as ``bench.accuracy_benchmark`` builds it),
in two ways:

- **repeats**: each run at a scale its series measured more than once is left out and
  predicted at that scale from the rest of its series (which still shows the scale). The
  table gives, per data set, the share of those runs inside the interval an estimate
  gives (the series' own repeats' noise where they are enough,
  :class:`perfpredict.uncertainty.noise.RepeatNoise`), the share inside the interval
  calibrated on held-out scales that stood there before, how often the series' own
  repeats decided, and the median width (log upper / lower) of both.
- **once per scale**: each series with repeats is cut to its first run at each scale, as
  if measured once per scale, and its other runs are predicted at their scale; the
  interval is then no narrower than the noise floor
  (:class:`perfpredict.uncertainty.noise.NoiseFloor`). The table gives the share inside
  with the floor of the series' application where three or more of its training series
  have repeats (as an estimate reads it), and with the floor pooled over every
  application, and both median widths.

Castro, CP2K and PencilFFTs measured each scale once and have no rows.

Run: python -m bench.repeat_run_benchmark [--seed 0] [--folds 5] [--confidence 0.9]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from bench.interpolation_benchmark import acceptance_series
from perfpredict.model.fit import HybridPredictor
from perfpredict.model.runtime import RuntimeModel
from perfpredict.model.series import Series
from perfpredict.overhead.features import fit_context
from perfpredict.uncertainty.noise import RepeatNoise

#: Columns of :func:`repeat_hits`' rows: the repeat inside the interval, inside the
#: interval calibrated on held-out scales, whether the series' own repeats decided, and
#: the two intervals' widths (log upper / lower).
COLUMNS = ("inside", "inside_calibrated", "own_decides", "width", "width_calibrated")
#: Columns of :func:`once_per_scale_hits`' rows: the run inside the interval with its
#: application's noise floor, inside it with the pooled floor, and the two widths.
ONCE_COLUMNS = ("inside", "inside_pooled_floor", "width", "width_pooled_floor")


def held_out(series_list: list[Series], seed: int = 0,
             n_folds: int = 5) -> Iterator[tuple[RuntimeModel, Series]]:
    """Each series of two or more scales with the model trained on the other folds."""
    fold = np.random.default_rng(seed).permutation(len(series_list)) % n_folds
    for k in range(n_folds):
        model = HybridPredictor(random_state=seed).fit(
            [s for s, f in zip(series_list, fold, strict=True) if f != k]).model_
        for series in (s for s, f in zip(series_list, fold, strict=True)
                       if f == k and s.scales.size >= 2):
            yield model, series


def _inside(model: RuntimeModel, context: Series, ctx: Any, p: np.ndarray,
            measured_s: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Whether each run lies inside its interval, and the interval's width in log."""
    pred = model.predict_columns(context, p, confidence, ctx)
    return ((pred.lower_s <= measured_s) & (measured_s <= pred.upper_s),
            np.log(pred.upper_s / pred.lower_s))


def repeat_hits(pairs: list[tuple[RuntimeModel, Series]], sources: dict[Any, str],
                confidence: float = 0.9) -> dict[str, np.ndarray]:
    """Per data set, one row per repeated run and one column per :data:`COLUMNS`."""
    rows: dict[str, list[list[float]]] = {}
    for model, series in pairs:
        scales, counts = np.unique(series.scale, return_counts=True)
        for run in np.flatnonzero(np.isin(series.scale, scales[counts > 1])):
            context = series.select(np.arange(series.scale.size) != run)
            ctx = fit_context(context)
            p, measured_s = series.scale[[run]], series.runtime_s[[run]]
            today, width = _inside(model, context, ctx, p, measured_s, confidence)
            # still repeated (no noise floor), too few repeats to decide
            calibrated, width_calibrated = _inside(model, context, replace(
                ctx, repeat_noise=RepeatNoise(ctx.repeat_noise.deviations_log[:1])), p,
                measured_s, confidence)
            rows.setdefault(sources[series.key], []).append([
                today[0], calibrated[0], ctx.repeat_noise.decides, width[0],
                width_calibrated[0]])
    return {name: np.array(values, dtype=float) for name, values in rows.items()}


def once_per_scale_hits(pairs: list[tuple[RuntimeModel, Series]], sources: dict[Any, str],
                        confidence: float = 0.9) -> dict[str, np.ndarray]:
    """Per data set, one row per run beyond the first at its scale, of the series with
    repeats, and one column per :data:`ONCE_COLUMNS`."""
    rows: dict[str, list[np.ndarray]] = {}
    for model, series in pairs:
        first = np.zeros(series.scale.size, dtype=bool)
        first[np.unique(series.scale, return_index=True)[1]] = True
        if first.all():
            continue
        once = series.select(first)
        ctx = fit_context(once)
        p, measured_s = series.scale[~first], series.runtime_s[~first]
        pooled_floor = replace(model, noise_floor=model.noise_floor._replace(by_app={}))
        columns = [*_inside(model, once, ctx, p, measured_s, confidence),
                   *_inside(pooled_floor, once, ctx, p, measured_s, confidence)]
        rows.setdefault(sources[series.key], []).append(
            np.column_stack([columns[0], columns[2], columns[1], columns[3]]))
    return {name: np.concatenate(parts).astype(float) for name, parts in rows.items()}


def _table(hits: dict[str, np.ndarray], columns: tuple[str, ...], n_shares: int) -> str:
    """Shares of the first ``n_shares`` columns, medians of the rest (the widths)."""
    lines = ["| data set | runs | " + " | ".join(columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for name, values in [*sorted(hits.items()), ("all", np.concatenate(list(hits.values())))]:
        figures = [*values[:, :n_shares].mean(axis=0),
                   *np.median(values[:, n_shares:], axis=0)]
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
    pairs = list(held_out(series_list, args.seed, args.folds))
    print("Repeats at a measured scale, from the rest of their series\n")
    print(_table(repeat_hits(pairs, sources, args.confidence), COLUMNS, 3))
    print("\nSeries cut to one run per scale, their other runs at those scales\n")
    print(_table(once_per_scale_hits(pairs, sources, args.confidence), ONCE_COLUMNS, 2))


if __name__ == "__main__":
    main()

"""How the bundled predictor's estimates go on beyond each series' measured range.

A user reads a code's estimates one node count after another (``advise``'s table, its
scaling plot), and a curve that falls, rises and falls again, or that speeds up more
per doubling far out than just past its last measurement, reads as a fault whatever
the backtests say. For every trained strong-scaling series of three or more scales this
reads the estimate every quarter doubling up to :data:`MAX_DOUBLINGS` beyond the largest
measured scale and reports the series whose estimate rises and falls there and those
with a doubling that speeds up more than the doubling before it; with the pooled slope
drift's fixed point (the slope it pulls every other toward: ``perfpredict.laws.drift``).

``--slope-turns`` reads the measured data sets instead: how the slope d ln T / d ln p of
each interval between consecutive measured scales turned by the next interval, per
doubling, by the slope it started from (docs/accuracy.md, "Tried and rejected", the
slope drift held from steepening)::

    python -m bench.estimate_shape
    PERFPREDICT_SHARED=../shared python -m bench.estimate_shape --slope-turns
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.model.series import Series

if TYPE_CHECKING:
    from perfpredict.estimate.estimates import LoadedPredictor
    from perfpredict.laws.drift import SlopeDrift
    from perfpredict.model.entry import SeriesEntry
    from perfpredict.overhead.contexts import SeriesContext

#: How far beyond the largest measured scale the estimates are read, in doublings.
MAX_DOUBLINGS = 6
#: Readings per doubling.
READS_PER_DOUBLING = 4
#: A doubling "speeds up more than the one before it" when its slope d ln T / d ln p is
#: steeper than that one's by more than this: a slope moves by about 0.03 with 2% noise
#: in the runtimes at both ends of a doubling.
STEEPER_BY = 0.05
#: Slope bins of ``--slope-turns``.
SLOPE_EDGES = (-3.0, -1.0, -0.8, -0.6, -0.4, -0.2, -0.05, 0.1, 3.0)


class Shape(NamedTuple):
    """What one series' estimates beyond its range do."""

    series: str
    rises_and_falls: bool
    steeper_later: bool
    #: d ln T / d ln p over each whole doubling beyond the range.
    slopes_per_doubling: FloatArray


def shape_of(runtime_s: FloatArray) -> tuple[bool, bool, FloatArray]:
    """Whether estimates read every 1/:data:`READS_PER_DOUBLING` of a doubling from the
    edge on rise and fall (their slope changes sign), whether a whole doubling's slope
    is steeper than the one before it by more than :data:`STEEPER_BY`, and the slope of
    each whole doubling."""
    log_t = np.log(runtime_s)
    step = np.sign(np.round(np.diff(log_t), 6))
    moving = step[step != 0]
    rises_and_falls = bool(np.any(moving[1:] != moving[:-1]))
    per_doubling = np.diff(log_t[::READS_PER_DOUBLING]) / np.log(2)
    steeper_later = bool(np.any(per_doubling[1:] < per_doubling[:-1] - STEEPER_BY))
    return rises_and_falls, steeper_later, per_doubling


def bundled_series(min_scales: int = 3) -> tuple[LoadedPredictor,
                                                 list[tuple[SeriesEntry, Series, SeriesContext]]]:
    """The bundled predictor, and each of its trained series of ``min_scales`` or more
    scales with the series (per-scale medians) and fitted context it rests on."""
    from perfpredict.estimate.estimates import load_predictor

    loaded = load_predictor(None)
    return loaded, [(entry, *loaded.series_context(entry))
                    for app in loaded.entries.apps() for entry in loaded.entries.of_app(app)
                    if len(entry.scales) >= min_scales]


def estimate_shapes(loaded: LoadedPredictor,
                    trained: list[tuple[SeriesEntry, Series, SeriesContext]]) -> list[Shape]:
    """The :class:`Shape` of each strong-scaling series of ``trained``
    (:func:`bundled_series`), estimates read with its peers as ``estimate`` reads them."""
    distances = np.arange(MAX_DOUBLINGS * READS_PER_DOUBLING + 1) / READS_PER_DOUBLING
    shapes = []
    for entry, series, ctx in trained:
        if entry.weak:
            continue
        runtime_s = loaded.predictor.predict_columns(
            series, ctx.scale_max * 2.0 ** distances, 0.9, ctx, loaded.peers(series)).runtime_s
        shapes.append(Shape(series.name, *shape_of(runtime_s)))
    return shapes


def drift_fixed_point(drift: SlopeDrift | None) -> float | None:
    """The slope at which a predictor's pooled slope drift crosses 0: every slope beyond
    a series' range is pulled toward it. None without a drift, or where it never changes
    sign."""
    if drift is None or drift.drift.min() > 0 or drift.drift.max() < 0:
        return None
    return float(np.interp(0.0, -drift.drift, drift.slope))


def slope_turns(all_series: list[Series]) -> list[tuple[float, float]]:
    """(slope of an interval, its turn per doubling by the next interval) for every pair
    of consecutive intervals of the strong-scaling series of three or more scales, at
    their median runtimes: what the drift is fitted from
    (:func:`perfpredict.laws.drift.slope_turns`)."""
    from perfpredict.laws.drift import slope_turns as turns_of

    medians = [series.medians() for series in all_series if not series.weak]
    if not medians:
        return []
    sizes = [scales.size for scales, _ in medians]
    slope, turn, _ = turns_of(np.concatenate([scales for scales, _ in medians]),
                              np.concatenate([runtime_s for _, runtime_s in medians]),
                              np.concatenate([[0], np.cumsum(sizes)]))
    return list(zip(slope.tolist(), turn.tolist(), strict=True))


def data_set_series(name: str) -> list[Series]:
    """Data set ``name``'s series, told apart as a store tells them."""
    import tempfile

    from bench.accuracy_benchmark import build_store
    from perfpredict.model.series import build_series
    from perfpredict.store.queries import runs_frame

    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{Path(tmp) / 'one.db'}", (name,))
        try:
            return build_series(runs_frame(store))
        finally:
            store.dispose()


#: The strong-scaling data sets ``--slope-turns`` reads.
TURN_DATA_SETS = ("vasp_archer", "cp2k_readme", "castro_scaling", "pencilffts_jeanzay",
                  "mlperf_training")


def _print_slope_turns() -> None:
    print("| data set | " + " | ".join(
        f"{lo:g} to {hi:g}" for lo, hi in zip(SLOPE_EDGES[:-1], SLOPE_EDGES[1:],
                                              strict=True)) + " |")
    print("|---" * len(SLOPE_EDGES) + "|")
    for name in TURN_DATA_SETS:
        try:
            pairs = np.array(slope_turns(data_set_series(name))).reshape(-1, 2)
        except FileNotFoundError:
            print(f"| {name} | " + "not found | " * (len(SLOPE_EDGES) - 1))
            continue
        cells = []
        for lo, hi in zip(SLOPE_EDGES[:-1], SLOPE_EDGES[1:], strict=True):
            turns = pairs[(pairs[:, 0] > lo) & (pairs[:, 0] <= hi), 1]
            cells.append(f"{np.median(turns):+.2f} ({turns.size})" if turns.size else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nMedian turn of the slope per doubling (pairs of consecutive intervals), by the "
          "slope of the first interval; positive: the next interval scaled less.")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slope-turns", action="store_true",
                        help="how measured slopes turned between consecutive intervals")
    if parser.parse_args(argv).slope_turns:
        _print_slope_turns()
        return
    loaded, trained = bundled_series()
    shapes = estimate_shapes(loaded, trained)
    rising = [s for s in shapes if s.rises_and_falls]
    steeper = [s for s in shapes if s.steeper_later]
    print(f"{len(shapes)} strong-scaling series, read every 1/{READS_PER_DOUBLING} doubling "
          f"up to {MAX_DOUBLINGS} doublings beyond their largest measured scale")
    print(f"  rise and fall: {len(rising)}")
    print(f"  a doubling steeper than the one before it by more than {STEEPER_BY}: "
          f"{len(steeper)}")
    fixed = drift_fixed_point(loaded.predictor.drift)
    print("  the slope drift pulls every slope toward "
          + ("nothing (it never changes sign)" if fixed is None else f"{fixed:.2f}"))
    for shape in rising:
        print(f"  rises and falls: {shape.series}: slopes per doubling "
              + " ".join(f"{s:+.2f}" for s in shape.slopes_per_doubling))


if __name__ == "__main__":
    main()

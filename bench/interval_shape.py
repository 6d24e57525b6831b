"""How the bundled predictor's 90% intervals grow beyond each series' measured range.

An interval should start at the one at the largest measured scale and widen as the
distance grows; what a user sees asking for a few nodes more than the store measured is
the first thing they check. For every trained series of three or more scales this reads
the interval's log width, log(upper / lower), at distances on a grid of doublings beyond
the largest measured scale, and reports the median widths and the series whose interval
narrows somewhere farther out (docs/accuracy.md, "The interval ramped alike")::

    python -m bench.interval_shape
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.estimate_shape import bundled_series

#: Doublings beyond the largest measured scale at which the intervals are read.
DISTANCES_LOG2 = np.array([0.0, 1 / 64, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1, 1.5, 2, 3, 4])
#: A narrowing of the log width smaller than this is rounding, not shape.
TOLERANCE_LOG = 0.01


def interval_widths() -> list[tuple[str, bool, np.ndarray]]:
    """(series name, weak scaling, log widths at :data:`DISTANCES_LOG2`) per trained
    series of the bundled predictor with three or more scales."""
    loaded, trained = bundled_series()
    rows = []
    for entry, series, ctx in trained:
        pred = loaded.predictor.predict_columns(
            series, ctx.scale_max * 2.0 ** DISTANCES_LOG2, 0.9, ctx, loaded.peers(series))
        rows.append((series.name, entry.weak, np.log(pred.upper_s / pred.lower_s)))
    return rows


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    rows = interval_widths()
    for weak in (False, True):
        widths = np.array([w for _, is_weak, w in rows if is_weak == weak])
        print(f"{'weak' if weak else 'strong'} scaling, {len(widths)} series: median log "
              "width at " + ", ".join(f"{d:g}: {m:.3f}" for d, m in
                                      zip(DISTANCES_LOG2, np.median(widths, axis=0),
                                          strict=True)) + " doublings")
    narrowing = [(name, w) for name, _, w in rows
                 if np.max(np.maximum.accumulate(w) - w) > TOLERANCE_LOG]
    print(f"{len(rows) - len(narrowing)} of {len(rows)} series widen steadily; narrowing "
          f"by more than {TOLERANCE_LOG} somewhere farther out:")
    for name, widths in narrowing:
        print(f"  {name}: " + " ".join(f"{w:.3f}" for w in widths))


if __name__ == "__main__":
    main()

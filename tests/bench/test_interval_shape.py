"""The bundled predictor's intervals beyond the measured range, as a user reads them one
node count after another (``python -m bench.interval_shape``)."""

from __future__ import annotations

import numpy as np


def test_intervals_start_where_the_measurements_end_and_widen() -> None:
    """No series' interval jumps just past its largest measured scale (the median jump
    over 1/64 of a doubling was 0.35 in log width, the trees' answers read there), and
    every one is wider four doublings out than there."""
    from bench.interval_shape import DISTANCES_LOG2, interval_widths

    assert DISTANCES_LOG2[0] == 0 and DISTANCES_LOG2[1] == 1 / 64
    rows = interval_widths()
    assert len(rows) > 100
    widths = np.array([w for _, _, w in rows])
    assert np.all(widths[:, 1] - widths[:, 0] < 0.1)
    assert np.all(widths[:, -1] > widths[:, 0])

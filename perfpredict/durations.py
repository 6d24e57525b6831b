"""How a duration in seconds reads in text: one function, below every layer that prints
one (the estimate, the advice's job-script header, the reports)."""

from __future__ import annotations


def format_seconds(value_s: float) -> str:
    """``value_s`` as a reader wants it: one decimal from a second up, as jobs are timed,
    and three significant digits below, so that a benchmark timing 0.0386 s a transform
    does not read "0.0 s".

    >>> format_seconds(12345.67), format_seconds(8.46), format_seconds(0.03861)
    ('12,345.7', '8.5', '0.0386')
    """
    return f"{value_s:,.1f}" if abs(value_s) >= 1 else f"{value_s:.3g}"

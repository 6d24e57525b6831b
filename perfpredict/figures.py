"""How a number reads in a sentence or a table cell: significant digits, thousands
separated and never in exponent notation, and a percentile's ordinal. A module of its own,
below every layer that prints one, so that the advice's warnings (job limits, benchmark
budgets) write node-hours as the reports' tables do: the advice may not import the
reports, and "2.3e+03 node-hours" beside a table's "2,304" was the result."""

from __future__ import annotations

import math
from typing import Any


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, thousands separated and never in
    exponent notation, which has no place in a proposal's table: 6440.2 is "6,440",
    999.6 "1,000" (``:.3g`` wrote "1e+03"), 0.01234 "0.0123", 1.5 "1.5". Only values
    below 1e-4 keep an exponent."""
    if value == 0 or not math.isfinite(value) or abs(value) < 1e-4:
        return f"{value:.{digits}g}"
    rounded = float(f"{value:.{digits}g}")  # 999.6 -> 1000.0: the exponent it lands on
    exponent = math.floor(math.log10(abs(rounded)))
    text = f"{rounded:,.{max(digits - 1 - exponent, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # as :g, 1.5 not 1.50


def format_value(value: Any) -> str:
    """A cell as a reader wants it: three significant digits below 1,000, whole numbers
    from there, thousands separated."""
    if value is None:
        return ""
    if isinstance(value, float):
        return significant(value) if abs(value) < 999.5 else f"{value:,.0f}"
    return str(value)


def ordinal(percent: float) -> str:
    """``percent`` as the ordinal of a percentile, written as ``:g`` writes the number:
    95 is "95th", 51 "51st", 92 "92nd", 93 "93rd", 11 to 13 "th", and a fraction "97.5th".
    Every percentile was "th": a --kill-risk of 0.49 read "the 51th percentile", 0.08
    "the 92th".

    >>> ordinal(95), ordinal(100 * (1 - 0.49)), ordinal(92), ordinal(13), ordinal(97.5)
    ('95th', '51st', '92nd', '13th', '97.5th')
    """
    text = f"{percent:g}"  # 100 * (1 - 0.49) is 51.00000000000001, which reads "51"
    if not text.isdigit():
        return f"{text}th"
    whole = int(text)
    suffix = ("th" if whole % 100 in (11, 12, 13)
              else {1: "st", 2: "nd", 3: "rd"}.get(whole % 10, "th"))
    return f"{text}{suffix}"


def doublings(value: float) -> str:
    """A distance in doublings of scale, to a tenth, as a note says it: a whole number
    without its ".0" and one doubling singular. "1.0 doublings below the smallest
    measured scale" was how a run at half the smallest one read.

    >>> doublings(1.0), doublings(2.5), doublings(0.04), doublings(6)
    ('1 doubling', '2.5 doublings', '0 doublings', '6 doublings')
    """
    text = f"{value:.1f}".removesuffix(".0")
    return f"{text} doubling{'' if text == '1' else 's'}"

"""An efficiency as a percentage, as estimate, advise and their reports show it: a module
of its own, with nothing to import, so that an estimate does not load the advice's node
selection to print one number."""

from __future__ import annotations

import math


def efficiency_percent(value: float) -> str:
    """An efficiency as a percentage: whole percents from 1%, two significant digits
    below, where whole percents all read "0%" (a node count far past the curve's turn):
    0.76 is "76%", 0.0045 "0.45%", 0.00018 "0.018%"."""
    return f"{value:.{percent_decimals(value)}%}"


def percent_decimals(value: float) -> int:
    """Decimals of ``value`` as a percentage: none from 1%, two significant digits below."""
    if not 0 < value < 0.01:
        return 0
    return 1 - math.floor(math.log10(value * 100))

"""Reading a number out of a problem-size label.

Scaling data labels problem sizes as text ("TGV1024", "1400k-atoms", "5000 neurons/rank").
The number is what a predictor can use (work per node), so parse it where we can and
leave it unknown where we cannot.
"""

from __future__ import annotations

import math
import re

_NUMBER = re.compile(r"(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([kKmMgGtT](?![a-zA-Z]{2}))?")
_SUFFIX = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
#: Version tags ("v0.7", "v2.1.3") are not sizes.
_VERSION = re.compile(r"\bv\d+(?:\.\d+)+\b", re.IGNORECASE)


def problem_size_number(label: str | float | int | None) -> float | None:
    """The largest number in ``label`` with k/M/G/T suffixes applied, or None.

    >>> problem_size_number("1400k-atoms")
    1400000.0
    >>> problem_size_number("TGV1024")
    1024.0
    >>> problem_size_number("reference dataset") is None
    True
    >>> problem_size_number("v0.7 cosmoflow reference dataset") is None
    True
    """
    if label is None:
        return None
    if isinstance(label, (int, float)):
        return float(label) if math.isfinite(label) else None
    best: float | None = None
    for digits, suffix in _NUMBER.findall(_VERSION.sub(" ", label)):
        value = float(digits) * (_SUFFIX[suffix.lower()] if suffix else 1.0)
        if math.isfinite(value) and (best is None or value > best):
            best = value
    return best

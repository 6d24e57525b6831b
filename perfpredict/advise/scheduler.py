"""How batch schedulers write a time limit. Imports nothing of the advice, so that the
plan, the directives and the reports can all use it without importing one another."""

from __future__ import annotations

import math


def pbs_time(walltime_s: float) -> str:
    """PBS ``-l walltime`` as ``HH:MM:SS`` (hours may exceed 24), rounded up to a second.

    >>> pbs_time(90061)
    '25:01:01'
    """
    total_s = math.ceil(walltime_s - 1e-9)
    return f"{total_s // 3600:02d}:{total_s % 3600 // 60:02d}:{total_s % 60:02d}"

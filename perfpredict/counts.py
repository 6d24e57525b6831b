"""How large a count (nodes, ranks, GPUs) can be: the store keeps counts as INTEGER,
32-bit on PostgreSQL, so ingest refuses larger ones and an estimate is not asked for them;
and what counts as a number a library caller gives. A module of its own so that an
estimate, which imports no ingest code, reads the same rules."""

from __future__ import annotations

import numbers

#: Largest count the store holds (PostgreSQL INTEGER).
MAX_COUNT = 2**31 - 1


def is_number(value: object, *, whole: bool = False) -> bool:
    """Whether ``value`` is a number (a whole one with ``whole``) as a library caller
    may give it, numpy's included, and not a bool, which Python counts as one."""
    return (isinstance(value, numbers.Integral if whole else numbers.Real)
            and not isinstance(value, bool))

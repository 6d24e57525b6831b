"""How large a count (nodes, ranks, GPUs) can be: the store keeps counts as INTEGER,
32-bit on PostgreSQL, so ingest refuses larger ones and an estimate is not asked for them;
what counts as a number a library caller gives; the one refusal of a count a user
typed with an option; and how a message says a count of things, or names a few of many.
A module of its own so that an estimate, which imports no ingest code, reads the same
rules."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from perfpredict.errors import BadInputError

#: Largest count the store holds (PostgreSQL INTEGER).
MAX_COUNT = 2**31 - 1


def is_number(value: object, *, whole: bool = False) -> bool:
    """Whether ``value`` is a number (a whole one with ``whole``) as a library caller
    may give it, numpy's included, and not a bool, which Python counts as one.

    Python's own int and float are told by their type first: the abstract classes'
    checks took a sixth of a 100k-query batch estimate, which asks this of every field
    of every query."""
    kind = type(value)
    if kind is float:
        return not whole
    if kind is int:
        return True
    return (isinstance(value, numbers.Integral if whole else numbers.Real)
            and not isinstance(value, bool))


def python_number(value: Any) -> Any:
    """A number a library caller gave as Python's own int or float, which ``json`` writes
    (numpy's ``int64`` and ``float32`` it refuses: an estimate's or a plan's ``as_dict``
    of them failed in ``json.dumps``); anything else as it is, for its check to refuse:
    ``numpy.int64(8)`` is 8, ``numpy.float32(0.5)`` 0.5, ``"8"`` stays ``"8"``."""
    if not is_number(value):
        return value
    return int(value) if is_number(value, whole=True) else float(value)


def plain(value: float) -> int | float:
    """A count as JSON and CSV write it: whole as an integer (8, not 8.0), a fractional one
    (a series measured in ranks, converted to nodes) as it is.

    >>> plain(8.0), plain(2.5)
    (8, 2.5)
    """
    return int(value) if float(value).is_integer() else value


def shown(value: object) -> str:
    """A value a user gave, as a message shows it: a number as ``{:g}`` writes it where
    that is the number itself, else in full (``{:g}`` wrote 1000001 as 1e+06, one past
    the limit of --runs refused as if it were the limit), an integer past what a float
    holds (which ``{:g}`` cannot write) by its count of digits, anything else as its
    ``repr``.

    >>> shown(1e11), shown(1000001), shown(0.123456789), shown(10**400), shown("4")
    ('1e+11', '1000001', '0.123456789', 'a number of 401 digits', "'4'")
    """
    if not is_number(value):
        return repr(value)
    if isinstance(value, numbers.Integral) and abs(int(value)) > 10**300:
        return f"a number of {len(str(abs(int(value))))} digits"
    short = f"{value:g}"
    if float(short) == value or value != value:  # nan equals nothing, itself included
        return short
    return str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))  # type: ignore[arg-type]


def check_count(option: str, value: object, *, least: int = 1, most: int = MAX_COUNT) -> None:
    """Refuse ``value`` unless it is a whole number from ``least`` to ``most``, naming
    the ``option`` the user typed it with (a node count refused as "nodes" deep in a sweep
    of --max-nodes said nothing the user had typed). A float of a whole value, such as a
    library caller takes from a frame's column, is refused as the float it is: "got
    256" read as if 256 itself were refused."""
    if not (is_number(value, whole=True) and least <= value <= most):  # type: ignore[operator]
        got = shown(value)
        if is_number(value) and least <= value <= most and float(value).is_integer():  # type: ignore[arg-type,operator]
            whole = float(value)  # type: ignore[arg-type]
            got = f"{whole!r}, a float; give it as an int, {int(whole)}"
        raise BadInputError(f"{option} must be a whole number from {least} to {most}, got "
                            f"{got}")


def counted(n: float, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: "1 run", "3 runs", "0 files"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


#: Names a summary line shows before it counts the rest (:func:`first_names`).
NAMES_SHOWN = 5


def first_names(names: Sequence[str], *, shown: int = NAMES_SHOWN, where: str = "",
                sep: str = ", ") -> str:
    """All ``names`` when few, else the first ``shown``, how many more and, ``where``,
    what lists them all: hundreds of names made one unreadable line."""
    if len(names) <= shown + 1:  # "and 1 more" would take the room of its name
        return sep.join(names)
    rest = f"{len(names)} in all; {where}" if where else f"{len(names)} in all"
    return f"{sep.join(names[:shown])} and {len(names) - shown} more ({rest})"

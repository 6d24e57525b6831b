"""Names as users write them: the known names closest to a mistyped one, and the key two
spellings of one system share."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from perfpredict.errors import BadInputError


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``name``, case aside, as lookups match them
    ("LULESH2" suggests "lulesh", "frontir" Frontier)."""
    by_folded = {k.casefold(): k for k in known}
    return [by_folded[k] for k in difflib.get_close_matches(name.casefold(), list(by_folded),
                                                           n=n, cutoff=0.5)]


def name_key(name: str) -> str:
    """A system name as it is compared with catalog names and aliases: case, spaces and
    punctuation ignored ("JUWELS Booster", "juwels-booster" and "JUWELS_Booster" are one
    machine). Exact rather than fuzzy: "Perlmutter-CPU" and "Perlmutter-GPU" are close
    strings but different machines, with different charge pools."""
    return re.sub(r"[\W_]+", "", name.casefold())


def given_names(value: str | Iterable[str] | None, parameter: str, one: str,
                example: str) -> list[str]:
    """The names ``value`` gives, for a parameter that takes one name or several: one
    name is one name, not its letters, and any collection of names is names (a list, a
    pandas Series, a numpy array); None is none. Anything else is a
    :class:`BadInputError` naming ``parameter``, what ``one`` name is, and an ``example``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value) if isinstance(value, Iterable) else None
    if names is None or not all(isinstance(name, str) for name in names):
        raise BadInputError(f"{parameter} must be {one} or a list of names, as {example}, "
                            f"got {value!r}")
    return names

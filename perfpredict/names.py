"""Names a user may have mistyped: the known names closest to what was typed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``name``, case aside, as lookups match them
    ("LULESH2" suggests "lulesh", "frontir" Frontier)."""
    by_folded = {k.casefold(): k for k in known}
    return [by_folded[k] for k in difflib.get_close_matches(name.casefold(), list(by_folded),
                                                           n=n, cutoff=0.5)]

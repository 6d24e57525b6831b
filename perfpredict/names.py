"""Names as users write them: the known names closest to a mistyped one, and the key two
spellings of one system share."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


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

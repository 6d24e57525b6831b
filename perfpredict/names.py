"""Names as users write them: the stored name a given one means (:func:`resolve_name`, as
every command looks up an application, a system or a variant), the known names closest to
a mistyped one, and the key two spellings of one system share."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

from perfpredict.errors import BadInputError


def resolve_name(name: str, known: Iterable[str], what: str) -> str | None:
    """The one of ``known`` that ``name`` means, the same for every command that takes an
    application, a system or a variant: ``name`` itself where it is known, else the one
    known name equal to it but for surrounding white space, else the one equal but for
    that and letter case (``" bert"`` and ``BERT`` find ``bert``); None where none is,
    for the caller's own "did you mean" message. ``estimate --app BERT`` found ``bert``
    while ``evaluate --app BERT`` said the store held no runs of it.

    Two or more such names (``Bert`` and ``bert``: ingest warns of them) are a
    :class:`BadInputError` naming them (``what``: "application", "system", "variant"):
    either may be the one meant, and reading both mixes two codes' runs.

    >>> resolve_name("BERT", ["bert", "rnnt"], "application")
    'bert'
    """
    known = set(known)
    if name in known:
        return name
    # white space aside before case: " bert " is bert beside a Bert
    for same in (str.strip, lambda text: text.strip().casefold()):
        matches = sorted(k for k in known if same(k) == same(name))
        if len(matches) > 1:
            raise BadInputError(f"{what} {name!r} matches {', '.join(map(repr, matches))}, "
                                "which differ only in letter case or spacing; give one of "
                                "them exactly")
        if matches:
            return matches[0]
    return None


class ResolvedName(NamedTuple):
    """A name as given and the stored name :func:`resolve_name` took it for."""

    given: str
    stored: str
    what: str

    @property
    def note(self) -> str | None:
        """What a command says where it used another spelling than the one given (None
        where it did not), as an estimate names the series it answers with."""
        if self.given == self.stored:
            return None
        return f"{self.what} {self.given!r} is stored as {self.stored!r}; using {self.stored!r}"


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
    strings but different machines, with different charge pools. Compatibility forms
    are read as the characters they stand for (NFKC), so that "ＦＲＯＮＴＩＥＲ" typed
    with an East Asian input method, or a log's "Ｆｒｏｎｔｉｅｒ", is Frontier and
    not an unknown machine or a second one beside it; the stored name stays as the
    catalog or the first log wrote it."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", name).casefold())


def refuse_blank(name: str | None, field: str, fix: str) -> None:
    """Refuse a name given as an empty or blank text, saying which (``field``: how the
    caller's user gave it, ``--variant`` or ``variant``) and what to give instead
    (``fix``). An empty text is part of every label and a blank one stands aside from
    none, so either one selected every series (``estimate --problem-size ""``), or no
    application at all, said as one not trained (``estimate --app " "``, exit 1), each
    without a word that the name was missing (a shell variable not set, most likely).
    None is no name given."""
    if isinstance(name, str) and not name.strip():
        raise BadInputError(f"{field} is {'empty' if not name else 'blank'}; {fix}")


def refuse_blank_system(name: str | None, option: str = "--system",
                        fix: str = "give a system's name") -> None:
    """Refuse a system named by an empty or blank text (``option``: how the caller's
    user gave it; ``fix``: how they give it instead). ``estimate --system ""``
    answered from whichever system's series was best measured, as if no system were
    given (the empty text is part of every label), ``ingest --system "  "`` stored runs
    under a system of two spaces, and ``systems show ""`` looked the empty name up in
    the catalog, each without a word that the name was missing (a shell variable not
    set, most likely). None is no system given."""
    refuse_blank(name, option, f"{fix} ('perfpredict systems list' shows the catalog's)")


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

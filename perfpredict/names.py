"""Names as users write them: the stored name a given one means (:func:`resolve_name`, as
every command looks up an application, a system or a variant), the known names closest to
a mistyped one, and the key two spellings of one system share."""

from __future__ import annotations

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
    """Up to ``n`` of ``known`` that ``name`` may be a mistyping of, closest first, for an
    unknown application's, system's or label's "did you mean" (and to list a series'
    measured labels closest first). Names are compared as :func:`name_key` compares
    them (case, spaces and punctuation aside), and one is close when

    - it is a typo of the whole name: at most :func:`_typo_edits` letters inserted,
      dropped, changed or swapped ("frontir" Frontier, "bret" bert, "Polaris2" Polaris);
    - or words were dropped or added: each word of the name with fewer words is a word
      of the other, one of them perhaps with a typo of one letter ("Castro"
      Castro-wdmerger, "lulsh" LULESH 2.0.3, "Booster" JUWELS-Booster), one word of
      three letters or more among them, so that "2" or "C" alone does not suggest every
      name with such a word;
    - or it is spaced otherwise: the name with the shorter key, its words run together,
      is a run of the other's neighbouring words ("DGX A100" dgxa100_ngc22.04_pytorch
      (NVIDIA), whose word dgxa is no word of it), four characters or more and a letter
      among them (:func:`_words_rejoined`).

    A similarity ratio (difflib's, cutoff 0.5) suggested bench for "nosuch", resnet and
    rnnt for "bret", and LUMI-C for "Summit": a few letters in common, in order, are
    half of two short names. A count of edits keeps a typo to a letter or two however
    short the name, and a dropped word leaves the other words whole.

    >>> close_names("Perlmuter-gpu", ["Perlmutter-CPU", "Perlmutter-GPU", "Polaris"])
    ['Perlmutter-GPU', 'Perlmutter-CPU']
    >>> close_names("nosuch", ["bench", "bert", "resnet"])
    []
    """
    wanted_words = _words(name)
    wanted = "".join(wanted_words)
    ranked: list[tuple[int, int, int, int, str]] = []  # typos first, fewest edits first
    for order, candidate in enumerate(dict.fromkeys(known)):
        words = _words(candidate)
        edits = _edits_within(wanted, "".join(words), _typo_edits(wanted))
        if edits is not None:
            ranked.append((0, edits, 0, order, candidate))
        elif (dropped := _words_dropped(wanted_words, words)) is not None:
            ranked.append((1, *dropped, order, candidate))
        elif (dropped_words := _words_rejoined(wanted_words, words)) is not None:
            ranked.append((1, 0, dropped_words, order, candidate))
    return [candidate for *_, candidate in sorted(ranked)[:n]]


def _words(name: str) -> list[str]:
    """``name``'s words as :func:`close_names` compares them: runs of letters and runs of
    digits, case and compatibility forms aside ("LULESH 2.0.3": lulesh, 2, 0, 3)."""
    return re.findall(r"[^\W\d_]+|\d+", unicodedata.normalize("NFKC", name).casefold())


def _typo_edits(text: str) -> int:
    """Edits a typo of ``text`` may hold: none in two characters or fewer (any such
    word is one edit or two from every other), one up to five ("bret", "lulsh"), two
    beyond ("frntier")."""
    return 0 if len(text) <= 2 else 1 if len(text) <= 5 else 2


def _words_dropped(wanted: list[str], words: list[str]) -> tuple[int, int] | None:
    """Whether one of two names is the other with words dropped (:func:`close_names`):
    each word of the one with fewer is a different word of the other, one of them
    perhaps with one typo where it has four letters or more (in three, one letter makes
    another word: CPU and GPU, DGX and GX); as (typos, words dropped) to rank it by,
    None where not."""
    fewer, more = sorted((wanted, words), key=len)
    if not any(len(word) >= 3 and word.isalpha() for word in fewer):
        return None
    left, typos = list(more), 0
    for word in fewer:
        allowed = 1 if typos == 0 and len(word) >= 4 and word.isalpha() else 0
        matches = [(edits, i) for i, other in enumerate(left)
                   if (edits := _edits_within(word, other, allowed)) is not None]
        if not matches:
            return None
        edits, i = min(matches)
        typos += edits
        del left[i]
    return typos, len(left)


def _words_rejoined(wanted: list[str], words: list[str]) -> int | None:
    """Whether the name of the two with the shorter key, its words run together, is a
    run of the other's neighbouring words run together (:func:`close_names`): a space
    placed elsewhere, as "DGX A100" (dgx, a, 100) is dgxa100 (dgxa, 100) and "lu lesh"
    LULESH 2.0.3; as the other's words left out, to rank it by, None where not.
    Four characters or more with a letter among them, so that a part number ("A1",
    "2048") does not suggest every name that holds it."""
    fewer, more = sorted((wanted, words), key=lambda name: len("".join(name)))
    key = "".join(fewer)
    if len(key) < 4 or not any(word.isalpha() for word in fewer):
        return None
    for start in range(len(more)):
        joined = ""
        for end in range(start, len(more)):
            joined += more[end]
            if joined == key:
                return len(more) - (end - start + 1)
            if not key.startswith(joined):
                break
    return None


def _edits_within(a: str, b: str, most: int) -> int | None:
    """The fewest single-character insertions, deletions, changes and swaps of two
    neighbours that turn ``a`` into ``b`` (optimal string alignment), where at most
    ``most``; None where more. Names whose lengths differ by more are not compared."""
    if abs(len(a) - len(b)) > most:
        return None
    # rows i-2, i-1 and i of the table of edits between a[:i] and b[:j]
    two_before: list[int] = []
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        two_before, before, row = before, row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(before[j] + 1, row[j - 1] + 1, before[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], two_before[j - 2] + 1)
        if min(min(row), min(before) + 1) > most:  # later rows grow from these two
            return None
    return row[-1] if row[-1] <= most else None


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

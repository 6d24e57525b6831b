"""Names as users write them: :func:`perfpredict.names.resolve_name`, the one rule by which
every command finds an application, a system or a variant."""

from __future__ import annotations

import pytest

from perfpredict.errors import BadInputError
from perfpredict.names import ResolvedName, resolve_name

STORED = ["bert", "Bert", "rnnt", "RELeARN"]


@pytest.mark.parametrize(("given", "found"), [
    ("bert", "bert"), ("Bert", "Bert"),  # each spelling of a pair by its exact name
    (" bert ", "bert"), ("Bert\t", "Bert"),  # white space aside before letter case
    ("relearn", "RELeARN"), (" RELEARN ", "RELeARN"),  # one match but for case: found
    ("RNNT", "rnnt"),
    ("bertt", None), ("", None), ("re learn", None),  # none: the caller's "did you mean"
])
def test_a_name_is_found_exactly_else_by_a_unique_match_but_for_case_and_spacing(
        given: str, found: str | None) -> None:
    assert resolve_name(given, STORED, "application") == found


@pytest.mark.parametrize("given", ["BERT", " bErt"])
def test_a_name_two_spellings_match_alike_is_refused_naming_both(given: str) -> None:
    """Either may be the one meant, and reading both mixes two codes' runs: an error
    (exit 2, a usage error) naming them, in order."""
    with pytest.raises(BadInputError) as refused:
        resolve_name(given, STORED, "variant")
    assert str(refused.value) == (f"variant {given!r} matches 'Bert', 'bert', which differ "
                                  "only in letter case or spacing; give one of them exactly")
    assert refused.value.exit_code == 2


def test_a_name_taken_for_another_spelling_says_which() -> None:
    assert ResolvedName("BERT", "bert", "application").note == (
        "application 'BERT' is stored as 'bert'; using 'bert'")
    assert ResolvedName("bert", "bert", "application").note is None

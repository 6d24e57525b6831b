"""Names as users write them: :func:`perfpredict.names.resolve_name`, the one rule by which
every command finds an application, a system or a variant."""

from __future__ import annotations

import pytest

from perfpredict.errors import BadInputError
from perfpredict.names import ResolvedName, close_names, resolve_name

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


@pytest.fixture(scope="module")
def shipped_names() -> dict[str, list[str]]:
    """The applications of the bundled predictor (the data sets') and the catalog's
    systems, as an unknown name's "did you mean" chooses among them."""
    from perfpredict.catalog import bundled_systems
    from perfpredict.estimate import load_predictor

    return {"application": load_predictor(None).entries.apps(),
            "system": [spec.name for spec in bundled_systems()]}


@pytest.mark.parametrize(("what", "given", "meant"), [
    ("application", "bret", ["bert"]),  # two letters swapped
    ("application", "resent", ["resnet"]),
    ("application", "maskrnn", ["maskrcnn"]),  # a letter dropped
    ("application", "Stable-Difusion", ["stable_diffusion"]),  # case, punctuation, a letter
    ("application", "relearn2", ["RELeARN"]),  # a letter added
    ("application", "LULESH", ["LULESH 2.0.3"]),  # its version dropped
    ("application", "lulsh", ["LULESH 2.0.3"]),  # and a letter too
    ("application", "unet", ["unet3d"]),
    ("application", "Castro", ["Castro-wdmerger", "Castro-flame_wave"]),  # fewest dropped first
    ("application", "llama2", ["llama2_70b_lora"]),
    ("system", "frontir", ["Frontier"]),
    ("system", "Frntier", ["Frontier"]),  # two letters in a long name
    ("system", "Polaris2", ["Polaris"]),
    ("system", "Capitan", ["El Capitan"]),  # a word dropped in front
    ("system", "JUWELS", ["JUWELS-Booster"]),
    ("system", "perlmuter gpu", ["Perlmutter-GPU", "Perlmutter-CPU"]),  # closest first
])
def test_close_names_catch_typos_of_shipped_names(shipped_names: dict[str, list[str]],
                                                  what: str, given: str,
                                                  meant: list[str]) -> None:
    assert close_names(given, shipped_names[what]) == meant


@pytest.mark.parametrize(("what", "given"), [
    ("application", "nosuch"),  # difflib's ratio found bench close
    ("application", "mycode"), ("application", "solver"), ("application", "2"),
    ("system", "Summit"),  # was LUMI-G and LUMI-C
    ("system", "Cori"),  # was Polaris
    ("system", "Theta"), ("system", "C"),
])
def test_close_names_suggest_no_unrelated_name(shipped_names: dict[str, list[str]],
                                               what: str, given: str) -> None:
    assert close_names(given, shipped_names[what]) == []


def test_close_names_leave_out_names_that_share_letters_but_are_others() -> None:
    """A ratio of letters in common made "bret" resnet and rnnt as well as bert, and
    "nosuch" bench; "Booster" found Frontier."""
    assert close_names("nosuch", ["bench", "stream"]) == []
    assert close_names("bret", ["bert", "resnet", "rnnt"]) == ["bert"]
    assert close_names("Booster", ["Frontier", "JUWELS-Booster"]) == ["JUWELS-Booster"]
    # a three-letter word is not one letter from another: DGX is not GX, CPU not GPU
    assert close_names("DGX A100", ["gx_A100-SXMx8 (Fujitsu)"]) == []
    assert close_names("Perlmutter CPU", ["Perlmutter-GPU", "Polaris"]) == ["Perlmutter-GPU"]


def test_close_names_find_a_name_spaced_otherwise() -> None:
    """MLPerf's systems run words together: "DGX A100" (dgx, a, 100) found none of the
    dgxa100_* systems (dgxa, 100), as DGX is no word of theirs, nor "lu lesh" LULESH
    2.0.3 (nor a typo of it: three characters more). Fewest words left out
    first; a part of fewer than four characters, or of digits alone, finds none."""
    mlperf = ["dgx1_ngc20.06_mxnet (NVIDIA)", "dgxa100_ngc22.04_pytorch (NVIDIA)",
              "dgxa100_pytorch (NVIDIA)", "gx_A100-SXMx8 (Fujitsu)", "dgxh100_nemo (NVIDIA)"]
    for given in ("DGX A100", "dgx-a100", "Dgx_A 100"):
        assert close_names(given, mlperf) == ["dgxa100_pytorch (NVIDIA)",
                                              "dgxa100_ngc22.04_pytorch (NVIDIA)"]
    assert close_names("lu lesh", ["LULESH 2.0.3", "RELeARN"]) == ["LULESH 2.0.3"]
    assert close_names("a 1", ["a1x (X)"]) == []  # two characters
    assert close_names("20 48", ["node2048 (X)", "2048x (Y)"]) == []  # digits alone


def test_an_unknown_name_suggests_only_what_it_may_mean(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each command's "did you mean": an application the store holds no runs of, one
    the predictor has no series of, a system the catalog lacks."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nbench,opal,1,100\nbench,opal,2,60\n"
                    "stream,opal,1,5\n")
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    result = cli("runs", "export", "--app", "nosuch")
    assert result.exit_code == 1
    assert result.stderr == ("Error: the store holds no runs of application 'nosuch'; its "
                             "applications: bench, stream\n")
    result = cli("runs", "export", "--app", "Bnech")
    assert result.stderr.startswith("Error: the store holds no runs of application 'Bnech'; "
                                    "did you mean bench?\n")
    result = cli("estimate", "--app", "bret", "--nodes", "8")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no trained series for application 'bret'; did "
                                    "you mean bert? (")
    result = cli("systems", "show", "Summit")
    assert result.exit_code == 1
    assert result.stderr == ("Error: no system named 'Summit' in the catalog; 'perfpredict "
                             "systems list' shows them all, 'perfpredict systems add "
                             "FILE.toml' adds one\n")

"""An application, a system, a variant named the same way is found the same way by every
command that takes one (:func:`perfpredict.names.resolve_name`): ``estimate --app BERT``
found the store's bert while ``evaluate --app BERT`` said the store held no runs of it.
On a store of real runs: LULESH's (Thicket's data set) twice, as "LULESH 2.0.3" and
"Lulesh 2.0.3" (the spellings ingest warns of), and RELeARN's; trained."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from perfpredict.cli.app import app

#: RELeARN's weak-scaling runs, measured in ranks, so asked with a layout
RELEARN_LAYOUT = ("--ranks-per-node", "32")
LULESH_LAYOUT = ("--ranks-per-node", "27")
BOTH = ("Error: application 'lulesh 2.0.3' matches 'LULESH 2.0.3', 'Lulesh 2.0.3', which "
        "differ only in letter case or spacing; give one of them exactly\n")


def _invoke(db: str, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", db, *args])


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The store's URL: LULESH's runs, again as 'Lulesh 2.0.3' (exported and read back
    without their keys, so stored as other runs), and RELeARN's; trained on them alone."""
    tmp = tmp_path_factory.mktemp("app-names")
    db = f"sqlite:///{tmp / 'store.db'}"
    assert _invoke(db, "datasets", "load", "lulesh_thicket", "relearn").exit_code == 0
    exported = _invoke(db, "runs", "export", "--app", "LULESH 2.0.3")
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    twin = tmp / "twin.csv"
    with twin.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, [c for c in rows[0] if c != "run_key"],
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows({**row, "app": "Lulesh 2.0.3"} for row in rows)
    for args in (("ingest", "csv", str(twin)), ("train", "--no-borrow-bundled")):
        result = _invoke(db, *args)
        assert result.exit_code == 0, result.output
    return db


NOTE = "note: application 'relearn' is stored as 'RELeARN'; using 'RELeARN'\n"


@pytest.mark.parametrize(("args", "said"), [
    # what names the series says which application answered, as before
    (("estimate", "--app", "relearn", "--nodes", "16", *RELEARN_LAYOUT), ""),
    (("estimate", "--app", " RELEARN ", "--nodes", "16", *RELEARN_LAYOUT), ""),
    (("advise", "--app", "relearn", *RELEARN_LAYOUT), ""),
    (("advise", "next-runs", "--app", "relearn", *RELEARN_LAYOUT), ""),
    # tables and files of runs say it aside
    (("runs", "list", "--app", "relearn", "--format", "csv"), NOTE),
    (("runs", "export", "--app", "relearn"), NOTE),
])
def test_every_command_finds_an_application_in_other_letter_case(
        twins: str, args: tuple[str, ...], said: str) -> None:
    result = _invoke(twins, *args)
    assert result.exit_code == 0, result.output
    assert "RELeARN" in result.stdout
    assert result.stderr == said


def test_evaluate_finds_an_application_in_other_spacing_and_says_so(twins: str) -> None:
    result = _invoke(twins, "evaluate", "--app", "Lulesh 2.0.3 ", "--no-borrow-bundled",
                     "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("note: application 'Lulesh 2.0.3 ' is stored as 'Lulesh "
                             "2.0.3'; using 'Lulesh 2.0.3'\n")


def test_train_finds_an_application_in_other_letter_case_and_says_so(
        twins: str, tmp_path: Path) -> None:
    """On a copy (SQLite's backup, with what the write-ahead log holds): training
    replaces the predictor the other tests read."""
    copy = tmp_path / "store.db"
    with closing(sqlite3.connect(twins.removeprefix("sqlite:///"))) as source, \
            closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    result = _invoke(f"sqlite:///{copy}", "train", "--app", "relearn", "--no-borrow-bundled")
    assert result.exit_code == 0, result.output
    assert result.stderr == NOTE
    assert result.stdout.startswith("Trained on 244 runs.")  # RELeARN's, all of them


@pytest.mark.parametrize("args", [
    ("estimate", "--app", "lulesh 2.0.3", "--nodes", "16", *LULESH_LAYOUT),
    ("advise", "--app", "lulesh 2.0.3", *LULESH_LAYOUT),
    ("advise", "next-runs", "--app", "lulesh 2.0.3", *LULESH_LAYOUT),
    ("evaluate", "--app", "lulesh 2.0.3"),
    ("train", "--app", "lulesh 2.0.3"),
    ("runs", "list", "--app", "lulesh 2.0.3"),
    ("runs", "export", "--app", "lulesh 2.0.3"),
])
def test_a_name_two_stored_spellings_match_is_refused_naming_both(
        twins: str, args: tuple[str, ...]) -> None:
    """An estimate answered from the better measured of the two without a word (and
    the others said the store held no runs of it): a usage error, exit 2."""
    result = _invoke(twins, *args)
    assert result.exit_code == 2, result.output
    assert (result.stdout, result.stderr) == ("", BOTH)


#: What a blank name is refused with, by where it was given: an application of a query,
#: a label of one (with its option), an application whose runs a command reads.
GIVE_APP = "give the application's name"
GIVE_LABEL = "give a {} (its label, or part of it), or leave {} out"
GIVE_STORED = "give one the store holds, or leave it out for every application"


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize(("args", "blank", "fix"), [
    (("estimate", "--app", "{}", "--nodes", "8"), "--app", GIVE_APP),
    (("estimate", "--app", "bert", "--nodes", "8", "--problem-size", "{}"), "--problem-size",
     GIVE_LABEL.format("problem size", "--problem-size")),
    (("estimate", "--app", "bert", "--nodes", "8", "--variant", "{}", "--explain"),
     "--variant", GIVE_LABEL.format("variant", "--variant")),
    (("advise", "--app", "{}"), "--app", GIVE_APP),
    (("advise", "--app", "bert", "--problem-size", "{}", "--format", "json"),
     "--problem-size", GIVE_LABEL.format("problem size", "--problem-size")),
    (("advise", "next-runs", "--app", "bert", "--variant", "{}"), "--variant",
     GIVE_LABEL.format("variant", "--variant")),
    (("runs", "export", "--app", "{}"), "an application's name", GIVE_STORED),
    (("runs", "list", "--app", "{}"), "an application's name", GIVE_STORED),
    (("train", "--app", "{}"), "an application's name", GIVE_STORED),
    (("evaluate", "--app", "{}"), "an application's name", GIVE_STORED),
])
def test_a_blank_name_is_refused_saying_which(  # type: ignore[no-untyped-def]
        sqlite_cli, args: tuple[str, ...], blank: str, fix: str, name: str) -> None:
    """An empty problem size or variant (a shell variable not set) is part of every
    label, so it selected every series and the estimate answered as if none were given;
    a blank application was "no trained series for application ' '" (exit 1), and an
    empty one "the store holds no runs" of it. Each is a usage error naming the value."""
    result = sqlite_cli(*(arg.format(name) for arg in args))
    assert result.exit_code == 2, result.output
    kind = "empty" if not name else "blank"
    assert (result.stdout, result.stderr) == ("", f"Error: {blank} is {kind}; {fix}\n")


@pytest.mark.parametrize("spelling", ["LULESH 2.0.3", "Lulesh 2.0.3"])
def test_each_spelling_is_found_by_its_exact_name(twins: str, spelling: str) -> None:
    estimate = _invoke(twins, "estimate", "--app", spelling, "--nodes", "16", *LULESH_LAYOUT)
    assert estimate.exit_code == 0, estimate.output
    assert estimate.stdout.startswith(f"{spelling} on opal")
    runs = _invoke(twins, "runs", "export", "--app", spelling, "--format", "json")
    assert runs.exit_code == 0 and not runs.stderr
    assert runs.stdout.count(f'"app": "{spelling}"') == 5


def test_a_system_and_a_problem_size_are_found_as_an_application_is(twins: str) -> None:
    result = _invoke(twins, "estimate", "--app", "RELeARN", "--nodes", "16", *RELEARN_LAYOUT,
                     "--system", " LICHTENBERG", "--problem-size",
                     "9000 NEURONS/RANK, THETA=0.3 ")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        "RELeARN on Lichtenberg [9000 neurons/rank, theta=0.3, 1 thread/rank]")


def test_a_label_part_prefers_the_labels_holding_it_as_whole_words(tmp_path: Path) -> None:
    """CP2K's real runs (read from ../shared, GPL: never copied into the project), NREP=1
    cut to two node counts: ``--problem-size NREP=1`` is contained in NREP=10's label
    too, which, measured at more node counts, the best-measured rule picked."""
    from tests.conftest import shared_path

    with shared_path("datasets", "cp2k_readme", "runs.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if r["problem_size"] == "H2O-dft-ls NREP=10 (96000 atoms)"
                or (r["problem_size"] == "H2O-dft-ls NREP=1 (96 atoms)" and r["nodes"] in ("1", "2"))]
        header = list(reader.fieldnames or [])
    runs = tmp_path / "cp2k.csv"
    with runs.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert _invoke(db, "ingest", "csv", str(runs)).exit_code == 0
    result = _invoke(db, "estimate", "--app", "CP2K", "--problem-size", "NREP=1", "--nodes",
                     "4", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["problem_size"] == "H2O-dft-ls NREP=1 (96 atoms)"
    result = _invoke(db, "estimate", "--app", "CP2K", "--problem-size", "NREP", "--nodes",
                     "4", "--format", "json")  # whole words in both: the best measured
    assert json.loads(result.stdout)["problem_size"] == "H2O-dft-ls NREP=10 (96000 atoms)"


def test_a_label_measured_at_one_scale_is_not_said_to_have_no_runs(tmp_path: Path) -> None:
    """CP2K's NREP=13, one run at 2048 nodes, is stored: "CP2K has no runs with problem
    size 'NREP=13'" was untrue; no series (two or more scales) is what is missing."""
    from tests.conftest import shared_path

    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert _invoke(db, "ingest", "csv", str(shared_path("datasets", "cp2k_readme",
                                                        "runs.csv"))).exit_code == 0
    result = _invoke(db, "estimate", "--app", "CP2K", "--problem-size", "NREP=13",
                     "--nodes", "4096")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: CP2K has no series with problem size 'NREP=13' (runs at two or more scales, "
        "which a law needs); measured: H2O-dft-ls NREP=1")

"""A run's variant (build, input parameters) tells series apart (issue 13): read from
``ingest csv``, kept by ``runs export``, asked for with ``estimate --variant`` and
``advise --variant``, and shown in the series name. Real VASP runs from ../shared, whose
curves on one system and input differ by build, NCORE and KPAR."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from tests.conftest import shared_path

SYSTEM = "ARCHER2"
SIZE = "TiO2/results/NELM10"
#: Two builds of VASP, same NCORE and KPAR, on the same input and layout.
LIBSCI = "build=ARCHER2_VASP641_LibSci-22.12_OFI NCORE=64 KPAR=1"
AOCL = "build=ARCHER2_VASP642_AOCL-4.0_OFI NCORE=64 KPAR=1"


def _invoke(db: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", db, *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def vasp_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VASP runs of one input on ARCHER2 (read from ../shared, GPL: never copied
    into the project), as a small CSV so the module trains in seconds."""
    source = shared_path("datasets", "vasp_archer", "runs.csv")
    with source.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if r["system"] == SYSTEM and r["problem_size"] == SIZE]
        header = list(reader.fieldnames or [])
    path = tmp_path_factory.mktemp("vasp") / "runs.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def trained_db(vasp_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The store of :func:`vasp_csv`, trained on it alone: what a variant selects does
    not depend on what the predictor borrows, and borrowing is a training on the bundled
    data sets (20 s)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('store')}/store.db"
    for args in (("ingest", "csv", str(vasp_csv)), ("train", "--no-borrow-bundled")):
        code, out, err = _invoke(db, *args)
        assert code == 0, out + err
    return db


def _variants(path: Path) -> set[str]:
    with path.open(newline="") as fh:
        return {row["variant"] for row in csv.DictReader(fh)}


def test_export_keeps_each_runs_variant_and_ingests_back(
        vasp_csv: Path, trained_db: str, tmp_path: Path) -> None:
    code, out, err = _invoke(trained_db, "runs", "export", "--format", "csv")
    assert code == 0, err
    exported = tmp_path / "export.csv"
    exported.write_text(out)
    assert out.splitlines()[0].startswith("job_id,app,system,problem_size,variant,")
    assert _variants(exported) == _variants(vasp_csv) and len(_variants(exported)) > 5
    other = f"sqlite:///{tmp_path}/other.db"
    assert _invoke(other, "ingest", "csv", str(exported))[0] == 0
    assert _invoke(other, "runs", "export", "--format", "csv")[1] == out


def _estimate(db: str, *extra: str) -> dict:  # type: ignore[type-arg]
    code, out, err = _invoke(db, "estimate", "--app", "VASP", "--system", SYSTEM,
                             "--problem-size", SIZE, "--nodes", "128", "--format", "json",
                             *extra)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_estimate_variant_chooses_the_series_of_that_build(trained_db: str) -> None:
    libsci = _estimate(trained_db, "--variant", LIBSCI)
    aocl = _estimate(trained_db, "--variant", "aocl-4.0_ofi ncore=64 kpar=1")  # part, any case
    assert (libsci["variant"], aocl["variant"]) == (LIBSCI, AOCL)
    assert f"[{SIZE}, {LIBSCI}, 64 ranks/node, 1 thread/rank]" in libsci["series"]
    assert libsci["predicted_runtime_s"] != aocl["predicted_runtime_s"]
    unnarrowed = _estimate(trained_db)
    assert any("narrow with" in note and "--variant" in note for note in unnarrowed["notes"])


def test_an_unmeasured_variant_is_refused_with_those_measured(trained_db: str) -> None:
    code, _, err = _invoke(trained_db, "estimate", "--app", "VASP", "--nodes", "8",
                           "--variant", "NCORE=999")
    assert code == 1
    assert ("VASP has no series with variant 'NCORE=999' (runs at two or more scales, which "
            "a law needs); measured: ") in err
    assert LIBSCI in err and len(err.strip().splitlines()) == 1


def test_a_mistyped_variant_is_refused_naming_the_closest_first(trained_db: str) -> None:
    """29 variants trained: the ten named used to be the first ten alphabetically, none
    of them the MKL build a KPAR typo meant."""
    meant = "build=ARCHER2_VASP642_MKL19.5_OFI NCORE=64 KPAR=1"
    code, _, err = _invoke(trained_db, "estimate", "--app", "VASP", "--nodes", "8",
                           "--variant", meant.replace("KPAR=1", "KPAR=2"))
    assert code == 1
    assert err.startswith(f"Error: VASP has no series with variant "
                          f"'{meant.replace('KPAR=1', 'KPAR=2')}' (runs at two or more "
                          f"scales, which a law needs); measured: {meant}; ")
    assert re.search(r"; and \d+ more \(give one of those, or part of one, in --variant\)$",
                     err.rstrip())


def test_advise_plans_for_the_variant_asked_for(trained_db: str) -> None:
    plans = {}
    for variant in (LIBSCI, AOCL):
        code, out, err = _invoke(trained_db, "advise", "--app", "VASP", "--system", SYSTEM,
                                 "--problem-size", SIZE, "--variant", variant,
                                 "--format", "json")
        assert code == 0, err
        plans[variant] = json.loads(out)
        assert variant in plans[variant]["series"]
    assert plans[LIBSCI]["candidates"] != plans[AOCL]["candidates"]

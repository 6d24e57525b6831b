"""CSV ingest under damage (issue 6; the scheduler parsers have their own mutation tests):
damaged copies of real benchmark CSVs never crash the pipeline, and quotes and SQL in
names are stored as text, not run."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from perfpredict.errors import BadInputError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.csv_results import parse
from perfpredict.store.queries import iter_runs, run_stats
from tests.ingest._mutate import mutants, survives_mutations

REPO = Path(__file__).resolve().parents[2]
DATASETS = sorted((REPO / "datasets").glob("*/runs.csv.gz"))
#: Mutants per data set: parser-level and through the pipeline into a real store.
N_PARSER_MUTANTS = 150
N_PIPELINE_MUTANTS = 25


def _head(path: Path, tmp_path: Path, n_lines: int = 40) -> Path:
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)[:n_lines]
    out = tmp_path / f"{path.parent.name}.csv"
    out.write_bytes(b"".join(lines))
    return out


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda p: p.parent.name)
def test_csv_parser_survives_damaged_real_files(dataset: Path, tmp_path: Path) -> None:
    tried = survives_mutations(parse, _head(dataset, tmp_path), tmp_path, seed=6,
                               count=N_PARSER_MUTANTS)
    assert tried >= N_PARSER_MUTANTS * 0.8


@pytest.mark.parametrize("on_error", ["fail", "skip"])
@pytest.mark.parametrize("dataset", DATASETS, ids=lambda p: p.parent.name)
def test_pipeline_stores_damaged_files_or_names_the_line(store, dataset: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                         on_error: str) -> None:
    original = _head(dataset, tmp_path)
    for i, (label, data) in enumerate(mutants(original.read_bytes(), seed=60, count=N_PIPELINE_MUTANTS)):
        path = tmp_path / f"mutant{i}.csv"
        path.write_bytes(data)
        try:
            ingest_file(store, "csv", path, IngestOptions(on_error=on_error, system="box"))  # type: ignore[arg-type]
        except BadInputError as exc:
            assert on_error == "fail", f"{label}: {exc}"
            assert str(exc).startswith(str(path)), f"{label}: {exc}"
        # Anything else is a crash: pytest reports it with the mutation's label in the frame.


NASTY_NAMES = ["'; DROP TABLE runs; --", 'Robert"); DROP TABLE runs;--', "o'brien",
               "app,with,commas", "naïve ☃", "x\" OR \"1\"=\"1", "%s %(x)s ?"]


def test_quotes_and_sql_in_names_are_stored_as_text(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import csv

    path = tmp_path / "nasty.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["app", "system", "problem_size", "nodes", "runtime_s", "user"])
        for i, name in enumerate(NASTY_NAMES):
            writer.writerow([name, name, name, 2 ** i, 10 + i, name])
    report = ingest_file(store, "csv", path)
    assert report.n_stored == len(NASTY_NAMES)
    stored = list(iter_runs(store))
    assert sorted(r["app"] for r in stored) == sorted(NASTY_NAMES)
    assert all(r["app"] == r["system"] == r["problem_size"] == r["user"] for r in stored)
    assert run_stats(store)["n_runs"] == len(NASTY_NAMES)  # the runs table is still there

"""A gzip file damaged in transit (cut short, or bytes changed) is one file to copy again:
refused with the line its stream was read to and nothing of it stored, and under
``--on-error skip`` kept as a reject while the command goes on with the other files.
Before, a damaged stream stopped every ingest (``--on-error skip`` too), at "line 1"
however far it was read, and damaged compressed data was an internal error (exit 1)."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import pytest

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest._text.lines import file_sha256
from perfpredict.store.queries import run_stats
from tests.conftest import REPO, shared_path


def _kth() -> bytes:
    """A real SWF trace as the Parallel Workloads Archive ships it, gzipped."""
    return shared_path("logs", "swf", "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes()


def _mlperf() -> bytes:
    return (REPO / "datasets" / "mlperf_training" / "runs.csv.gz").read_bytes()


def _clockwork() -> bytes:
    return gzip.compress(shared_path("logs", "slurm", "clockwork-sacct_1.json").read_bytes())


#: Format, the intact gzip file, and its extension: the block reader (swf), the line
#: reader (csv) and the whole-document reader (sacct-json).
SOURCES = [("swf", _kth, ".swf.gz"), ("csv", _mlperf, ".csv.gz"),
           ("sacct-json", _clockwork, ".json.gz")]


def _lines_before_the_cut(cut: bytes) -> int:
    """The whole lines the part of a gzip stream that is there decompresses to."""
    return zlib.decompressobj(wbits=31).decompress(cut).count(b"\n")


def _damaged_files(tmp_path: Path, intact: bytes, suffix: str) -> dict[str, Path]:
    """The file intact, cut at 60% of its bytes, and with bytes changed in the middle."""
    middle = len(intact) // 2
    changed = intact[:middle] + bytes(b ^ 0x5A for b in intact[middle:middle + 64]) + \
        intact[middle + 64:]
    files = {"intact": intact, "cut": intact[:len(intact) * 3 // 5], "changed": changed}
    for name, data in files.items():
        (tmp_path / f"{name}{suffix}").write_bytes(data)
    return {name: tmp_path / f"{name}{suffix}" for name in files}


@pytest.mark.parametrize(("fmt", "source", "suffix"), SOURCES, ids=[s[0] for s in SOURCES])
def test_a_cut_file_is_refused_at_the_line_it_was_read_to(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, fmt: str, source, suffix: str) -> None:
    files = _damaged_files(tmp_path, source(), suffix)
    n_whole = _lines_before_the_cut(files["cut"].read_bytes())
    assert n_whole > 1

    result = cli("ingest", fmt, str(files["cut"]))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"Error: {files['cut']}:{n_whole + 1}: the compressed stream is damaged after line "
        f"{n_whole} (Compressed file ended before the end-of-stream marker was reached); "
        "re-copy the file; nothing from this file was stored; --on-error skip goes on with "
        "the other files and keeps this one as a reject"]
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0


@pytest.mark.parametrize(("fmt", "source", "suffix"), SOURCES, ids=[s[0] for s in SOURCES])
def test_changed_bytes_are_one_line_not_an_internal_error(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, fmt: str, source, suffix: str) -> None:
    files = _damaged_files(tmp_path, source(), suffix)
    result = cli("ingest", fmt, str(files["changed"]))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"Error: {files['changed']}:"), line
    assert re.search(r": the compressed stream is damaged (after line \d+|before its first "
                     r"line) \(", line), line  # a small file is one decompression step
    assert line.endswith("nothing from this file was stored; --on-error skip goes on with "
                         "the other files and keeps this one as a reject"), line
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0


@pytest.mark.parametrize(("fmt", "source", "suffix"), SOURCES, ids=[s[0] for s in SOURCES])
def test_skip_keeps_a_damaged_file_as_a_reject_and_goes_on(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, fmt: str, source, suffix: str) -> None:
    files = _damaged_files(tmp_path, source(), suffix)
    n_whole = _lines_before_the_cut(files["cut"].read_bytes())
    result = cli("ingest", fmt, "--on-error", "skip", str(files["cut"]),
                 str(files["changed"]), str(files["intact"]))
    assert result.exit_code == 0, result.output  # as any ingest that skipped bad records
    assert f"{files['cut']}: 0 records, 0 stored" in result.stdout
    assert (f"  rejected line {n_whole + 1}: the compressed stream is damaged after line "
            f"{n_whole} (") in result.stdout
    rejects = json.loads(cli("runs", "rejects", "--format", "json").stdout)
    assert [(r["file"], r["format"]) for r in rejects] == [
        (str(files["cut"].resolve()), fmt), (str(files["changed"].resolve()), fmt)]
    assert rejects[0]["line"] == n_whole + 1
    assert "the compressed stream is damaged" in rejects[1]["reason"]

    # Every run stored came from the intact file: read again, it stores nothing new.
    n_runs = json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"]
    assert n_runs > 0
    again = cli("ingest", fmt, "--on-error", "skip", "--reread", str(files["intact"]))
    assert again.exit_code == 0 and ", 0 stored," in again.stdout, again.output


def test_a_damaged_new_release_leaves_the_earlier_one_stored(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """A bundled data set's new release replaces the runs of the earlier one in the same
    transaction; cut short, it replaces nothing, also under --on-error skip."""
    files = _damaged_files(tmp_path, _mlperf(), ".csv.gz")
    earlier = ingest_file(store, "csv", files["intact"])
    report = ingest_file(store, "csv", files["cut"], IngestOptions(on_error="skip"),
                         replaces=[file_sha256(files["intact"])])
    assert (report.n_stored, report.n_replaced, report.n_rejected) == (0, 0, 1)
    assert run_stats(store)["n_runs"] == earlier.n_stored > 0

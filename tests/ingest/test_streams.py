"""Ingest from a pipe: ``sacct ... | perfpredict ingest sacct -`` (or ``/dev/stdin``,
``<(sacct ...)``, a named FIFO). A stream gives its bytes once and a file is read more than
once, so the stream is copied to a temporary file and that copy ingested: the checksum
rules hold (the same output piped in again, or the file it was saved to, stores nothing
twice) and messages name the stream as given."""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from tests.conftest import shared_path

#: Larger than a pipe's buffer (64 KiB on Linux), so the writer blocks until ingest reads.
LARGE_REPEATS = 100

Cli = Callable[..., Result]


def log() -> Path:
    """A real sacct dump of four jobs."""
    return shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    from perfpredict.cli.app import app

    runner = CliRunner()

    def invoke(*args: str, input: bytes | None = None) -> Result:
        return runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'store.db'}", *args],
                             input=input)

    return invoke


def stats(cli: Cli) -> dict[str, int]:
    result = cli("runs", "stats", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@contextmanager
def written_by_thread(path: str, data: bytes) -> Iterator[None]:
    """``data`` written to ``path`` (a FIFO) by another thread, as a producer would."""
    def write() -> None:
        with open(path, "wb") as sink:
            sink.write(data)

    # a daemon: should ingest not open the FIFO, the writer's open blocks for good
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield
    finally:
        writer.join(timeout=30)


def test_standard_input_is_ingested_and_the_same_output_again_stores_nothing(
        cli: Cli) -> None:
    """It was refused (exit 2): save the output to a file first."""
    first = cli("ingest", "sacct", "-", input=log().read_bytes())
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("<stdin>: 4 records, 4 stored, 0 already in the store")
    again = cli("ingest", "sacct", "-", input=log().read_bytes())
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("<stdin>: already ingested (4 records); nothing stored.")
    # the file the output was saved to is the same content
    saved = cli("ingest", "sacct", str(log()))
    assert "already ingested" in saved.stdout
    assert stats(cli)["n_batches"] == 1
    assert stats(cli)["n_runs"] == 4


def test_gzip_on_standard_input_is_read_as_a_gzip_file_is(cli: Cli) -> None:
    result = cli("ingest", "sacct", "-", input=gzip.compress(log().read_bytes()))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<stdin>: 4 records, 4 stored")


def test_a_bad_line_on_standard_input_is_named_by_stdin_and_its_line(cli: Cli) -> None:
    lines = log().read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("2015-06-28T15:14:49", "garbage", 1)
    result = cli("ingest", "sacct", "-", input="".join(lines).encode())
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: <stdin>:2: Start 'garbage' is not a time")
    assert stats(cli)["n_runs"] == 0


def test_rejects_of_standard_input_are_listed_by_its_name(cli: Cli) -> None:
    lines = log().read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("2015-06-28T15:14:49", "garbage", 1)
    result = cli("ingest", "sacct", "-", "--on-error", "skip", input="".join(lines).encode())
    assert result.exit_code == 0, result.output
    for named in ("<stdin>", "-"):  # '-' as ingest was given it: it was never ingested
        rejects = cli("runs", "rejects", "--file", named, "--format", "json")
        assert rejects.exit_code == 0, rejects.output
        assert [(r["file"], r["line"]) for r in json.loads(rejects.stdout)] == [("<stdin>", 2)]


@pytest.mark.parametrize("piped", [False, True])
def test_a_job_refused_for_want_of_a_system_keeps_its_line_as_raw_text(
        cli: Cli, tmp_path: Path, piped: bool) -> None:
    """slurm2sql's real dump names no cluster: its jobs, refused once parsed, were kept
    with the job's name as their raw text ('spawner-jupyterhub'), not their line; the
    line of a gzip file or of standard input is read from what was ingested."""
    dump = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    lines = dump.read_text().splitlines()
    data = gzip.compress(dump.read_bytes())
    if piped:
        result = cli("ingest", "sacct", "-", "--on-error", "skip", input=data)
    else:
        (tmp_path / "dump.psv.gz").write_bytes(data)
        result = cli("ingest", "sacct", str(tmp_path / "dump.psv.gz"), "--on-error", "skip")
    assert result.exit_code == 0, result.output
    rejects = json.loads(cli("runs", "rejects", "--format", "json").stdout)
    assert [(r["line"], r["raw"]) for r in rejects] == [(2, lines[1]), (5, lines[4])]
    assert lines[1].startswith("43974388|43974388|spawner-jupyterhub|")


def test_an_anonymous_pipe_is_ingested(cli: Cli) -> None:
    """``perfpredict ingest sacct <(sacct ...)``: a /dev/fd path to a pipe, fed by a writer
    that blocks until it is read (more than a pipe holds)."""
    data = log().read_bytes() * LARGE_REPEATS
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)),
                              daemon=True)
    writer.start()
    try:
        result = cli("ingest", "sacct", f"/dev/fd/{read_end}")
    finally:
        writer.join(timeout=30)
        os.close(read_end)
    assert result.exit_code == 0, result.output
    # the same four jobs, repeated: stored once
    assert result.stdout.startswith(f"/dev/fd/{read_end}: {4 * LARGE_REPEATS} records, 4 stored")


def test_a_named_pipe_is_ingested_and_read_again_stores_nothing(
        cli: Cli, tmp_path: Path) -> None:
    fifo = tmp_path / "jobs.fifo"
    os.mkfifo(fifo)
    with written_by_thread(str(fifo), log().read_bytes()):
        first = cli("ingest", "sacct", str(fifo))
    with written_by_thread(str(fifo), log().read_bytes()):
        again = cli("ingest", "sacct", str(fifo))
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith(f"{fifo}: 4 records, 4 stored")
    assert again.stdout.startswith(f"{fifo}: already ingested (4 records)")


def test_the_copy_of_a_stream_is_removed(cli: Cli, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setenv("TMPDIR", str(spool))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    assert cli("ingest", "sacct", "-", input=log().read_bytes()).exit_code == 0
    assert cli("ingest", "sacct", "-", input=b"not|a|header\n1|2\n").exit_code == 2
    assert list(spool.iterdir()) == []


def test_standard_input_given_twice_is_refused_before_anything_is_read(cli: Cli) -> None:
    result = cli("ingest", "sacct", str(log()), "-", "-", input=log().read_bytes())
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: '-' (standard input) is given more than once; "
                                     "it can be read only once")
    assert stats(cli)["n_batches"] == 0


def test_a_darshan_log_is_asked_for_as_its_file(cli: Cli) -> None:
    """Its file name keys a log without a start time and is kept with the run."""
    result = cli("ingest", "darshan", "-", "--system", "polaris", input=b"")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: <stdin>: is a pipe; darshan logs are read from "
                                    "their own file")


def test_a_batch_piped_in_is_deleted_by_its_batch_or_the_saved_file_not_by_dash(
        cli: Cli) -> None:
    """`runs delete --file -` answered '-: cannot read it (No such file or directory)'
    for the '-' that ingest reads as standard input: it says what names such a batch."""
    assert cli("ingest", "sacct", "-", input=log().read_bytes()).exit_code == 0
    dash = cli("runs", "delete", "--file", "-", "--yes", input=log().read_bytes())
    assert dash.exit_code == 2
    assert dash.stderr.strip().splitlines() == [
        "Error: -: standard input cannot name the file to delete; name the file its output "
        "was saved to, or the batch (--batch ID: 'perfpredict runs batches' lists what was "
        "piped in as <stdin>)"]
    assert stats(cli)["n_runs"] == 4
    saved = cli("runs", "delete", "--file", str(log()), "--yes")
    assert saved.exit_code == 0, saved.output
    assert "deleted batch 1: <stdin> (sacct" in saved.stdout
    assert stats(cli)["n_runs"] == 0


def test_a_results_table_piped_in_again_with_rows_appended_stores_the_rows_added(
        cli: Cli) -> None:
    """A nightly ``ssh host cat results.csv | perfpredict ingest csv -``: the table grew
    by rows appended, and only those are stored (a repeat appended is one more run)."""
    table = "app,system,nodes,runtime_s\nlulesh,opal,1,80.0\nlulesh,opal,2,41.5\n"
    assert "2 stored" in cli("ingest", "csv", "-", input=table.encode()).stdout
    table += "lulesh,opal,4,22.0\nlulesh,opal,2,41.5\n"
    grown = cli("ingest", "csv", "-", input=table.encode())
    assert "<stdin>: 4 records, 2 stored, 2 already in the store" in grown.stdout
    other = cli("ingest", "csv", "-", input=b"app,system,nodes,runtime_s\nlulesh,opal,2,41.5\n")
    assert "1 record, 1 stored" in other.stdout  # another table: a repeated measurement
    assert "ingested before from this path" not in other.stderr  # no edit of the first


@pytest.mark.parametrize("compress", [False, True])
def test_a_sacct_stream_cut_inside_its_last_line_is_refused_whole(
        cli: Cli, compress: bool) -> None:
    """`sacct ... | perfpredict ingest sacct -` whose sacct was killed: the stream ended
    inside the last job's JobName, stored as 'alloca' for 'allocation' (the whole dump,
    read later, found the job stored and left it so), and the jobs never written were
    missing without a word. sacct ends every line, so such a stream is refused; piped
    again whole, every job is stored as written."""
    whole = log().read_bytes()
    assert whole.endswith(b"|allocation\n")
    cut = whole[:-5]
    result = cli("ingest", "sacct", "-", input=gzip.compress(cut) if compress else cut)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "Error: <stdin>:4: the stream ends inside this line, and sacct ends every line with "
        "a newline: the command writing it stopped early (killed, or its connection lost), "
        "so this line is cut and the jobs after it are missing; run it again (under set -o "
        "pipefail the pipeline fails with it), or give a saved file that only lacks its "
        "last newline by its name; nothing from this file was stored; --on-error skip goes "
        "on with the other files and keeps this one as a reject"]
    assert stats(cli)["n_runs"] == 0
    again = cli("ingest", "sacct", "-", input=whole)
    assert again.stdout.startswith("<stdin>: 4 records, 4 stored")
    exported = cli("runs", "export", "--format", "json")
    assert "allocation" in [run["app"] for run in json.loads(exported.stdout)]


def test_a_cut_sacct_stream_under_skip_is_one_reject_and_stores_no_job(cli: Cli) -> None:
    result = cli("ingest", "sacct", "-", "--on-error", "skip", input=log().read_bytes()[:-5])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<stdin>: 0 records, 0 stored, 0 already in the store, "
                                    "0 attached to stored jobs, 1 rejected.")
    assert stats(cli)["n_runs"] == 0
    rejects = json.loads(cli("runs", "rejects", "--format", "json").stdout)
    assert [(r["line"], r["raw"].endswith("|alloca")) for r in rejects] == [(4, True)]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_sacct_stream_cut_anywhere_stores_no_job_unlike_the_whole_dump(
        tmp_path: Path, data: st.DataObject) -> None:
    """Wherever a real dump piped in is cut, what is stored is nothing (cut inside a
    line: refused) or jobs exactly as the whole dump stores them (cut at a line's end,
    which no reader can tell from a whole dump): never a job with a value cut short."""
    from perfpredict.cli.app import app

    whole = log().read_bytes()
    at = data.draw(st.integers(0, len(whole)), label="cut at")
    runner = CliRunner()
    stores = tmp_path / f"cut{at}"
    stores.mkdir(exist_ok=True)

    def export(db: str, stream: bytes) -> list[dict[str, object]]:
        url = f"sqlite:///{stores / db}"
        result = runner.invoke(app, ["--db", url, "ingest", "sacct", "-"], input=stream)
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            assert result.stderr.startswith("Error: <stdin>:"), result.output
        exported = runner.invoke(app, ["--db", url, "runs", "export", "--format", "json"])
        return [{k: v for k, v in run.items() if k != "run_key"}
                for run in json.loads(exported.stdout or "[]")]

    by_job = {run["job_id"]: run for run in export("whole.db", whole)}
    for run in export("cut.db", whole[:at]):
        assert run == by_job[run["job_id"]]


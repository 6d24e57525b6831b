from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from perfpredict.errors import BadInputError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.ingest.swf import parse
from perfpredict.store.queries import iter_runs, run_stats
from tests.conftest import shared_path

HEADER = """; Version: 2.2
; Computer: Test Machine
; Installation: Test Center
; Information: http://example.org/
;              continued line
; UnixStartTime: 1000000000
; TimeZoneString: Europe/Stockholm
; MaxProcs: 100
; Queue:  0  interactive
; Queue:  1  batch
; Partition:  1  main
;
"""


def write(tmp_path: Path, text: str, name: str = "log.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def parsed(path: Path, **options: object) -> list[RunRecord | BadRecord]:
    return list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]


def test_first_kth_job_matches_the_log_by_hand() -> None:
    items = parsed(shared_path("logs", "swf", "KTH-SP2-1996-2.1-cln.swf.gz"))
    assert len(items) == 28_476 and all(isinstance(i, RunRecord) for i in items)
    first = items[0]
    assert isinstance(first, RunRecord)
    # "   15   599850 192180   3477    4  -1 -1    4  53940  -1  1  12  12  -1 -1 -1 -1 -1"
    assert (first.job_id, first.key, first.line_no) == ("15", "15@844079881", 25)
    assert (first.runtime_s, first.total_ranks, first.requested_walltime_s) == (3477, 4, 53940)
    assert (first.user, first.account, first.app, first.state) == ("12", "12", "unknown", "COMPLETED")
    assert first.submit_epoch_s == 843480031 + 599850
    assert first.start_epoch_s == first.submit_epoch_s + 192180
    assert first.end_epoch_s == first.start_epoch_s + 3477
    assert first.system == "IBM SP2 at Swedish Royal Institute of Technology (KTH)"
    assert first.extra == {"swf_requested_procs": 4, "timezone": "Europe/Stockholm"}
    states = [i.state for i in items if isinstance(i, RunRecord)]
    # FORMATS.md: 20,530 completed, 7,946 failed, of which 473 failed at or past their limit.
    assert states.count("COMPLETED") == 20_530
    assert states.count("FAILED") + states.count("TIMEOUT") == 7_946
    assert states.count("TIMEOUT") == 473


def test_nasa_has_no_requests_wait_times_or_status() -> None:
    items = parsed(shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf"), system="nasa")
    assert len(items) == 18_239
    first = items[0]
    assert isinstance(first, RunRecord)
    assert (first.runtime_s, first.total_ranks, first.user) == (1451, 128, "1")
    assert first.requested_walltime_s is None and first.state is None
    assert first.start_epoch_s is None and first.submit_epoch_s == 749458803
    assert first.system is None  # --system given: the pipeline fills it
    zero = [i for i in items if isinstance(i, RunRecord) and i.runtime_s == 0]
    assert len(zero) == 173


def test_alea_variant_is_rejected_at_its_first_line_unless_allowed() -> None:
    path = shared_path("logs", "swf", "alea-wagap-2013-extended.swf")
    bad = next(iter(parse(path, IngestOptions(system="meta"))))
    assert isinstance(bad, BadRecord) and bad.line_no == 1
    assert "found 21" in bad.reason and "--swf-allow-extra-fields" in bad.reason
    first = next(iter(parse(path, IngestOptions(system="meta", swf_allow_extra_fields=True))))
    assert isinstance(first, RunRecord)
    assert (first.job_id, first.runtime_s, first.total_ranks) == ("0", 56011, 64)
    assert first.submit_epoch_s == 1356996147  # no header: absolute epochs
    assert first.extra is not None and first.extra["swf_extra_fields"][1:] == [
        "q_1d", "1:ppn=64:x86_64:cl_zewura#excl"]


def test_a_byte_that_is_no_text_is_damage_not_an_extended_variant(tmp_path: Path) -> None:
    """A stray byte after the 18th field read as a 19th, and the refusal sent the user to
    --swf-allow-extra-fields for a damaged line."""
    path = tmp_path / "damaged.swf"
    path.write_bytes((HEADER + "7 10 5 100 -1 552 -1 8 60 -1 0 3 4 17 1 1 -1 -1 \xff\n"
                      ).encode("latin-1"))
    (bad,) = list(parse(path, IngestOptions()))
    assert isinstance(bad, BadRecord)
    assert bad.reason == ("the line holds bytes that are not text (shown as \ufffd); SWF "
                          "lines are numbers, so the file is damaged here")


def test_header_missing_values_fractions_and_gzip(tmp_path: Path) -> None:
    text = HEADER + (
        "7 10 5 100.5 -1 552.21 -1 8 60 -1 0 3 4 17 1 1 -1 -1\n"
        "9 20 -1 -1 2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
        "12 30 0 40 1 -1 -1 1 60 -1 1 3 4 -1 0 -1 -1 -1\n"
    )
    plain = write(tmp_path, text)
    zipped = tmp_path / "log.swf.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    for path in (plain, zipped):
        killed, unknown, done = parsed(path)
        assert isinstance(killed, RunRecord) and isinstance(unknown, RunRecord)
        assert isinstance(done, RunRecord)
        assert killed.system == "Test Machine at Test Center"
        assert killed.total_ranks == 8  # allocated missing: requested
        assert killed.runtime_s == 100.5 and killed.requested_walltime_s == 60
        # Failed past its request: stopped by the limit, a lower bound.
        assert (killed.state, killed.censored) == ("TIMEOUT", True)
        assert killed.app == "exe-17" and killed.partition == "batch"
        assert killed.extra is not None and killed.extra["swf_partition"] == "main"
        assert killed.extra["swf_avg_cpu_time_s"] == 552.21 and killed.extra["swf_status"] == 0
        assert killed.submit_epoch_s == 1_000_000_010 and killed.end_epoch_s == 1_000_000_115.5
        assert unknown.runtime_s is None and unknown.state is None and unknown.user is None
        assert unknown.start_epoch_s is None and unknown.app == "unknown"
        assert done.state == "COMPLETED" and not done.censored and done.partition == "interactive"


def test_completed_past_request_is_a_measurement(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "1 0 0 75 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
    (record,) = parsed(path)
    assert isinstance(record, RunRecord)
    assert (record.state, record.censored, record.runtime_s) == ("COMPLETED", False, 75)


def test_partial_execution_records_get_their_own_keys(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "5 0 0 75 1 -1 -1 1 600 -1 1 1 1 -1 -1 -1 -1 -1\n"
                 "5 0 0 30 1 -1 -1 1 600 -1 2 1 1 -1 -1 -1 -1 -1\n"
                 "5 40 0 45 1 -1 -1 1 600 -1 3 1 1 -1 -1 -1 -1 -1\n")
    keys = [i.key for i in parsed(path) if isinstance(i, RunRecord)]
    # with the submit time (UnixStartTime + field 2): trace job numbers start at 1
    assert keys == ["5@1000000000", "5.1@1000000000", "5.2@1000000040"]


def test_relative_times_without_header_keep_the_offset(tmp_path: Path) -> None:
    path = write(tmp_path, "1 50 0 75 1 -1 -1 1 600 -1 1 1 1 -1 -1 -1 -1 -1\n")
    (bad,) = parsed(path)
    assert isinstance(bad, BadRecord) and "--system" in bad.reason
    (record,) = parsed(path, system="x")
    assert isinstance(record, RunRecord)
    assert record.submit_epoch_s is None and record.extra == {
        "swf_submit_offset_s": 50.0, "swf_requested_procs": 1}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("1 2 3", "found 3; the line is truncated"),
        ("1 0 0 x 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "field 4 (run time) must be a number"),
        ("1 0 0 5 1 -1 -1 1 60 -1 1 -7 1 -1 -1 -1 -1 -1", "field 12 (user) must be >= 0"),
        ("1 0 0 5 1 -1 -1 1 60 -1 9 1 1 -1 -1 -1 -1 -1", "field 11 (status) must be"),
        ("1.5 0 0 5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "must be a whole number"),
        ("-1 0 0 5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "job number) is missing"),
        ("1 0 0 nan 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "must be finite"),
    ],
)
def test_bad_lines_name_line_and_reason(tmp_path: Path, line: str, reason: str) -> None:
    path = write(tmp_path, HEADER + "1 0 0 5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n" + line + "\n")
    bad = parsed(path)[-1]
    assert isinstance(bad, BadRecord) and bad.line_no == HEADER.count("\n") + 2
    assert reason in bad.reason


def test_bad_unix_start_time_is_reported_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "; UnixStartTime: yesterday\n1 0 0 5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
    bad = parsed(path, system="x")[0]
    assert isinstance(bad, BadRecord) and bad.line_no == 1 and "UnixStartTime" in bad.reason


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.sampled_from(list("0123456789 -.;:eaxn{}\t")), max_size=80),
                max_size=6),
       st.booleans())
def test_arbitrary_lines_never_raise(tmp_path: Path, lines: list[str], allow: bool) -> None:
    path = write(tmp_path, "\n".join(lines), "fuzz.swf")
    for item in parse(path, IngestOptions(system="x", swf_allow_extra_fields=allow)):
        assert isinstance(item, RunRecord | BadRecord)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.just(-1), st.integers(0, 10**9), st.floats(0, 1e9)), min_size=18,
                max_size=18))
def test_numeric_rows_parse_or_explain(tmp_path: Path, fields: list[float]) -> None:
    path = write(tmp_path, " ".join(str(f) for f in fields) + "\n", "num.swf")
    (item,) = parse(path, IngestOptions(system="x"))
    if isinstance(item, RunRecord):
        assert item.runtime_s is None or item.runtime_s >= 0
    else:
        assert item.line_no == 1 and item.reason


def test_kth_ingests_once(store) -> None:  # type: ignore[no-untyped-def]
    path = shared_path("logs", "swf", "KTH-SP2-1996-2.1-cln.swf.gz")
    report = ingest_file(store, "swf", path)
    assert (report.n_records, report.n_stored, report.n_rejected) == (28_476, 28_476, 0)
    assert report.new_systems == ["IBM SP2 at Swedish Royal Institute of Technology (KTH)"]
    again = ingest_file(store, "swf", path)
    assert again.already_ingested
    stats = run_stats(store)
    assert stats["n_runs"] == 28_476 and stats["n_censored"] == 473
    first = next(iter_runs(store, limit=1))
    assert (first["job_id"], first["runtime_s"], first["total_ranks"]) == ("15", 3477, 4)


def test_alea_refused_whole_with_line_number(store) -> None:  # type: ignore[no-untyped-def]
    path = shared_path("logs", "swf", "alea-wagap-2013-extended.swf")
    with pytest.raises(BadInputError) as err:
        ingest_file(store, "swf", path, IngestOptions(system="meta"))
    assert f"{path}:1:" in str(err.value)
    assert run_stats(store)["n_runs"] == 0


def test_cli_rejects_alea_with_one_error_line(cli) -> None:  # type: ignore[no-untyped-def]
    path = shared_path("logs", "swf", "alea-wagap-2013-extended.swf")
    result = cli("ingest", "swf", str(path), "--system", "meta")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}:1: expected 18")
    assert "--swf-allow-extra-fields" in lines[0]


def test_cli_ingests_swf_with_header_system(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, HEADER + "1 0 0 5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
    result = cli("ingest", "swf", str(path))
    assert result.exit_code == 0, result.output
    assert "1 stored" in result.output and "Test Machine at Test Center" in result.output


@pytest.mark.parametrize(("body", "options", "reason"), [
    ("1 50 0 75 1 -1 -1 1 600 -1 1 1 1 -1 -1 -1 -1 -1\n" * 3, (), "pass --system NAME"),
    ("1 50 0 75 1 -1 -1 1 600 -1 1 1 1 -1 -1 -1 -1 -1 7 8 9\n" * 3, ("--system", "x"),
     "pass --swf-allow-extra-fields"),
])
def test_a_file_no_line_of_which_can_be_read_is_one_reject(
        cli, tmp_path: Path, body: str, options: tuple[str, ...],  # type: ignore[no-untyped-def]
        reason: str) -> None:
    """No system anywhere, or an extended variant: every line fails alike, so the refusal
    is the file's (its fix a flag, not the line), and --on-error skip keeps one reject for
    it, not one per line."""
    path = write(tmp_path, body)
    refused = cli("ingest", "swf", str(path), *options)
    assert refused.exit_code == 2
    (line,) = refused.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: ") and reason in line
    assert line.endswith("--on-error skip goes on with the other files and keeps this one "
                         "as a reject"), line
    skipped = cli("ingest", "swf", str(path), *options, "--on-error", "skip")
    assert skipped.exit_code == 0 and "0 stored" in skipped.output and "1 rejected" in skipped.output


def test_traces_joined_in_one_file_are_refused_at_the_second_header(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`cat` of two traces read the second's jobs by the first's header: KTH's SP2 jobs
    were stored as NASA's iPSC/860's, and NASA's trace of a later period (another
    UnixStartTime, numbered from 1 again) was "already in the store" whole. The file
    is refused at the second header's first line that says otherwise; the same trace
    twice is read as once."""
    nasa = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf").read_text()
    with gzip.open(shared_path("logs", "swf", "KTH-SP2-1996-2.1-cln.swf.gz"), "rt") as fh:
        kth = "".join(line for _, line in zip(range(100), fh, strict=False))
    n_nasa = len(nasa.splitlines())
    later = nasa.replace("; UnixStartTime: 749458803", "; UnixStartTime: 760000000")
    for second, line_no, says in (
            (kth, n_nasa + 2, "Computer 'IBM SP2', the header at the top 'Intel iPSC/860'"),
            (later, n_nasa + 13, "UnixStartTime 760000000, the header at the top 749458803")):
        path = write(tmp_path, nasa + second, "joined.swf")
        result = cli("ingest", "swf", str(path))
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [
            f"Error: {path}:{line_no}: a header line after the data lines gives {says}: the "
            "file joins SWF traces; ingest each trace as a file of its own; nothing from this "
            "file was stored; --on-error skip goes on with the other files and keeps this one "
            "as a reject"]
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0
    twice = cli("ingest", "swf", str(write(tmp_path, nasa + nasa, "twice.swf")))
    assert "36478 records, 18239 stored, 18239 already in the store" in twice.stdout


def nasa_traces(tmp_path: Path) -> tuple[Path, Path]:
    """Two traces of NASA's iPSC/860 without ``UnixStartTime``, as the Archive's tools
    cut a log in periods: its first 100 jobs, and the next 100 numbered from 1 again with
    submit times from their own first job."""
    lines = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf").read_text().splitlines()
    header = [line for line in lines if line.startswith(";") and "UnixStartTime" not in line]
    jobs = [line.split() for line in lines if line.strip() and not line.startswith(";")]
    origin_s = float(jobs[100][1])
    later = [[str(number), f"{float(fields[1]) - origin_s:.0f}", *fields[2:]]
             for number, fields in enumerate(jobs[100:200], 1)]
    return tuple(write(tmp_path, "\n".join(header + [" ".join(f) for f in part]) + "\n",  # type: ignore[return-value]
                       name) for name, part in (("first.swf", jobs[:100]), ("next.swf", later)))


def test_two_traces_without_unix_start_time_keep_their_jobs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Keyed by the job number alone, 29 jobs of the second trace were taken for the
    first trace's jobs of their numbers and left out ("29 already in the store")."""
    first, later = nasa_traces(tmp_path)
    for path in (first, later):
        result = cli("ingest", "swf", str(path))
        assert result.exit_code == 0 and "100 stored" in result.output, result.output
    copy = tmp_path / "first.swf.gz"  # the same trace again, another sha256
    copy.write_bytes(gzip.compress(first.read_bytes()))
    for path in (copy, later):
        result = cli("ingest", "swf", "--reread", str(path))
        assert result.exit_code == 0 and " 0 stored" in result.output, result.output
    listed = cli("runs", "list", "--format", "json", "--limit", "1000")
    assert len(json.loads(listed.stdout)) == 200


def test_a_trace_read_with_and_without_unix_start_time_is_stored_once(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """The first 100 jobs without the header's epoch are the full trace's jobs: matched by
    number and runtime; and a store keyed by number alone (an earlier release) takes the
    trace again without storing it twice."""
    first, _ = nasa_traces(tmp_path)
    assert ingest_file(store, "swf", first).n_stored == 100
    with store.engine.begin() as conn:  # as an earlier release keyed them: "<system>|N"
        conn.execute(text(r"UPDATE runs SET natural_key = substr(natural_key, 1, "
                          "length(natural_key) - 17)"))
    full = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf")
    report = ingest_file(store, "swf", full)
    assert (report.n_stored, report.n_duplicates) == (18239 - 100, 100)
    again = write(tmp_path, first.read_text() + "\n", "first-again.swf")
    assert ingest_file(store, "swf", again).n_stored == 0
    assert len(list(iter_runs(store))) == 18239

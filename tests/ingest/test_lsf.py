from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.lsf import parse
from perfpredict.ingest.records import BadRecord, RunRecord
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, survives_mutations


def sample(name: str = "xdmod-accounting-logs.log") -> Path:
    return shared_path("logs", "lsf", name)


def runs(path: Path) -> list[RunRecord]:
    items = list(parse(path, IngestOptions()))
    assert all(isinstance(i, RunRecord) for i in items), items
    return items  # type: ignore[return-value]


def test_job_finish_record_compressed_host_list() -> None:
    first, second = runs(sample())
    assert (first.job_id, first.key, first.app, first.user) == ("404717", ":404717@1389642318", "abcde0040",
                                                              "anonuser")
    # 8 x "16*host" -> 8 nodes; numProcessors 128 slots; span[ptile=16]
    assert (first.nodes, first.total_ranks, first.ranks_per_node) == (8, 128, 16.0)
    assert first.runtime_s == 1389683139 - 1389642771  # eventTime - startTime = 40368
    assert first.requested_walltime_s == 12 * 3600  # #BSUB -W 12:00
    assert (first.state, first.exit_code, first.censored) == ("COMPLETED", 0, False)
    assert (first.account, first.partition) == ("anonproject", "regular")
    assert first.max_rss_bytes == 10725376 * 1024  # maxRMem KB
    assert first.submit_epoch_s == 1389642318
    # Record 2 lists hosts one entry at a time, repeated: host1..host4.
    assert (second.nodes, second.key) == (4, first.key)


def test_utf8_command_does_not_shift_fields() -> None:
    (run,) = runs(sample("xdmod-utf8-multibyte-chars.log"))
    assert (run.nodes, run.runtime_s, run.requested_walltime_s) == (8, 40368.0, 43200.0)


def finish_line(*, status: int = 64, exit_info: int = 0, hosts: str = '1 "h1"', tail: str = "") -> str:
    rusage = " ".join(["0"] * 19)
    middle = (f'{status} 1.0 "job" "cmd" {rusage} "" "proj" 0 4 "" 0 0 1024 0 "" "" "" "" 0 "" '
              f'{exit_info} "" -1 "" "" "" "" -1 "" "" 0 "" 0 "" ""')
    return (f'"JOB_FINISH" "10.1" 1700003600 77 1000 0 4 1699990000 0 0 1700000000 "u" "q" "" '
            f'"" "" "h0" "/tmp" "" "" "" "" 0 {hosts} {middle} {tail}').rstrip()


@pytest.mark.parametrize(("status", "exit_info", "state"), [
    (64, 0, "COMPLETED"), (32, 0, "FAILED"), (32, 5, "TIMEOUT"), (32, 14, "CANCELLED"),
    (32, 16, "OUT_OF_MEMORY"),
])
def test_states_from_jstatus_and_exit_info(tmp_path: Path, status: int, exit_info: int, state: str) -> None:
    path = tmp_path / "lsb.acct"
    path.write_text(finish_line(status=status, exit_info=exit_info) + "\n")
    (run,) = runs(path)
    assert (run.state, run.censored, run.max_rss_bytes) == (state, state == "TIMEOUT", 1024 * 1024)


def test_lsf10_run_limit_follows_options3(tmp_path: Path) -> None:
    # submitEXT 1 pair, 1 host-usage entry of 5 fields, options3, runLimit 7200.
    path = tmp_path / "lsb.acct"
    path.write_text(finish_line(tail='1 "k" "v" 1 h1 10 0 5 1 0 7200 0 "span[ptile=4]"') + "\n")
    (run,) = runs(path)
    assert (run.requested_walltime_s, run.runtime_s, run.nodes) == (7200.0, 3600.0, 1)


def test_other_events_skipped_and_junk_rejected(tmp_path: Path) -> None:
    path = tmp_path / "lsb.acct"
    path.write_text('"JOB_RESIZE" "10.1" 1 2 3\n'
                    '"EVENT_ADRSV_FINISH" "10.1" 1\n'
                    "not an event\n"
                    + finish_line().replace('"job"', '"jo""b') + "\n"
                    + finish_line(hosts='9 "h1"') + "\n"
                    + finish_line(status=1) + "\n")
    items = list(parse(path, IngestOptions()))
    assert [(type(i).__name__, i.line_no) for i in items] == [
        ("BadRecord", 3), ("BadRecord", 4), ("BadRecord", 5), ("BadRecord", 6)]
    reasons = [i.reason for i in items if isinstance(i, BadRecord)]
    assert "not an lsb.acct record" in reasons[0]
    assert "not closed by a double quote" in reasons[1]
    assert "numExHosts" in reasons[2]
    assert "neither DONE (64) nor EXIT (32)" in reasons[3]


def test_embedded_quotes_are_unescaped(tmp_path: Path) -> None:
    path = tmp_path / "lsb.acct"
    path.write_text(finish_line().replace('"job"', '"my ""big"" job"') + "\n")
    (run,) = runs(path)
    assert run.app == 'my "big" job'


@pytest.mark.parametrize("name", ["xdmod-accounting-logs.log", "xdmod-utf8-multibyte-chars.log"])
def test_mutated_real_logs_never_raise(tmp_path: Path, name: str) -> None:
    assert survives_mutations(parse, sample(name), tmp_path, seed=11, count=200) == 200


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-(10**20), 10**20).map(str),
                          st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")),
                                  max_size=10).map(lambda s: '"' + s.replace('"', '""') + '"')),
                max_size=120))
def test_random_job_finish_fields_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                              tokens: list[str]) -> None:
    path = tmp_path_factory.mktemp("h") / "lsb.acct"
    path.write_text('"JOB_FINISH" ' + " ".join(tokens) + "\n", encoding="utf-8")
    check_items(list(parse(path, IngestOptions())), 1)


def test_ingest_stores_the_job_once(store) -> None:  # type: ignore[no-untyped-def]
    report = ingest_file(store, "lsf", sample(), IngestOptions(system="yellowstone"))
    assert (report.n_records, report.n_stored, report.n_duplicates) == (2, 1, 1)
    again = ingest_file(store, "lsf", sample("xdmod-utf8-multibyte-chars.log"),
                        IngestOptions(system="yellowstone"))
    assert (again.n_stored, again.n_duplicates) == (0, 1)


def test_a_record_cut_inside_its_host_usage_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The XDMoD sample copied only to its 1,500th byte ends inside the host-usage list
    of its first record, before the run limit: it was stored without its 12 h limit,
    as if whole. Without its newline it is left for the next ingest, as a record LSF
    may still be writing; given its newline back, it is refused with its line, and
    nothing is stored."""
    path = tmp_path / "lsb.acct"
    path.write_bytes(sample().read_bytes()[:1500])
    result = cli("ingest", "lsf", str(path), "--system", "x")
    assert result.exit_code == 0
    assert result.stderr.endswith(f"Warning: {path}: the last line has no newline: left for "
                                  "the next ingest, as the scheduler may still be writing it\n")
    path.write_bytes(sample().read_bytes()[:1500] + b"\n")
    result = cli("ingest", "lsf", str(path), "--system", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}:1: the record ends inside its 8 "
                                    "host-usage entries; the line is cut short")
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0

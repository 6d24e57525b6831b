from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.pbs import parse
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.store.queries import iter_runs
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, survives_mutations


def sample() -> Path:
    return shared_path("logs", "pbs", "xdmod-accounting-logs.log")


def by_line() -> dict[int, RunRecord]:
    items = list(parse(sample(), IngestOptions()))
    assert all(isinstance(i, RunRecord) for i in items), items
    return {i.line_no: i for i in items}  # type: ignore[misc]


def test_torque_nodes_ppn_job() -> None:
    run = by_line()[1]
    assert (run.job_id, run.key, run.app) == ("6", ":6@1261424924", "impi-hybrid")
    assert (run.nodes, run.total_ranks, run.ranks_per_node) == (4, 32, 8.0)
    assert (run.runtime_s, run.requested_walltime_s) == (36 * 60 + 37.0, 4 * 3600.0)
    assert (run.state, run.exit_code, run.censored) == ("COMPLETED", 0, False)
    assert run.max_rss_bytes == 15240 * 1024
    assert (run.submit_epoch_s, run.start_epoch_s, run.end_epoch_s) == (1261424924, 1261425023, 1261427220)
    assert run.extra == {"pbs_job_id": "6.edge.ccr.buffalo.edu"}
    # Line 2 is the same job logged with the short id: same key, so stored once.
    assert by_line()[2].key == run.key


def test_pbs_pro_select_and_exec_host_forms() -> None:
    runs = by_line()
    select = runs[4]  # select=5:ncpus=13, exec_host c1/0*13+...
    assert (select.job_id, select.nodes, select.total_ranks, select.ranks_per_node) == ("2994", 5, 65, 13.0)
    assert select.account is None  # _pbs_project_default is no account
    # resources_used.walltime=00:00:00 while the job ran end - start = 156 s
    assert select.runtime_s == 156.0 and select.requested_walltime_s == 163.0
    ranges = runs[5]  # no spec; exec_host=c1/0-3+c2/0-7
    assert (ranges.nodes, ranges.total_ranks, ranges.ranks_per_node) == (2, 12, 6.0)


def test_gpu_requests_and_missing_usage() -> None:
    runs = by_line()
    assert (runs[6].gpus, runs[6].total_ranks, runs[6].runtime_s) == (1, 28, 1485459831 - 1485451424.0)
    assert (runs[6].state, runs[6].requested_walltime_s) == ("FAILED", 96 * 3600.0)  # hours > 24
    # nodect=1:ppn=24:gpu=4:reqmem=... (a node spec written as nodect) still reads
    assert (runs[7].nodes, runs[7].total_ranks, runs[7].gpus) == (1, 24, 4)
    assert runs[7].max_rss_bytes == pytest.approx(12.27 * 1024**2)
    assert runs[8].gpus == 2  # Resource_List.gpu=2


def test_killed_at_walltime_is_censored_timeout() -> None:
    run = by_line()[9]  # Exit_status=271 (SIGTERM), walltime 10:01:06 > 10:00:00
    assert (run.job_id, run.state, run.censored, run.exit_code) == ("3073070", "TIMEOUT", True, 143)
    assert (run.nodes, run.total_ranks, run.gpus) == (1, 48, 4)  # mpiprocs=48, ngpus=4
    assert run.runtime_s == 10 * 3600 + 66.0
    assert run.extra is not None and run.extra["exit_status"] == 271


def write(tmp_path: Path, text: str) -> Path:
    """``text`` as a PBS server writes it, each record ended by a newline."""
    path = tmp_path / "20240101"
    path.write_text(text + "\n")
    return path


def test_only_end_records_and_quoted_or_spaced_names(tmp_path: Path) -> None:
    text = "\n".join([
        "01/01/2024 00:00:00;Q;10.srv;queue=q",
        "01/01/2024 00:00:01;S;10.srv;user=u start=1704067201",
        '01/01/2024 01:00:00;E;10.srv;user=u jobname="my run" Resource_List.select=2:mpiprocs=4:ncpus=8 '
        "start=1704067201 end=1704070801 Exit_status=0",
        "01/01/2024 01:00:00;E;11[3].srv;user=u jobname=unquoted name here queue=q start=1 end=2 Exit_status=0",
    ])
    quoted, array = list(parse(write(tmp_path, text), IngestOptions()))
    assert isinstance(quoted, RunRecord) and isinstance(array, RunRecord)
    assert (quoted.app, quoted.nodes, quoted.total_ranks, quoted.runtime_s) == ("my run", 2, 8, 3600.0)
    assert (array.job_id, array.app, array.partition) == ("11[3]", "unquoted name here", "q")


@pytest.mark.parametrize(("line", "reason"), [
    ("garbage", "not a PBS accounting record"),
    ("01/01/2024 00:00:00;E;1;start=10 end=5 Exit_status=0", "end 5 is before start 10"),
    ("01/01/2024 00:00:00;E;1;Exit_status=zero", "Exit_status 'zero'"),
    ("01/01/2024 00:00:00;E;1;start=99999999999999 Exit_status=0", "between 1970 and 2100"),
    ("01/01/2024 00:00:00;E;1;Resource_List.walltime=1:99:00 Exit_status=0", "out of range"),
    ("01/01/2024 00:00:00;E;1;exec_host=a/x Exit_status=0", "exec_host entry"),
    # a line cut short, a record's impossible date, a runtime given beside a bad span
    ("11/09/2014 23:59:51;E;6464684.anonhost;u", "no Exit_status; the line is cut short"),
    ("01/01/2024 00:00:00;E;1;user=u account=_pbs_projec", "no Exit_status"),
    ("11/39/2014 00:00:00;E;1;start=10 end=20 Exit_status=0", "'11/39/2014 00:00:00' is not a date"),
    ("01/01/2024 00:00:00;E;1;start=10 end=5 resources_used.walltime=00:00:05 Exit_status=0",
     "end 5 is before start 10"),
])
def test_bad_lines_are_bad_records(tmp_path: Path, line: str, reason: str) -> None:
    (bad,) = list(parse(write(tmp_path, line + "\n"), IngestOptions()))
    assert isinstance(bad, BadRecord) and bad.line_no == 1 and reason in bad.reason


def test_mutated_real_log_never_raises(tmp_path: Path) -> None:
    assert survives_mutations(parse, sample(), tmp_path, seed=3, count=300) == 300


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(
    st.sampled_from(["start", "end", "ctime", "Exit_status", "exec_host", "Resource_List.nodes",
                     "Resource_List.select", "Resource_List.nodect", "Resource_List.walltime",
                     "resources_used.walltime", "resources_used.mem", "Resource_List.ngpus"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), max_size=15),
    max_size=8))
def test_random_attributes_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                       attrs: dict[str, str]) -> None:
    message = " ".join(f"{k}={v}" for k, v in attrs.items())
    path = tmp_path_factory.mktemp("h") / "acct"
    path.write_text(f"01/01/2024 00:00:00;E;1.srv;{message}\n", encoding="utf-8")
    check_items(list(parse(path, IngestOptions())), 1)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from("EQSDAR"), st.from_regex(r"[0-9]{1,9}\.[a-z0-9.-]{1,20}", fullmatch=True),
       st.dictionaries(st.sampled_from(["user", "queue", "start", "end", "exec_host"]),
                       st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")),
                               max_size=15), max_size=5))
def test_any_record_is_told_as_pbs_accounting(tmp_path_factory: pytest.TempPathFactory,
                                              kind: str, job_id: str,
                                              attrs: dict[str, str]) -> None:
    """``advise walltime`` tells a PBS accounting log from its first record, whatever
    its type, job id and attributes."""
    from perfpredict.ingest.registry import sniff_format

    path = tmp_path_factory.mktemp("pbs") / "20240101"
    message = " ".join(f"{k}={v}" for k, v in attrs.items())
    path.write_text(f"01/01/2024 00:00:00;{kind};{job_id};{message}\n", encoding="utf-8")
    assert sniff_format(path) == "pbs"


def test_ingest_stores_each_job_once(store) -> None:  # type: ignore[no-untyped-def]
    report = ingest_file(store, "pbs", sample(), IngestOptions(system="edge"))
    assert (report.n_records, report.n_stored, report.n_duplicates) == (9, 8, 1)
    assert ingest_file(store, "pbs", sample(), IngestOptions(system="edge")).already_ingested
    timeout = next(r for r in iter_runs(store) if r["job_id"] == "3073070")
    assert timeout["censored"] and timeout["state"] == "TIMEOUT"


#: The real log's PBS Pro select statements with OpenMP threads per rank added, as an
#: hybrid MPI+OpenMP job asks for them (line: the select it had, the select now).
OMPTHREADS = {
    9: ("1:mpiprocs=48:ncpus=48:", "1:mpiprocs=12:ompthreads=4:ncpus=48:"),
    4: ("5:ncpus=13 ", "5:ncpus=13:ompthreads=13 "),
}


def test_ompthreads_is_read_as_threads_per_rank(tmp_path: Path, store) -> None:  # type: ignore[no-untyped-def]
    """``select=...:ompthreads=N`` was not read: the runs had no threads per rank, and a
    chunk of ncpus=13 without mpiprocs counted 13 ranks where PBS launches one rank of
    13 threads."""
    lines = sample().read_text().splitlines(keepends=True)
    for line_no, (before, after) in OMPTHREADS.items():
        assert f"Resource_List.select={before}" in lines[line_no - 1]
        lines[line_no - 1] = lines[line_no - 1].replace(f"select={before}", f"select={after}")
    path = write(tmp_path, "".join(lines))
    runs = {i.line_no: i for i in parse(path, IngestOptions()) if isinstance(i, RunRecord)}
    assert (runs[9].total_ranks, runs[9].ranks_per_node, runs[9].threads_per_rank) == (12, 12.0, 4)
    assert (runs[4].total_ranks, runs[4].ranks_per_node, runs[4].threads_per_rank) == (5, 1.0, 13)
    # the select statements that say nothing of threads give none, as before
    assert runs[1].threads_per_rank is None and by_line()[9].threads_per_rank is None
    ingest_file(store, "pbs", path, IngestOptions(system="edge"))
    stored = {r["job_id"]: r for r in iter_runs(store)}
    assert (stored["3073070"]["threads_per_rank"], stored["2994"]["threads_per_rank"]) == (4, 13)


def test_chunks_that_differ_in_ompthreads_give_no_threads_per_rank(tmp_path: Path) -> None:
    line = sample().read_text().splitlines()[8].replace(
        "select=1:mpiprocs=48:ncpus=48:", "select=1:mpiprocs=4:ompthreads=12:ncpus=48+"
        "1:mpiprocs=8:ompthreads=6:ncpus=48:")
    (run,) = parse(write(tmp_path, line + "\n"), IngestOptions())
    assert isinstance(run, RunRecord)
    assert (run.total_ranks, run.threads_per_rank) == (12, None)

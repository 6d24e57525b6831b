"""One job read from sacct's JSON (epoch seconds, UTC) and from a ``sacct -P`` dump in
local time read as UTC is one run: the store matches a run whose times are all one zone
offset apart (a whole number of quarter-hours, at most 14 h) and keeps the epoch times,
in either order; a job that reused the id is still a run of its own."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, update

from perfpredict.ingest import ingest_file
from perfpredict.ingest.records import DARSHAN_DETAILS
from perfpredict.store.job_identity import JobTimes, ZoneShift, zone_shift
from perfpredict.store.queries import iter_runs
from perfpredict.store.schema import ingest_batches, runs
from tests.conftest import shared_path

NARVAL = "sarc-sacct-json-slurm_22_5_9.json"  # an array task on Narval (Montreal)
CEDAR = "clockwork-sacct_2.json"  # Cedar (Burnaby), a NODE_FAIL job that ended
DUMP_COLUMNS = ["JobID", "JobIDRaw", "Cluster", "JobName", "User", "Account", "Partition",
                "State", "Submit", "Start", "End", "ElapsedRaw", "TimelimitRaw", "NNodes",
                "NCPUS", "NodeList"]


def sacct_dump(json_name: str, zone: str, tmp_path: Path, shift_end_s: int = 0,
               json_path: Path | None = None) -> Path:
    """The ``sacct -P`` dump of the jobs of a real ``sacct --json`` file (``json_path``,
    else ``json_name`` in ../shared/logs/slurm), as
    sacct run in ``zone`` prints them: JobID ``123_4`` for an array task beside its
    JobIDRaw, Submit/Start/End as wall-clock ``YYYY-MM-DDTHH:MM:SS`` in the zone, the
    limit in minutes, nodes and CPUs from the allocated TRES. ``shift_end_s`` moves each
    job's end and elapsed time (another job that got the id)."""
    local = ZoneInfo(zone)

    def clock(epoch_s: int) -> str:
        return (datetime.fromtimestamp(epoch_s, local).strftime("%Y-%m-%dT%H:%M:%S")
                if epoch_s else "Unknown")

    lines = ["|".join(DUMP_COLUMNS)]
    source = json_path or shared_path("logs", "slurm", json_name)
    for job in json.loads(source.read_text())["jobs"]:
        times, array = job["time"], job["array"]
        tres = {entry["type"]: entry["count"] for entry in job["tres"]["allocated"]}
        lines.append("|".join(str(value) for value in [
            f"{array['job_id']}_{array['task_id']}" if array["job_id"] else job["job_id"],
            job["job_id"], job["cluster"], job["name"], job["user"], job["account"],
            job["partition"], job["state"]["current"], clock(times["submission"]),
            clock(times["start"]), clock(times["end"] + shift_end_s),
            times["elapsed"] + shift_end_s, times["limit"], tres["node"], tres["cpu"],
            job["nodes"]]))
    path = tmp_path / f"{json_name}.{zone.replace('/', '-')}.psv"
    path.write_text("\n".join(lines) + "\n")
    return path


def exported(cli: Any) -> list[dict[str, str]]:  # the store's runs, times included
    result = cli("runs", "export", "--format", "csv")
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


#: What perfpredict skips as no run yet (Cedar's file has a REQUEUED job).
NOT_ENDED = {"PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "RESIZING"}


def json_times(json_name: str) -> list[tuple[str, str, str]]:
    """Each ended job's submit, start and end as UTC ISO text, from the JSON."""
    def iso(epoch_s: int) -> str:
        return datetime.fromtimestamp(epoch_s, ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs = json.loads(shared_path("logs", "slurm", json_name).read_text())["jobs"]
    return sorted((iso(j["time"]["submission"]), iso(j["time"]["start"]),
                   iso(j["time"]["end"])) for j in jobs if j["state"]["current"] not in NOT_ENDED)


@pytest.mark.parametrize("json_first", [True, False], ids=["json-first", "dump-first"])
@pytest.mark.parametrize(("json_name", "zone"), [
    (NARVAL, "America/Toronto"), (CEDAR, "America/Vancouver"),
    (NARVAL, "Asia/Kathmandu"), (NARVAL, "America/St_Johns")])
def test_a_job_read_from_json_and_a_local_time_dump_is_stored_once(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, json_name: str, zone: str, json_first: bool) -> None:
    """Before, the dump read as UTC gave each job a submit time hours off the JSON's, and
    the store held it twice. Now once, with the JSON's UTC times whichever came first
    (Toronto -4 h, Vancouver -7 h, Kathmandu +5:45, St John's -2:30), and reading either
    file again, or a copy of it, stores nothing."""
    json_path = shared_path("logs", "slurm", json_name)
    dump = sacct_dump(json_name, zone, tmp_path)
    files = [("sacct-json", json_path), ("sacct", dump)]
    if not json_first:
        files.reverse()
    outputs = [cli("ingest", fmt, str(path)) for fmt, path in files]
    assert all(result.exit_code == 0 for result in outputs), [r.output for r in outputs]
    want = json_times(json_name)
    runs = exported(cli)
    assert sorted((r["submit_time"], r["start_time"], r["end_time"]) for r in runs) == want
    assert "--timezone" in outputs[1].output  # the second file is told why and what to do
    copy = tmp_path / "copy.psv"
    copy.write_text(dump.read_text() + "\n")  # another sha256: read anew
    for fmt, path in [*files, ("sacct", copy)]:
        result = cli("ingest", fmt, str(path))
        assert result.exit_code == 0, result.output
        assert "already ingested" in result.output or " 0 stored" in result.output
    listed = cli("runs", "list", "--format", "json")
    assert len(json.loads(listed.stdout)) == len(want)
    assert [r["run_key"] for r in exported(cli)] == [r["run_key"] for r in runs]


def test_the_dump_read_in_its_own_zone_matches_exactly(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--timezone`` reads the dump right: no zone apart, no warning."""
    assert cli("ingest", "sacct-json", str(shared_path("logs", "slurm", NARVAL))).exit_code == 0
    result = cli("ingest", "sacct", "--timezone", "America/Toronto",
                 str(sacct_dump(NARVAL, "America/Toronto", tmp_path)))
    assert result.exit_code == 0 and "0 stored, 1 already in the store" in result.output
    assert "zone apart" not in result.output


@pytest.mark.parametrize("shift_end_s", [1, -1, 3600])
def test_a_job_that_reused_the_id_is_kept_apart(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, shift_end_s: int) -> None:
    """Submit and start a zone apart but the end (and elapsed) a second, or an hour,
    off that offset: another job, stored beside the JSON's."""
    assert cli("ingest", "sacct-json", str(shared_path("logs", "slurm", NARVAL))).exit_code == 0
    other = sacct_dump(NARVAL, "America/Toronto", tmp_path, shift_end_s=shift_end_s)
    result = cli("ingest", "sacct", str(other))
    assert result.exit_code == 0 and "1 stored" in result.output, result.output
    assert len(exported(cli)) == 2


def test_two_epoch_records_are_never_one_job_at_another_time(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """Epoch seconds are right in any zone: the same id in another JSON file with every
    time exactly an hour later is another job."""
    path = shared_path("logs", "slurm", NARVAL)
    doc = json.loads(path.read_text())
    for job in doc["jobs"]:
        for name in ("submission", "eligible", "start", "end"):
            job["time"][name] += 3600
    later = tmp_path / "later.json"
    later.write_text(json.dumps(doc))
    for each in (path, later):
        assert cli("ingest", "sacct-json", str(each)).exit_code == 0
    assert len(exported(cli)) == 2


def test_the_json_replacing_a_dump_keeps_the_io_a_darshan_log_gave_it(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """Dump first, with I/O attached to its run (as a Darshan log does), then the JSON:
    the run the JSON's record replaces hands its I/O bytes and log details over."""
    dump = sacct_dump(NARVAL, "America/Toronto", tmp_path)
    assert ingest_file(store, "sacct", dump).n_stored == 1
    with store.engine.begin() as conn:
        conn.execute(update(runs).values(io_bytes=5e9, extra={DARSHAN_DETAILS: {"log": "a"}}))
    report = ingest_file(store, "sacct-json", shared_path("logs", "slurm", NARVAL))
    assert (report.n_stored, report.n_duplicates) == (1, 0)
    (run,) = iter_runs(store)
    assert run["io_bytes"] == 5e9 and run["extra"][DARSHAN_DETAILS] == {"log": "a"}
    assert run["submit_epoch_s"] == 1692160813  # the JSON's, UTC
    with store.engine.connect() as conn:  # the dump's batch counts it no longer
        assert conn.execute(select(ingest_batches.c.n_stored)
                            .where(ingest_batches.c.path == str(dump))).scalar_one() == 0


def _times(submit: float | None, start: float | None, end: float | None,
           runtime: float | None) -> JobTimes:
    return JobTimes(submit, start, end, runtime)


@pytest.mark.parametrize(("offset_s", "matched"), [
    (3600, True), (-(5 * 3600 + 45 * 60), True), (14 * 3600, True), (-14 * 3600, True),
    (14 * 3600 + 900, False), (600, False), (3601, False), (0, False)])
def test_only_a_whole_quarter_hour_up_to_14_h_is_a_zone(offset_s: int, matched: bool) -> None:
    run = SimpleNamespace(**_times(1_000_000, 1_000_100, 1_003_700, 3600)._asdict())
    record = _times(1_000_000 + offset_s, 1_000_100 + offset_s, 1_003_700 + offset_s, 3600)
    assert (zone_shift(record, run) == ZoneShift(offset_s, offset_s, offset_s)) is matched


def test_without_an_end_the_runtime_must_agree() -> None:
    run = SimpleNamespace(**_times(1_000_000, 1_000_100, None, 3600)._asdict())
    assert zone_shift(_times(1_003_600, 1_003_700, 1_007_300, 3600), run) == ZoneShift(
        3600, 3600, 3600)
    assert zone_shift(_times(1_003_600, 1_003_700, 1_007_301, 3601), run) is None
    assert zone_shift(_times(1_003_600, 1_003_700, None, None), run) is None
    assert zone_shift(_times(1_003_600, None, None, 3600), run) is None


H = 3600


@pytest.mark.parametrize(("shift", "runtime_s", "matched"), [
    ((-4 * H, -4 * H, -5 * H), 3600, True),  # Toronto, the clocks fell back while it ran
    ((-5 * H, -5 * H, -4 * H), 3600, True),  # ... sprang forward
    ((-4 * H, -5 * H, -5 * H), 3600, True),  # ... while it waited
    ((H, 0, 0), 3600, True),  # London: submitted in summer time, ran in winter (UTC's own)
    ((10 * H + 1800, 10 * H + 1800, 11 * H), 3600, True),  # Lord Howe's half hour
    ((-4 * H, -4 * H, -5 * H), None, False),  # the runtime must say the end moved
    ((-4 * H, -5 * H, -4 * H), 3600, False),  # the clocks changed back and forth
    ((-4 * H, -4 * H, -6 * H), 3600, False),  # no clock changes by two hours
    ((-4 * H, -4 * H, -4 * H - 60), 3600, False),  # a minute is no zone
])
def test_a_job_across_a_clock_change_is_shifted_by_two_offsets(
        shift: tuple[int, int, int], runtime_s: float | None, matched: bool) -> None:
    """Daylight saving time moved the clocks while the job waited or ran: the local-time
    reading's later times are an hour off its earlier ones, once, and its end less its
    start is its runtime off by that hour."""
    epoch = (1_699_160_000, 1_699_162_000, 1_699_162_000 + 3600)
    run = SimpleNamespace(**_times(*epoch, runtime_s)._asdict())
    record = _times(*(t + offset_s for t, offset_s in zip(epoch, shift, strict=True)),
                    runtime_s)
    assert (zone_shift(record, run) == ZoneShift(*shift)) is matched


def _json_across_a_clock_change(tmp_path: Path, start_utc: str, runtime_s: int) -> Path:
    """Narval's job moved to start at ``start_utc`` (ISO, UTC) and run ``runtime_s``."""
    doc = json.loads(shared_path("logs", "slurm", NARVAL).read_text())
    start = int(datetime.fromisoformat(start_utc).timestamp())
    (job,) = doc["jobs"]
    job["time"].update(submission=start - 600, eligible=start - 600, start=start,
                       end=start + runtime_s, elapsed=runtime_s)
    path = tmp_path / f"narval-{start}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("json_first", [True, False], ids=["json-first", "dump-first"])
@pytest.mark.parametrize("start_utc", ["2023-11-05T05:30:00+00:00", "2023-03-12T06:30:00+00:00"],
                         ids=["fall-back", "spring-forward"])
def test_a_job_that_ran_across_a_clock_change_is_stored_once(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, start_utc: str, json_first: bool) -> None:
    """Before, a job that ran while Toronto's clocks changed (its dump's end an hour off
    its start's offset: 01:30 to 01:30 for an hour's run in November) was stored twice
    beside its JSON record. Now once, with the JSON's UTC times."""
    json_path = _json_across_a_clock_change(tmp_path, start_utc, 3600)
    dump = sacct_dump(NARVAL, "America/Toronto", tmp_path, json_path=json_path)
    files = [("sacct-json", json_path), ("sacct", dump)]
    if not json_first:
        files.reverse()
    outputs = [cli("ingest", fmt, str(path)) for fmt, path in files]
    assert all(result.exit_code == 0 for result in outputs), [r.output for r in outputs]
    (run,) = exported(cli)
    assert run["start_time"] == start_utc.replace("+00:00", "Z")
    assert float(run["runtime_s"]) == 3600
    assert "-04:00" in outputs[1].output or "-05:00" in outputs[1].output

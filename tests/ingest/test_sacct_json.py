from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.ingest_benchmark import write_sacct_json
from perfpredict.ingest import IngestOptions, ingest_file, sacct_json
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.ingest.sacct_json import _record, parse
from perfpredict.store.queries import iter_runs
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, survives_mutations


def slurm(name: str) -> Path:
    return shared_path("logs", "slurm", name)


def runs(path: Path, **options: Any) -> list[RunRecord]:
    items = list(parse(path, IngestOptions(**options)))
    assert all(isinstance(i, RunRecord) for i in items), items
    return items  # type: ignore[return-value]


def write_json(tmp_path: Path, document: Any, name: str = "sacct.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=1))
    return path


def test_slurm_21_08_clockwork() -> None:
    # Job 10 ended NODE_FAIL (kept: a finished job); job 20 is REQUEUED (not a run yet).
    (job,) = runs(slurm("clockwork-sacct_1.json"))
    # keyed as array task 1_7 (JobID's form, key_id) submitted at time.submission
    assert (job.job_id, job.key, job.system, job.state) == ("10", ":1_7@1680193479", "cedar",
                                                            "NODE_FAIL")
    assert (job.nodes, job.gpus, job.runtime_s) == (1, 1, 20615.0)
    assert job.requested_walltime_s == 1440 * 60  # time.limit is in minutes
    assert (job.submit_epoch_s, job.start_epoch_s, job.end_epoch_s) == (1680193479, 1680193504, None)
    assert job.extra is not None
    assert (job.extra["array_job_id"], job.extra["array_task_id"], job.extra["cpus"]) == ("1", 7, 4)
    assert job.extra["state_reason"] == "Prolog"
    (later,) = runs(slurm("clockwork-sacct_2.json"))
    assert (later.key, later.app, later.end_epoch_s) == (":1_7@1680193479", "new_name",
                                                           1680244103)


def test_slurm_22_05_multi_node_gpu_job() -> None:
    (job,) = runs(slurm("sarc-sacct-json-slurm_22_5_9.json"))
    assert (job.job_id, job.state, job.nodes, job.gpus) == ("20247445", "FAILED", 4, 16)
    assert (job.runtime_s, job.requested_walltime_s) == (124403.0, 2880 * 60.0)
    assert job.extra is not None and job.extra["cpus"] == 96


def test_slurm_25_05_shape_with_steps_and_typed_gpus() -> None:
    jobs = {r.job_id: r for r in runs(slurm("sarc-generated-sacct-json-v0.0.43-mila_1714003200.json"))}
    assert sorted(jobs) == ["20", "21", "22", "23", "24"]  # 12, 18, 19 are RUNNING
    assert jobs["22"].gpus == 1  # only "gpu:a100" listed
    assert jobs["20"].gpus is None
    assert (jobs["21"].state, jobs["21"].exit_code) == ("FAILED", 1)
    assert (jobs["23"].runtime_s, jobs["23"].requested_walltime_s) == (571.0, 480 * 60.0)
    assert (jobs["24"].total_ranks, jobs["24"].ranks_per_node) == (1, 1.0)


def finished_copy(tmp_path: Path, name: str) -> Path:
    """The sample with its job marked COMPLETED, in the shape its version uses."""
    document = json.loads(slurm(name).read_text())
    for job in document["jobs"]:
        current = job["state"]["current"]
        job["state"]["current"] = ["COMPLETED"] if isinstance(current, list) else "COMPLETED"
    return write_json(tmp_path, document, name)


@pytest.mark.parametrize(("name", "job_id", "limit_min", "nodes", "gpus"), [
    ("sarc-sacct-json-slurm_21_8_8.json", "55978384", 1440, 1, 1),
    ("sarc-sacct-json-slurm_22_5_9.json", "20247445", 2880, 4, 16),
    ("sarc-sacct-json-slurm_23_2_6.json", "4", 7200, 1, 2),    # meta.plugins, {set,number}
    ("sarc-sacct-json-slurm_23_11_5.json", "4", 7200, 1, 2),   # state.current list
])
def test_every_schema_version_reads_the_same_fields(tmp_path: Path, name: str, job_id: str,
                                                    limit_min: int, nodes: int, gpus: int) -> None:
    (job,) = runs(finished_copy(tmp_path, name))
    assert (job.job_id, job.state, job.nodes, job.gpus) == (job_id, "COMPLETED", nodes, gpus)
    assert job.requested_walltime_s == limit_min * 60


def step(step_id: str, tasks: int, nodes: int, disk_in: int, disk_out: int, rss: int) -> dict[str, Any]:
    def tres(kind: str, name: str, value: int) -> list[dict[str, Any]]:
        return [{"type": kind, "name": name, "id": 6, "count": value}]

    return {"step": {"id": step_id, "name": step_id.split(".")[1]},
            "tasks": {"count": tasks}, "nodes": {"count": nodes},
            "tres": {"requested": {"total": tres("fs", "disk", disk_in), "max": tres("mem", "", rss)},
                     "consumed": {"total": tres("fs", "disk", disk_out), "max": []}}}


def synthetic_job(**changes: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "job_id": 7, "name": "lmp", "cluster": "c1", "state": {"current": ["TIMEOUT"]},
        "time": {"elapsed": 3600, "limit": {"set": True, "infinite": False, "number": 60},
                 "start": 1700000000, "end": 1700003600, "submission": 1699990000},
        "tres": {"allocated": [{"type": "node", "name": "", "count": 2},
                               {"type": "gres", "name": "gpu", "count": 8},
                               {"type": "gres", "name": "gpu:h100", "count": 8}]},
        "exit_code": {"status": ["SIGNALED"], "return_code": {"set": True, "number": 0},
                      "signal": {"id": {"set": True, "number": 15}}},
        "steps": [step("7.batch", 1, 1, 10, 20, 100), step("7.extern", 2, 2, 0, 0, 5),
                  step("7.0", 64, 2, 1000, 2000, 4096)],
    }
    job.update(changes)
    return job


def test_steps_give_ranks_rss_and_io_bytes(tmp_path: Path) -> None:
    (job,) = runs(write_json(tmp_path, {"jobs": [synthetic_job()]}))
    assert (job.total_ranks, job.ranks_per_node, job.nodes, job.gpus) == (64, 32.0, 2, 8)
    assert job.io_bytes == 10 + 20 + 1000 + 2000
    assert job.max_rss_bytes == 4096
    assert (job.state, job.censored, job.exit_code) == ("TIMEOUT", True, 128 + 15)
    assert job.requested_walltime_s == 3600


def test_infinite_limit_is_no_limit(tmp_path: Path) -> None:
    job = synthetic_job(time={"elapsed": 5, "limit": {"set": True, "infinite": True, "number": 0}})
    (record,) = runs(write_json(tmp_path, {"jobs": [job]}))
    assert record.requested_walltime_s is None


@pytest.mark.parametrize(("job", "reason"), [
    (synthetic_job(state="COMPLETED"), "unexpected shape"),
    (synthetic_job(state={"current": "FOO"}), "unknown job state 'FOO'"),
    (synthetic_job(time={"elapsed": -5}), "not a plausible duration"),
    (synthetic_job(time={"elapsed": 5, "start": 1e12}), "between 1970 and 2100"),
    (synthetic_job(job_id=None), "no job_id"),
])
def test_bad_jobs_are_bad_records_naming_the_job(tmp_path: Path, job: dict[str, Any], reason: str) -> None:
    ok = synthetic_job(job_id=8)
    items = list(parse(write_json(tmp_path, {"jobs": [ok, job]}), IngestOptions()))
    assert isinstance(items[0], RunRecord)
    bad = items[1]
    assert isinstance(bad, BadRecord) and reason in bad.reason and bad.reason.startswith("jobs[1]")


def test_malformed_document_is_one_bad_record_at_its_line(tmp_path: Path) -> None:
    text = slurm("clockwork-sacct_1.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    (bad,) = list(parse(path, IngestOptions()))
    assert isinstance(bad, BadRecord) and "not valid JSON" in bad.reason
    try:
        json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        assert bad.line_no == exc.lineno
    cut_in_a_name = tmp_path / "cut_in_a_name.json"
    cut_in_a_name.write_text('{"jobs": [{"name": "roberta')
    (bad,) = list(parse(cut_in_a_name, IngestOptions()))
    assert isinstance(bad, BadRecord) and "(Unterminated string starting at column 20)" in bad.reason
    not_sacct = write_json(tmp_path, [1, 2], "list.json")
    (bad,) = list(parse(not_sacct, IngestOptions()))
    assert isinstance(bad, BadRecord) and "no 'jobs' list" in bad.reason


def test_a_name_that_is_not_utf8_costs_neither_the_job_nor_the_file(tmp_path: Path) -> None:
    """Slurm writes a job name's bytes as they are: a Latin-1 é refused the whole export,
    with advice (export again) that gives the same bytes."""
    path = tmp_path / "latin1.json"
    path.write_bytes(slurm("sarc-sacct-json-slurm_22_5_9.json").read_bytes().replace(
        b'"roberta-encoder', b'"rob\xe9rta-encoder', 1))
    (job,) = runs(path)
    assert (job.job_id, job.app, job.runtime_s) == (
        "20247445", "rob\ufffdrta-encoder-with_scheduler", 124403.0)


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=6).filter(lambda b: not set(b) & set(b'"\\') and all(
    byte >= 0x20 for byte in b)))
def test_any_bytes_in_a_name_read_as_a_job(tmp_path_factory: pytest.TempPathFactory,
                                           name: bytes) -> None:
    """Property: whatever bytes a job name holds (no quote, backslash or control
    character, which Slurm escapes), the real job is read with its other fields."""
    path = tmp_path_factory.mktemp("h") / "name.json"
    path.write_bytes(slurm("clockwork-sacct_1.json").read_bytes().replace(
        b'"name": "test-job-1"', b'"name": "' + name + b'"', 1))
    (job,) = runs(path)
    assert (job.job_id, job.state, job.runtime_s) == ("10", "NODE_FAIL", 20615.0)
    assert job.app == (name.decode("utf-8", errors="replace").strip() or "unnamed")


@pytest.mark.parametrize("name", ["clockwork-sacct_1.json",
                                  "sarc-generated-sacct-json-v0.0.43-mila_1714003200.json"])
def test_mutated_real_documents_never_raise(tmp_path: Path, name: str) -> None:
    assert survives_mutations(parse, slurm(name), tmp_path, seed=7, count=120) == 120


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["job_id", "state", "time", "tres", "steps", "exit_code",
                                        "array", "het", "name", "cluster", "comment",
                                        "allocation_nodes"]), json_values, max_size=8))
def test_random_job_objects_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                        changes: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("h") / "fuzz.json"
    path.write_text(json.dumps({"jobs": [synthetic_job(**changes)]}))
    check_items(list(parse(path, IngestOptions())), 10**6)


def test_ingest_is_idempotent_and_matches_sacct_keys(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = ingest_file(store, "sacct-json", slurm("clockwork-sacct_1.json"))
    assert (first.n_records, first.n_stored) == (1, 1)
    assert ingest_file(store, "sacct-json", slurm("clockwork-sacct_1.json")).already_ingested
    # The same job 10 in a later export is recognised by its natural key cedar|:10, and
    # having ended there (the first export had no end time), replaces the record ...
    second = ingest_file(store, "sacct-json", slurm("clockwork-sacct_2.json"))
    assert (second.n_stored, second.n_duplicates) == (1, 0)
    # ... and so is the sacct -P rendering of it: both readers key jobs by JobIDRaw.
    psv = tmp_path / "same-job.psv"
    psv.write_text("JobIDRaw|Cluster|State|Elapsed\n10|cedar|NODE_FAIL|05:43:35\n")
    third = ingest_file(store, "sacct", psv)
    assert (third.n_stored, third.n_duplicates) == (0, 1)
    (run,) = iter_runs(store)
    assert (run["system"], run["job_id"], run["runtime_s"]) == ("cedar", "10", 20615.0)


SACCT_JSON_LOGS = ["clockwork-sacct_1.json", "clockwork-sacct_2.json",
                   "sarc-generated-sacct-json-v0.0.43-mila_1714003200.json",
                   "sarc-sacct-json-slurm_21_8_8.json", "sarc-sacct-json-slurm_22_5_9.json",
                   "sarc-sacct-json-slurm_23_2_6.json", "sarc-sacct-json-slurm_23_11_5.json"]


def whole_document_runs(path: Path) -> list[RunRecord]:
    """The runs as the reader read them before it streamed: the document loaded whole."""
    document = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    found = (_record(job, IngestOptions()) for job in document["jobs"])
    return [run for run in found if run is not None]


def whitespace_between_tokens(value: Any, space: Callable[[], str]) -> str:
    """``value`` as JSON text with ``space()`` between every two tokens."""
    if isinstance(value, dict):
        members = [f"{space()}{json.dumps(key)}{space()}:{space()}"
                   f"{whitespace_between_tokens(item, space)}{space()}"
                   for key, item in value.items()]
        return "{" + (",".join(members) or space()) + "}"
    if isinstance(value, list):
        items = [f"{space()}{whitespace_between_tokens(item, space)}{space()}" for item in value]
        return "[" + (",".join(items) or space()) + "]"
    return json.dumps(value)


@pytest.mark.parametrize("name", SACCT_JSON_LOGS)
def test_streamed_runs_are_the_whole_documents(name: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = slurm(name)
    assert runs(path) == whole_document_runs(path)
    compressed = tmp_path / f"{name}.gz"
    compressed.write_bytes(gzip.compress(path.read_bytes()))
    assert runs(compressed) == whole_document_runs(path)
    # pieces of a few bytes: every job, key and number read across pieces
    monkeypatch.setattr(sacct_json, "READ_PIECE_BYTES", 5)
    assert runs(path) == runs(compressed) == whole_document_runs(path)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SACCT_JSON_LOGS), st.data(), st.integers(1, 300))
def test_any_whitespace_between_elements_gives_the_same_runs(
        tmp_path_factory: pytest.TempPathFactory, name: str, data: st.DataObject,
        piece_bytes: int) -> None:
    """Property: sacct's JSON with any JSON whitespace between its tokens, read a piece
    of any size at a time, gives the runs of the whole document."""
    document = json.loads(slurm(name).read_bytes())
    spaces = st.text(alphabet=" \t\r\n", max_size=4)
    text = whitespace_between_tokens(document, lambda: data.draw(spaces))
    path = tmp_path_factory.mktemp("h") / name
    path.write_text(data.draw(spaces) + text + data.draw(spaces))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sacct_json, "READ_PIECE_BYTES", piece_bytes)
        assert runs(path) == whole_document_runs(path)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["clockwork-sacct_1.json", "sarc-sacct-json-slurm_23_2_6.json"]),
       st.floats(0, 1, exclude_max=True), st.integers(1, 200))
def test_a_cut_document_is_refused_at_the_line_json_names(
        tmp_path_factory: pytest.TempPathFactory, name: str, share: float,
        piece_bytes: int) -> None:
    """Property: a document cut anywhere ends with the one whole-file bad record the
    whole document gave, at the line and column :func:`json.loads` names."""
    text = slurm(name).read_text()
    cut = text[:int(len(text) * share)]
    path = tmp_path_factory.mktemp("h") / name
    path.write_text(cut)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sacct_json, "READ_PIECE_BYTES", piece_bytes)
        *_, bad = parse(path, IngestOptions())
    with pytest.raises(json.JSONDecodeError) as refused:
        json.loads(cut)
    assert isinstance(bad, BadRecord) and bad.whole_file
    if not cut.strip():
        assert (bad.line_no, bad.reason) == (None, "the file is empty; export again with "
                                             "sacct --json")
        return
    assert bad.line_no == refused.value.lineno
    assert f"({refused.value.msg.removesuffix(' at')} at column {refused.value.colno})" in bad.reason
    assert bad.raw == (cut.splitlines() + [""])[refused.value.lineno - 1][:200]


def test_a_bad_job_is_named_at_its_line(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"meta": {}, "jobs": [synthetic_job(job_id=8),
                                                      synthetic_job(job_id=None), 3]})
    _, bad, not_a_job = parse(path, IngestOptions())
    lines = path.read_text().splitlines()
    assert isinstance(bad, BadRecord) and isinstance(not_a_job, BadRecord)
    assert bad.line_no is not None and lines[bad.line_no - 1].strip() == "{"
    assert '"job_id": null' in "\n".join(lines[bad.line_no - 1:bad.line_no + 3])
    assert not_a_job.line_no is not None and lines[not_a_job.line_no - 1].strip() == "3"


def test_jobs_twice_is_not_sacct_output(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text('{"jobs": [],\n "jobs": []}')
    (bad,) = parse(path, IngestOptions())
    assert isinstance(bad, BadRecord) and bad.whole_file and bad.line_no == 2
    assert "'jobs' twice (lines 1 and 2)" in bad.reason


def test_exports_appended_to_one_file_are_read_one_after_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sacct --json ... >> month.json` every night: the second export was refused as
    "not valid JSON (Extra data ...); ... the file may be cut short", and the month
    stored nothing. Each export's jobs are read as from its own file, gzip or not, and
    in pieces of a few bytes."""
    names = ["clockwork-sacct_1.json", "sarc-sacct-json-slurm_22_5_9.json",
             "sarc-generated-sacct-json-v0.0.43-mila_1714003200.json"]
    month = tmp_path / "month.json"
    month.write_text("".join(slurm(name).read_text() for name in names))
    alone = [run for name in names for run in runs(slurm(name))]
    assert len(alone) == 7
    assert runs(month) == alone
    compressed = tmp_path / "month.json.gz"
    compressed.write_bytes(gzip.compress(month.read_bytes()))
    monkeypatch.setattr(sacct_json, "READ_PIECE_BYTES", 5)
    assert runs(compressed) == alone


def test_an_appended_document_without_jobs_is_refused_at_its_line(tmp_path: Path) -> None:
    first = slurm("clockwork-sacct_1.json").read_text()
    path = tmp_path / "month.json"
    path.write_text(first + '\n{"meta": {}, "errors": ["slurmdbd down"]}\n')
    *_, bad = parse(path, IngestOptions())
    assert isinstance(bad, BadRecord) and bad.whole_file
    assert bad.line_no == len(first.splitlines()) + 1
    assert bad.reason.startswith("no 'jobs' list at the top level")


def test_a_document_read_in_pieces_is_never_held_whole(tmp_path: Path) -> None:
    """The whole document loaded took 3.3 GB resident for a 756 MB export; read a job at a
    time, the peak is a few pieces of text whatever the export's size. The document is the
    benchmark's (docs/performance.md): its every finished job a run of its own."""
    path = tmp_path / "big.json"
    write_sacct_json(path, 24 * sacct_json.READ_PIECE_BYTES,
                     slurm("sarc-generated-sacct-json-v0.0.43-mila_1714003200.json"))
    tracemalloc.start()
    try:
        keys = [item.key for item in parse(path, IngestOptions())
                if isinstance(item, RunRecord)]
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(keys) > 1000 and len(set(keys)) == len(keys)
    assert peak_bytes < 8 * sacct_json.READ_PIECE_BYTES

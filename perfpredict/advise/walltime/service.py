"""What ``train`` and ``advise walltime`` call: the advisor fitted on, saved in and loaded
from a store, the jobs to advise read from a file, and the advice over that file with its
summary."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfpredict.advise.walltime.advisor import (
    QUEUE_COLUMNS,
    check_kill_risk,
    check_time_min_kill_risk,
)
from perfpredict.advise.walltime.features import JOB_COLUMNS
from perfpredict.advise.walltime.systems import SYSTEMS_ARTIFACT_KIND, SystemAdvisors
from perfpredict.counts import python_number
from perfpredict.deprecation import renamed_keyword
from perfpredict.errors import BadInputError, NotTrainedError
from perfpredict.ingest.registry import JOB_FORMATS
from perfpredict.store.handle import takes_store

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from perfpredict.catalog import Queue, SystemSpec
    from perfpredict.ingest.records import ParsedItem
    from perfpredict.store import Store


@renamed_keyword("apps", "app")
@takes_store
def fit_walltime_advisor(store: Store, app: str | list[str] | None = None,
                         **params: Any) -> SystemAdvisors:
    """Fit an advisor per system on the store's scheduler jobs (of ``app``, one
    application's name or several, when given)."""
    return SystemAdvisors(**params).fit(jobs_frame(store, app))


@renamed_keyword("apps", "app")
def jobs_frame(store: Store, app: str | list[str] | None = None) -> pd.DataFrame:
    """The columns the advisor reads (:data:`JOB_COLUMNS`) of every run with a submit
    time (of the applications ``app`` names, found as every command finds them:
    :func:`~perfpredict.store.queries.resolve_apps`), read in chunks with repeated texts
    as categories.

    Reading every column as Python tuples (``runs_frame``) peaked at 2.1 GB for a million
    jobs; this keeps one chunk of tuples at a time.
    """
    import pandas as pd
    from sqlalchemy import select

    from perfpredict.store.queries import resolved_app_names
    from perfpredict.store.schema import runs

    names = list(JOB_COLUMNS)
    query = select(*[runs.c[name] for name in names]).where(runs.c.submit_epoch_s.is_not(None))
    if wanted := resolved_app_names(store, app):
        query = query.where(runs.c.app.in_(wanted))
    texts = ("system", "user", "account", "app")
    chunks = []
    with store.engine.connect() as conn:
        result = conn.execution_options(stream_results=True).execute(query.order_by(runs.c.id))
        while rows := result.fetchmany(100_000):
            chunk = pd.DataFrame.from_records([tuple(row) for row in rows], columns=names)
            chunks.append(chunk.astype({name: "category" for name in texts}))
    if not chunks:
        return pd.DataFrame(columns=names)
    return pd.concat(chunks, ignore_index=True).astype(
        {name: "object" for name in texts})


def save_walltime_advisor(store: Store, advisors: SystemAdvisors) -> None:
    """Store the advisors in the artifacts table (newest wins)."""
    from perfpredict.store.artifacts import save_artifact

    save_artifact(store, json.loads(advisors.to_json()))


def load_walltime_advisor(store: Store) -> SystemAdvisors | None:
    """The newest saved advisors, or None when ``train`` has not saved any (an advisor
    of all systems pooled, as ``train`` saved before, is not read: fitted anew)."""
    from perfpredict.store.artifacts import load_latest_artifact

    document = load_latest_artifact(store.url, SYSTEMS_ARTIFACT_KIND)
    return None if document is None else SystemAdvisors.from_document(document)


#: The formats ``advise walltime --input-format`` takes: every scheduler's. Jobs about to
#: run come as a sacct dump (``-P`` or ``--json``) of PENDING jobs, or a CSV table;
#: finished jobs in any of them are a backtest of the advice, each job advised from those
#: that ended before it was submitted.
INPUT_FORMATS = JOB_FORMATS


def input_format_option(input_format: str) -> str:
    """How a parser's fix tells ``advise walltime`` to read its input as
    ``input_format`` (:attr:`~perfpredict.ingest.records.IngestOptions.read_as`): its
    --input-format, or ingest's command, for history, where it takes no such input.

    >>> input_format_option("sacct")
    '--input-format sacct'
    """
    if input_format in INPUT_FORMATS:
        return f"--input-format {input_format}"
    return (f"'perfpredict ingest {input_format}' (as history: advise walltime reads its "
            f"--input as {', '.join(INPUT_FORMATS[:-1])} or {INPUT_FORMATS[-1]})")


def read_jobs(path: str | os.PathLike[str], input_format: str | None, system: str | None,
              swf_allow_extra_fields: bool = False, timezone: str = "UTC") -> pd.DataFrame:
    """Jobs to advise, read with the ingest parser of ``input_format`` (not stored; None:
    told by the file's name or content), with ingest's options. Jobs not run yet are
    read too: sacct's PENDING jobs, which ingest skips, are what a walltime is advised
    for. A stream (``squeue ... | perfpredict advise walltime --input -``) is read from a
    temporary copy, as ingest reads one (:func:`~perfpredict.ingest._text.lines.spooled`),
    and errors name it as given. ``path`` is a text or a Path; a DataFrame of jobs, the
    likeliest in a notebook, was a TypeError ("expected str, bytes or os.PathLike
    object")."""
    return _jobs_read(path, input_format, system, swf_allow_extra_fields, timezone)[0]


#: What ``advise walltime`` says of a scheduler's log whose last line has no newline
#: (:func:`_jobs_read`), as ingest says it
#: (:data:`~perfpredict.ingest.pipeline.LAST_LINE_LEFT`), which reads it once whole.
LAST_LINE_NOT_ADVISED = ("the last line has no newline: not read, as the scheduler may "
                         "still be writing it")


def _jobs_read(path: str | os.PathLike[str], input_format: str | None, system: str | None,
               swf_allow_extra_fields: bool, timezone: str) -> tuple[pd.DataFrame, list[str]]:
    """:func:`read_jobs`, and the warnings about the file read (a last line left), each
    naming the file as given."""
    from perfpredict.ingest._text.lines import is_stream, read_through, stream_name

    if not isinstance(path, str | os.PathLike):
        raise BadInputError(f"the jobs to advise are named by their file's path, not a "
                            f"{type(path).__name__}; write jobs held in Python to a CSV "
                            "file first (frame.to_csv('jobs.csv', index=False)) and name "
                            "that file")
    with read_through(Path(path)) as readable:
        jobs, warnings = _parsed_jobs(readable, input_format, system, swf_allow_extra_fields,
                                      timezone, stream=is_stream(Path(path)))
    return jobs, [f"{stream_name(Path(path))}: {warning}" for warning in warnings]


def _parsed_jobs(path: Path, input_format: str | None, system: str | None,
                 swf_allow_extra_fields: bool, timezone: str, stream: bool,
                 ) -> tuple[pd.DataFrame, list[str]]:
    """The jobs of the file ``path`` (:func:`read_jobs`), a stream's copy where
    ``stream``, read as ingest reads it: a stream of sacct's output that ends inside a
    line is refused (:func:`~perfpredict.ingest.pipeline.whole_stream`), where the cut
    line was advised as a job with a value cut short; a scheduler's log whose last line
    has no newline (:data:`~perfpredict.ingest.registry.LIVE_LOG_FORMATS`, a plain file
    or a stream) is read up to it, with a warning, where it was refused with ingest's
    fix ("ingest the log itself"), and its first line, the rest of a record cut by the
    log's rotation, is left with a warning
    (:func:`~perfpredict.ingest.pipeline.rotated_tail_left`)."""
    import pandas as pd

    from perfpredict.ingest._text.lines import drop_unfinished_line, ends_inside_line, spooled
    from perfpredict.ingest.pipeline import rotated_tail_left, whole_stream
    from perfpredict.ingest.records import IngestOptions
    from perfpredict.ingest.registry import (
        LIVE_LOG_FORMATS,
        PIPED_COMMAND_FORMATS,
        get_parser,
        refuse_job_script,
        sniff_format,
    )

    options = IngestOptions(system=system, require_runtime=False, timezone=timezone,
                            swf_allow_extra_fields=swf_allow_extra_fields,
                            read_as=input_format_option)
    _refuse_darshan_log(path, input_format)
    refuse_job_script(path, options)
    input_format = input_format or sniff_format(path, INPUT_FORMATS)
    parse = get_parser(input_format)
    options.validate()  # as ingest does: system=5 was ignored, timezone=5 a TypeError
    options.check_format(input_format)
    warnings: list[str] = []
    with ExitStack() as stack:
        readable = path
        if input_format in LIVE_LOG_FORMATS and ends_inside_line(path):
            readable = stack.enter_context(spooled(path))
            drop_unfinished_line(readable)
            warnings.append(LAST_LINE_NOT_ADVISED)
        items = rotated_tail_left(parse(readable, options), readable, input_format, warnings)
        if stream and input_format in PIPED_COMMAND_FORMATS:
            items = whole_stream(items, path)
        try:
            rows = _job_rows(path, items, input_format, system)
        except BadInputError as exc:
            if exc.path != str(readable) or readable == path:
                raise
            raise exc.naming(path) from exc
    if not rows:
        raise BadInputError(f"no jobs in the file (read as {input_format}); check the path "
                            "and --input-format", path=path)
    jobs = pd.DataFrame(rows)
    # A job a log records twice (PBS's repeated E record, LSF's JOB_FINISH written again)
    # is one job, advised and counted as history once, the first record kept as ingest
    # stores it (:func:`~perfpredict.ingest.records.job_key`).
    repeated = jobs["key"].notna() & jobs.duplicated(["system", "key"])
    return jobs[~repeated].reset_index(drop=True), warnings


def _job_rows(path: Path, items: Iterable[ParsedItem], input_format: str,
              system: str | None) -> list[dict[str, Any]]:
    """A row per job of ``items``, parsed from ``path``; the first bad record refuses
    the file, as the other format's where its first record is one."""
    from dataclasses import asdict

    from perfpredict.ingest.records import BadRecord
    from perfpredict.ingest.registry import other_format_fix

    rows: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, BadRecord):
            other = None if rows else other_format_fix(path, input_format, item.reason,
                                                        input_format_option)
            raise BadInputError(other or item.reason, path=path, line_no=item.line_no)
        row = asdict(item)
        row["system"] = item.system or system
        cpus = (item.extra or {}).get("cpus")
        if row["total_ranks"] is None and cpus:
            # a job not run has no steps, which give a sacct job's ranks in the history:
            # its CPUs stand in, the ranks of the common one-CPU-per-rank MPI job (without
            # them, a PENDING dump was advised as jobs of no known size: gromacs on two
            # nodes predicted 4,297 s where the same jobs as CSV read 26,846 s)
            row["total_ranks"] = cpus
        rows.append(row)
    return rows


def _refuse_darshan_log(path: Path, input_format: str | None) -> None:
    """Refuse a Darshan log (or a file to read as one) as jobs to advise: it holds one
    job's I/O counters, not jobs with the walltime each requests, so it has nothing to
    advise. Its bytes read as a jobs file were "binary, not text", with the fix to
    'perfpredict ingest darshan', which stores the I/O as history and advises nothing."""
    from perfpredict.ingest.registry import JOBS_CSV_FIX, is_darshan_log

    if input_format != "darshan" and not is_darshan_log(path):
        return
    raise BadInputError(
        "the file is a Darshan log: it holds a job's I/O counters, not jobs with the "
        "walltime each requests, so it has nothing to advise; give the jobs as the "
        "scheduler's accounting (sacct's output of pending jobs, read with "
        f"{input_format_option('sacct')}), or {JOBS_CSV_FIX} and read that with "
        f"{input_format_option('csv')}", path=path)


@dataclass(frozen=True)
class WalltimeAdvice:
    """What ``advise walltime`` answers: one row per job, and a summary a person reads."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    #: What a person must know of how the input was read, each naming the file (a last
    #: line not read: :data:`LAST_LINE_NOT_ADVISED`; a first line left as the rest of a
    #: record cut by the log's rotation).
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # what a notebook shows of advise_walltime(...): the summary, where the
        # dataclass's repr wrote every job's row too (a center's file of 10,000 jobs,
        # megabytes); pandas.DataFrame(advice.rows) is the table of them
        warned = f", warnings={self.warnings!r}" if self.warnings else ""
        return f"WalltimeAdvice(n_rows={len(self.rows)}, summary={self.summary!r}{warned})"


def summarize(rows: list[dict[str, Any]], kill_risk: float,
              n_without_submit_time: int = 0,
              no_queue_job_ids: list[Any] | None = None,
              time_min_kill_risk: float | None = None) -> dict[str, Any]:
    """The advice over a file at a glance: expected kill share, the allocation reserved
    against the users' requests, how many jobs were kept at their request and why, how
    many had no submit time (each advised as if submitted now, on the whole history,
    its own log's later jobs too: said, since a replayed log's advice then differs), how
    many were capped by their queue limit, and the jobs that may pend forever: those
    whose request exceeds every queue limit for their node count, and those of a node
    count no queue takes (``no_queue_job_ids``), each with the first job's id. With
    ``time_min_kill_risk``, how many jobs' time-min lies below their walltime (a
    time-min equal to it lets the scheduler cut nothing), and the share of jobs killed
    if every job were given only its time-min (None without one).

    Reservations are node-hours when every job with a request gives its nodes, else
    processor-hours (SWF logs give processors only).

    A pending array remainder (``4190105_[1-3]``, one row advised for its tasks alike)
    counts as the jobs it stands for, in every count, share and reservation here.
    """
    def jobs(subset: Iterable[dict[str, Any]]) -> int:
        return _n_jobs(r["job_id"] for r in subset)

    def job_sum(value: Callable[[dict[str, Any]], float],
                subset: Iterable[dict[str, Any]]) -> float:
        return sum(value(r) * _n_jobs([r["job_id"]]) for r in subset)

    n_jobs = jobs(rows)
    with_request = [r for r in rows if r["requested_walltime_s"] is not None]
    unit = "node" if all(r["nodes"] for r in with_request) else "processor"
    size = "nodes" if unit == "node" else "total_ranks"
    requested_h = job_sum(lambda r: r["requested_walltime_s"] * (r[size] or 1),
                          with_request) / 3600
    advised_h = job_sum(lambda r: r["walltime_s"] * (r[size] or 1), with_request) / 3600
    kept = [r for r in with_request if r["capped_at_request"]]
    # a queue limit at the request keeps a job there, whatever else would have
    by_queue = [r for r in kept if r["capped_by_queue"] is not None]
    return {
        "n_jobs": n_jobs,
        "kill_risk": kill_risk,
        "expected_kill_share": round(job_sum(lambda r: r["kill_probability"], rows)
                                     / max(n_jobs, 1), 4),
        "reserved_unit": f"{unit}-hours",
        "requested_hours": round(requested_h, 1),
        "advised_hours": round(advised_h, 1),
        "freed_share": round(1.0 - advised_h / requested_h, 4) if requested_h else None,
        "n_kept_at_request": jobs(kept),
        "n_kept_at_queue_limit": jobs(by_queue),
        "n_kept_request_likely_too_short": jobs(r for r in kept if r["request_likely_too_short"]
                                                and r["capped_by_queue"] is None),
        "n_request_likely_too_short": jobs(r for r in rows if r["request_likely_too_short"]),
        "n_above_request": jobs(r for r in rows if r["requested_walltime_s"] is not None
                                and r["walltime_s"] > r["requested_walltime_s"]),
        "n_without_request": n_jobs - jobs(with_request),
        "n_without_submit_time": n_without_submit_time,
        "n_capped_by_queue": jobs(r for r in rows if r["capped_by_queue"] is not None),
        **_first_of("request_above_queue_limit",
                    [r["job_id"] for r in rows if r["request_above_queue_limit"]]),
        **_first_of("nodes_no_queue_takes", no_queue_job_ids or []),
        "time_min_kill_risk": time_min_kill_risk,
        "n_time_min_shorter": (None if time_min_kill_risk is None else
                               jobs(r for r in rows if r["time_min_s"] < r["walltime_s"])),
        "time_min_expected_kill_share": (
            None if time_min_kill_risk is None else
            round(job_sum(lambda r: r["time_min_kill_probability"], rows) / max(n_jobs, 1), 4)),
    }


def _n_jobs(job_ids: Iterable[Any]) -> int:
    """How many jobs ``job_ids`` stand for: a pending array remainder its tasks."""
    from perfpredict.ingest.sacct.rows import array_task_count

    return sum(array_task_count(str(job_id)) for job_id in job_ids)


def _first_of(what: str, job_ids: list[Any]) -> dict[str, Any]:
    """How many jobs ``what`` says of (:func:`_n_jobs`), and the first one's id (None
    when none)."""
    return {f"n_{what}": _n_jobs(job_ids), f"first_{what}": job_ids[0] if job_ids else None}


@takes_store
def advise_walltime(store: Store, path: str | Path, *, input_format: str | None = None,
                    kill_risk: float = 0.05, system: str | None = None,
                    allow_above_request: bool = False,
                    time_min_kill_risk: float | None = None,
                    swf_allow_extra_fields: bool = False,
                    timezone: str = "UTC") -> WalltimeAdvice:
    """What ``perfpredict advise walltime`` prints: one row per job in ``path``, and a
    summary; with ``time_min_kill_risk``, a time-min per job too
    (:meth:`~perfpredict.advise.walltime.advisor.WalltimeAdvisor.advise`).

    Uses the advisor ``train`` saved, or fits one on the store when none is saved. The
    history a job's advice reads is the store plus the finished jobs of ``path`` itself
    that the store does not hold (a replayed log is advised as if its jobs had been
    ingested as they finished); as always, only runs that ended before the job's
    submission count.
    """
    import pandas as pd

    check_kill_risk(kill_risk)
    check_time_min_kill_risk(time_min_kill_risk, kill_risk)
    # as Python's numbers: every row echoes them, and numpy's made json.dumps fail
    kill_risk, time_min_kill_risk = python_number(kill_risk), python_number(time_min_kill_risk)
    from perfpredict.store.writer import SystemNames

    jobs, warnings = _jobs_read(path, input_format, system, swf_allow_extra_fields, timezone)
    stored = jobs_frame(store)
    known_systems = set(stored["system"].dropna())
    if not known_systems:
        # nothing to learn from, whatever the file says: naming its system as unknown read
        # as a typo in it ("its systems: none yet"), exit 2, in a store of data sets
        raise NotTrainedError(
            "walltime advice learns from the store's past scheduler jobs (runs with a "
            "submit time), and it holds none: data sets and CSV results without "
            "submit_time are not jobs; ingest the system's accounting first ('perfpredict "
            "ingest' sacct, sacct-json, jobcomp, swf, pbs, lsf or sge)")
    # each job under the system ingest stored its history under: a sacct dump's Cluster
    # "frontier" is the catalog's Frontier in the store, and was "no history" here
    names = SystemNames.of(store)
    jobs["system"] = jobs["system"].map(lambda name: names.canonical(name, known_systems),
                                        na_action="ignore")
    hint = ", ".join(sorted(known_systems))
    unnamed = jobs["system"].isna()
    if unnamed.all():
        raise BadInputError(f"the file does not name the system its jobs run on; pass "
                            f"--system NAME (the store's systems: {hint})", path=path)
    if unnamed.any():
        # a jobcomp log whose older lines lack Cluster= was told "the file does not name
        # the system" while its other lines named three: the line is the one to look at
        line_no = jobs.loc[unnamed, "line_no"].iloc[0]
        named = ", ".join(sorted(set(jobs["system"].dropna())))
        raise BadInputError(
            f"this job names no system, where the file's other jobs do ({named}); pass "
            f"--system NAME for the jobs without one (the store's systems: {hint})",
            path=path, line_no=None if pd.isna(line_no) else int(line_no))
    unknown = jobs[~jobs["system"].isin(known_systems)]
    if not unknown.empty:
        first = unknown.iloc[0]
        # --system names only the jobs the file does not: where the file names them,
        # another --system changes nothing, and the line to correct is the fix (a typo
        # such as 'demo-cluste' was told "the file names 'demo-cluste' itself", no line)
        named_by_option = first["system"] == system
        fix = ("pass the --system its history was ingested with" if named_by_option
               else "correct the system the file gives there")
        line_no = first["line_no"]
        raise BadInputError(
            f"jobs for system {first['system']!r} have no history in the store (its "
            f"systems: {hint}); {fix}, or ingest that system's accounting first", path=path,
            line_no=None if named_by_option or pd.isna(line_no) else int(line_no))
    advisor = load_walltime_advisor(store) or SystemAdvisors().fit(stored)
    finished = jobs[jobs["runtime_s"].notna()]
    finished = finished[~_stored_mask(store, finished)]
    history = pd.concat([stored, finished.reindex(columns=stored.columns)], ignore_index=True)
    jobs = with_queue_limits(store, jobs)
    rows = advisor.advise(history, jobs, kill_risk, allow_above_request=allow_above_request,
                          time_min_kill_risk=time_min_kill_risk)
    return WalltimeAdvice(rows, summarize(
        rows, kill_risk, n_without_submit_time=int(jobs["submit_epoch_s"].isna().sum()),
        no_queue_job_ids=[r["job_id"] for r in rows if r["no_queue_takes_nodes"]],
        time_min_kill_risk=time_min_kill_risk), warnings)


def with_queue_limits(store: Store, jobs: pd.DataFrame) -> pd.DataFrame:
    """``jobs`` with :data:`QUEUE_COLUMNS`: what caps their advice, and whether no queue
    takes a job's node count (it may pend forever; None where that cannot be told: no
    catalog entry with queues, no node count).

    Per job, the queue of its system's catalog entry that allows the longest jobs of its
    node count, and that queue's limit: the entry ``advise`` reads
    (:func:`~perfpredict.catalog.get_system`, the store's name matched to the catalog's
    names and aliases), the queues that take the node count and the longest of them as
    :func:`~perfpredict.advise.queues.choose_queue` finds them. Left empty where the
    system has no entry with queues (add one with 'perfpredict systems add FILE.toml'),
    where the job gives no node count (SWF logs give processors), and where no queue takes
    its node count.
    """
    from perfpredict.advise.queues import longest_queue
    from perfpredict.catalog import get_system

    specs = {name: get_system(store, name) for name in dict.fromkeys(jobs["system"])}
    names: list[str | None] = []
    limits_s: list[float | None] = []
    no_queue: list[bool | None] = []
    for system, nodes in zip(jobs["system"], jobs["nodes"], strict=True):
        accepting = _accepting_queues(specs[system], nodes)
        no_queue.append(None if accepting is None else not accepting)
        longest = longest_queue(accepting) if accepting else None
        names.append(longest.name if longest else None)
        limits_s.append(longest.max_walltime_s if longest else None)
    return jobs.assign(**dict(zip(QUEUE_COLUMNS, (names, limits_s, no_queue), strict=True)))


def _accepting_queues(spec: SystemSpec | None, nodes: float | None) -> list[Queue] | None:
    """The queues of ``spec`` that take a job of ``nodes`` nodes; None when that cannot be
    told (no catalog entry with queues, no node count)."""
    import math

    from perfpredict.advise.queues import accepting_queues

    if spec is None or not spec.queues or nodes is None or not nodes > 0:  # NaN too
        return None
    return accepting_queues(spec, math.ceil(nodes))


def _stored_mask(store: Store, jobs: pd.DataFrame) -> np.ndarray:
    """Which of ``jobs`` the store already holds, by (system, job id)."""
    import numpy as np
    from sqlalchemy import select

    from perfpredict.store.schema import runs

    ids = sorted({str(j) for j in jobs["job_id"].dropna()})
    stored: set[tuple[str, str]] = set()
    with store.engine.connect() as conn:
        for lo in range(0, len(ids), 500):
            query = select(runs.c.system, runs.c.job_id).where(
                runs.c.job_id.in_(ids[lo:lo + 500]))
            stored.update((str(a), str(b)) for a, b in conn.execute(query))
    return np.array([(str(a), str(b)) in stored
                     for a, b in zip(jobs["system"], jobs["job_id"], strict=True)], dtype=bool)

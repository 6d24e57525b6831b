"""One stored run per scheduler job: the cluster leaves the key, and the runs a job was
stored as twice become one.

Slurm's readers keyed a job ``system|cluster:id`` where the file had a ``Cluster``
column, ``system|:id`` where it had none, and a Darshan log keyed its job
``system|:id``: the same job read from a dump with and without ``Cluster``, or from its
Darshan log before its accounting, was stored twice (or, without ``Cluster``, its
accounting was taken for a duplicate of the log and dropped, which no migration can
bring back: ``ingest --reread`` reads that file again). The cluster is the run's system
already, so every job is now keyed ``system|:id``.

Here each ``system|cluster:id`` key becomes ``system|:id``. Where that key is stored
already, the job's records are merged: the scheduler's latest incarnation (the later
start, else the first stored, as ingest keeps it) is kept, with the I/O bytes and
details a Darshan log attached to either, and, where it gives none, the ranks of a
record merged into it (a log's ``nprocs``). A Darshan log stored alone joins the job of
its id it ran inside, as it would have attached had it come second (Grid Engine's jobs,
keyed ``id@submit``, too); one that ran inside none is keyed ``system|:id#darshan@start``,
apart from its id's jobs, as a log stored alone is keyed now. The rules are frozen here
as of this revision, not imported from the ingest code, which may change after it.

The ranks were dropped with the log's row at first (scheduler accounting without a
task count, PBS's or LSF's, gave the merged job none). The fix is made here rather than
in a revision of its own: such a revision could only merge again, which finds nothing
on a store this one upgraded (merging is idempotent: no old key and no log beside a job
it ran inside is left), while the dropped rows, and their ranks, are gone from it. A
store upgraded before the fix gets its jobs' ranks back by reading the Darshan logs
again (``ingest darshan LOG --system NAME --reread``: a log held already gives its job
the ranks it lacks), as a job whose accounting an earlier release dropped is read again.

Revision ID: 0005_one_key_per_job
Revises: 0004_run_variant
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005_one_key_per_job"
down_revision = "0004_run_variant"
branch_labels = None
depends_on = None

#: How far (seconds) a Darshan log's start may lie outside its job's run.
CLOCK_SLACK_S = 60.0
#: Rows deleted or updated per statement.
CHUNK = 500

runs = sa.table(
    "runs", sa.column("id", sa.Integer), sa.column("natural_key", sa.String),
    sa.column("system", sa.String), sa.column("job_id", sa.String),
    sa.column("batch_id", sa.Integer), sa.column("start_epoch_s", sa.Float),
    sa.column("end_epoch_s", sa.Float), sa.column("io_bytes", sa.Float),
    sa.column("total_ranks", sa.Integer), sa.column("extra", sa.JSON))
batches = sa.table("ingest_batches", sa.column("id", sa.Integer),
                   sa.column("format", sa.String))


def _old_cluster_key(row: Any) -> bool:
    """Whether ``row`` is keyed ``system|cluster:id`` (a cluster before its job id)."""
    prefix, suffix = f"{row.system}|", f":{row.job_id}"
    key: str = row.natural_key
    if not (key.startswith(prefix) and key.endswith(suffix)):
        return False
    cluster = key[len(prefix):len(key) - len(suffix)]
    return bool(cluster) and not set(cluster) & set(":|@#")


def _kept_first(job: _Job) -> tuple[bool, float, int]:
    """Sort key, best first when reversed: the scheduler's record before a Darshan
    log's, then the latest start, then the first stored (as ingest keeps a record met
    again that started when the stored one did)."""
    return (not job.darshan, job.start_epoch_s if job.start_epoch_s is not None
            else float("-inf"), -job.id)


def _ran_inside(log: _Job, job: _Job) -> bool:
    """Whether the Darshan log ``log`` started during ``job`` (a job id reused later is
    another job); a time not known decides nothing."""
    if log.start_epoch_s is None:
        return True
    if job.start_epoch_s is not None and log.start_epoch_s < job.start_epoch_s - CLOCK_SLACK_S:
        return False
    return job.end_epoch_s is None or log.start_epoch_s <= job.end_epoch_s + CLOCK_SLACK_S


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i:i + CHUNK] for i in range(0, len(ids), CHUNK)]


class _Job:
    """A stored run, and what the upgrade decides for it."""

    __slots__ = ("id", "system", "job_id", "start_epoch_s", "end_epoch_s", "darshan",
                 "natural_key", "new_key", "gone")

    def __init__(self, row: Any, log_name: str | None) -> None:
        self.id, self.system, self.job_id = row.id, row.system, row.job_id
        self.start_epoch_s, self.end_epoch_s = row.start_epoch_s, row.end_epoch_s
        self.darshan = log_name is not None
        self.natural_key: str = row.natural_key
        self.new_key = self.natural_key
        if row.job_id is not None and log_name is not None:
            # A log's own key, apart from its job's: its id, a mark no scheduler's key
            # has, and when it started (else the log's name).
            self.new_key = f"{row.system}|:{row.job_id}#darshan@" + (
                f"{row.start_epoch_s:.0f}" if row.start_epoch_s is not None else log_name)
        elif row.job_id is not None and _old_cluster_key(row):
            self.new_key = f"{row.system}|:{row.job_id}"
        self.gone = False


def upgrade() -> None:
    conn = op.get_bind()
    darshan_batches = sa.select(batches.c.id).where(batches.c.format == "darshan")
    log_names = {row.id: str(((row.extra or {}).get("darshan") or {}).get("log", ""))
                 for row in conn.execute(sa.select(runs.c.id, runs.c.extra)
                                         .where(runs.c.batch_id.in_(darshan_batches)))}
    jobs = [_Job(row, log_names.get(row.id)) for row in conn.execute(
        sa.select(runs.c.id, runs.c.natural_key, runs.c.system, runs.c.job_id,
                  runs.c.start_epoch_s, runs.c.end_epoch_s))]
    by_key: dict[str, list[_Job]] = {}
    for job in jobs:
        by_key.setdefault(job.new_key, []).append(job)
    merges: dict[int, list[_Job]] = {}  # kept run id -> the runs merged into it
    for group in by_key.values():
        if len(group) > 1:
            kept, *others = sorted(group, key=_kept_first, reverse=True)
            merges[kept.id] = others
            for job in others:
                job.gone = True
    del by_key
    scheduler_jobs: dict[tuple[str, str], list[_Job]] = {}
    for job in jobs:
        if job.job_id is not None and not job.darshan and not job.gone:
            scheduler_jobs.setdefault((job.system, job.job_id), []).append(job)
    for log in jobs:
        if log.darshan and not log.gone:
            host = next((job for job in scheduler_jobs.get((log.system, log.job_id), ())
                         if _ran_inside(log, job)), None)
            if host is not None:
                merges.setdefault(host.id, []).append(log)
                log.gone = True
    _merge(conn, merges)
    for ids in _chunks([job.id for job in jobs if job.gone]):
        conn.execute(runs.delete().where(runs.c.id.in_(ids)))
    rekeyed = [job for job in jobs if not job.gone and job.new_key != job.natural_key]
    # The logs first: they leave the keys "system|:id" their jobs take.
    for job in rekeyed:
        if job.darshan:
            conn.execute(runs.update().where(runs.c.id == job.id)
                         .values(natural_key=job.new_key))
    for ids in _chunks([job.id for job in rekeyed if not job.darshan]):
        conn.execute(runs.update().where(runs.c.id.in_(ids))
                     .values(natural_key=runs.c.system + "|:" + runs.c.job_id))


def _merge(conn: Any, merges: dict[int, list[_Job]]) -> None:
    """Each kept run takes the I/O bytes and Darshan details of the runs merged into it
    (a Darshan log's, or those a log attached to the job's other record), and where it
    has no ranks, the first merged run's that has (its twin's, else a log's)."""
    ids = list(merges) + [job.id for merged in merges.values() for job in merged]
    stored: dict[int, Any] = {}
    for chunk in _chunks(ids):
        stored.update((row.id, row) for row in conn.execute(
            sa.select(runs.c.id, runs.c.io_bytes, runs.c.total_ranks, runs.c.extra)
            .where(runs.c.id.in_(chunk))))
    for run_id, merged in merges.items():
        kept = stored[run_id]
        io_bytes, extra = kept.io_bytes, dict(kept.extra or {})
        total_ranks = next((ranks for ranks in [kept.total_ranks, *(
            stored[job.id].total_ranks for job in merged)] if ranks is not None), None)
        for job in merged:
            found = stored[job.id]
            details = (found.extra or {}).get("darshan")
            if details is None or ("darshan" in extra and not job.darshan):
                continue
            io_bytes, extra["darshan"] = found.io_bytes, details
        if (io_bytes, extra, total_ranks) != (kept.io_bytes, kept.extra or {},
                                              kept.total_ranks):
            conn.execute(runs.update().where(runs.c.id == run_id)
                         .values(io_bytes=io_bytes, extra=extra, total_ranks=total_ranks))

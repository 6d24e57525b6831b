"""A scheduler job is keyed by its id and its submit time, and an array task (or a het
job's component) by the id sacct's JobID shows (``123_4``, ``176+0``), not its JobIDRaw.

Keyed by the id alone (``system|:id``), a later job of a reused id (a slurmdbd reset, a
new cluster of the same name, PBS's and LSF's ids wrapping, a second trace of one
machine) replaced the stored job: an earlier run silently lost, which no upgrade can
bring back (``ingest --reread`` of its file stores it again). Keyed by its JobIDRaw, an
array task read from exports with and without that column was stored twice.

Here each job's key becomes the one ingest gives it now: ``system|:id@submit`` (whole
epoch seconds) where its submit time is stored, the id an array task's or het
component's where its extra fields name them; an SWF job's ``system|number`` (a partial
execution's ``number.n``) takes ``@submit`` too. Grid Engine's jobs were keyed so
already; content keys and Darshan logs' keys stay. Runs that take one key were the same
job stored twice (an array task under both its ids): the one that keeps its key, else
the one with the JobIDRaw (which its Darshan log is found by), else the first stored, is
kept, with the Darshan I/O and ranks of the others where it has none. The rules are
frozen here as of this revision, not imported from the ingest code.

Revision ID: 0006_job_submit_key
Revises: 0005_one_key_per_job
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0006_job_submit_key"
down_revision = "0005_one_key_per_job"
branch_labels = None
depends_on = None

#: Rows updated per statement.
CHUNK = 500

runs = sa.table(
    "runs", sa.column("id", sa.Integer), sa.column("natural_key", sa.String),
    sa.column("system", sa.String), sa.column("job_id", sa.String),
    sa.column("submit_epoch_s", sa.Float), sa.column("start_epoch_s", sa.Float),
    sa.column("io_bytes", sa.Float), sa.column("total_ranks", sa.Integer),
    sa.column("extra", sa.JSON))

_SWF_PARTIAL = re.compile(r"\.\d+")
_DIGITS = re.compile(r"\d+")


def _key_id(row: Any) -> str:
    """The id sacct's JobID shows: an array task's or het component's, else the job's."""
    extra = row.extra if isinstance(row.extra, dict) else {}
    for job, index, joiner in (("array_job_id", "array_task_id", "_"),
                               ("het_job_id", "het_job_offset", "+")):
        if extra.get(job) not in (None, "") and extra.get(index) not in (None, ""):
            return f"{extra[job]}{joiner}{extra[index]}"
    return str(row.job_id)


def _new_key(row: Any) -> str:
    """The key ingest gives the run now, or its own where it is no job's plain key."""
    prefix, key = f"{row.system}|", row.natural_key
    if row.job_id is None or not key.startswith(prefix):
        return key
    own = key[len(prefix):]
    submitted = f"@{row.submit_epoch_s:.0f}" if row.submit_epoch_s else ""
    if own == f":{row.job_id}":
        return f"{prefix}:{_key_id(row)}{submitted}"
    swf = own.startswith(row.job_id) and (
        own == row.job_id or _SWF_PARTIAL.fullmatch(own[len(row.job_id):]))
    return f"{prefix}{own}{submitted}" if swf else key


def _kept_first(row: Any) -> tuple[bool, bool, int]:
    """Sort key, best first: the run whose key stays, the one with the JobIDRaw (digits,
    as a Darshan log's job id), the first stored."""
    return (_new_key(row) == row.natural_key, bool(_DIGITS.fullmatch(row.job_id or "")),
            -row.id)


def upgrade() -> None:
    conn = op.get_bind()
    by_key: dict[str, list[Any]] = {}
    for row in conn.execute(sa.select(runs).where(runs.c.job_id.is_not(None))):
        by_key.setdefault(_new_key(row), []).append(row)
    changed: list[tuple[int, str]] = []
    gone: list[int] = []
    for new_key, group in by_key.items():
        kept, *others = sorted(group, key=_kept_first, reverse=True)
        if others:
            _merge(conn, kept, others)
            gone += [row.id for row in others]
        if kept.natural_key != new_key:
            changed.append((kept.id, new_key))
    del by_key
    for start in range(0, len(gone), CHUNK):
        conn.execute(runs.delete().where(runs.c.id.in_(gone[start:start + CHUNK])))
    rekey = (runs.update().where(runs.c.id == sa.bindparam("run_id"))
             .values(natural_key=sa.bindparam("new_key")))
    # First to a key no run has, so that no run takes a key another still holds (an
    # array task's ``:123_4`` from a dump without JobIDRaw, now ``:123_4@submit``).
    for temporary in (True, False):
        for start in range(0, len(changed), CHUNK):
            conn.execute(rekey, [
                {"run_id": run_id, "new_key": f"#upgrading#{run_id}" if temporary else new_key}
                for run_id, new_key in changed[start:start + CHUNK]])


def _merge(conn: Any, kept: Any, others: list[Any]) -> None:
    """``kept`` takes the Darshan I/O and ranks of ``others`` where it has none."""
    extra = dict(kept.extra or {}) if isinstance(kept.extra, dict) else {}
    io_bytes, total_ranks = kept.io_bytes, kept.total_ranks
    for row in others:
        other = row.extra if isinstance(row.extra, dict) else {}
        if "darshan" not in extra and "darshan" in other:
            extra["darshan"], io_bytes = other["darshan"], row.io_bytes
        total_ranks = total_ranks if total_ranks is not None else row.total_ranks
    if (extra, io_bytes, total_ranks) != (kept.extra or {}, kept.io_bytes, kept.total_ranks):
        conn.execute(runs.update().where(runs.c.id == kept.id)
                     .values(extra=extra, io_bytes=io_bytes, total_ranks=total_ranks))

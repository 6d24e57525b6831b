"""Each ingest batch's ``n_stored`` counts the runs of its file in the store again, and
the runs are indexed by batch.

``n_stored`` is what the writer sets at the end of a file's ingest: the number of runs
whose ``batch_id`` is the batch (``--reread`` counts them so, and a Darshan log's run
taken over by its job's accounting is taken off it). Migration 0006 merged the jobs a
store held twice (an array task under its JobIDRaw and under ``123_4``) and deleted the
runs merged away, but left them in their batches' ``n_stored``, which then counted runs
the store no longer had. The count is made again here, exactly. A run counted no longer
is a record of its file that the store holds as another file's run, which is what
``n_duplicates`` counts: it grows by as much.

The index ``ix_runs_batch``: every ingest counts its file's runs (twice with
``--reread``), which scanned the whole ``runs`` table: 26 ms in a SQLite store of 250,000
runs for a file of three jobs, growing with the store, against 0.003 ms by the index,
whose upkeep cost the 1M-line sacct ingest no measurable time (docs/performance.md).

Revision ID: 0007_runs_of_batch
Revises: 0006_job_submit_key
"""

from __future__ import annotations

from alembic import op

revision = "0007_runs_of_batch"
down_revision = "0006_job_submit_key"
branch_labels = None
depends_on = None

_RUNS_OF_BATCH = "(SELECT count(*) FROM runs WHERE runs.batch_id = ingest_batches.id)"


def upgrade() -> None:
    op.create_index("ix_runs_batch", "runs", ["batch_id"])
    # SET reads the row as it was, in every assignment, on SQLite and PostgreSQL alike.
    op.execute(
        f"UPDATE ingest_batches SET n_stored = {_RUNS_OF_BATCH}, n_duplicates = CASE "
        f"WHEN n_stored > {_RUNS_OF_BATCH} THEN n_duplicates + n_stored - {_RUNS_OF_BATCH} "
        f"ELSE n_duplicates END WHERE n_stored <> {_RUNS_OF_BATCH}")

"""Which batches' runs each ingested file's records met: ``batch_overlaps``.

A job two files held is stored once, from the file ingested first; the later file's
record of it is counted among its ``n_duplicates``. Deleting the first file leaves that
record unstored until ``ingest --reread`` of the later file stores it, so the delete
names the files to read again. Knowing only ``n_duplicates``, it named every later file
that met anything already stored: an SWF trace of another machine, a log that repeated
its own record, a dump that overlapped another file. Ingest now records, per file, the
batches whose runs its records met and how many.

A file ingested before this revision has no such record: it gets one row with
``met_batch_id`` NULL holding its ``n_duplicates`` (records it may have met of any
batch ingested before it), which ``--reread`` of it replaces with what it meets then.

Revision ID: 0009_batch_overlaps
Revises: 0008_batch_deletions
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_batch_overlaps"
down_revision = "0008_batch_deletions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "batch_overlaps",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("batch_id", sa.Integer, sa.ForeignKey("ingest_batches.id"), nullable=False),
        sa.Column("met_batch_id", sa.Integer),
        sa.Column("n_records", sa.Integer, nullable=False),
    )
    op.create_index("ix_batch_overlaps_batch", "batch_overlaps", ["batch_id"])
    op.create_index("ix_batch_overlaps_met", "batch_overlaps", ["met_batch_id"])
    op.execute("INSERT INTO batch_overlaps (batch_id, met_batch_id, n_records) "
               "SELECT id, NULL, n_duplicates FROM ingest_batches WHERE n_duplicates > 0")

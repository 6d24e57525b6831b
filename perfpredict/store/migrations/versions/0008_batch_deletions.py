"""A record of each ingest batch deleted, and batch ids that are never given twice.

``runs delete`` removes what a file stored and its batch record. Nothing then said that
the file had been there: a center's shared store kept no account of what left it, and
an estimate answered from a predictor trained on the deleted runs without knowing it.
``batch_deletions`` keeps one row per deleted batch (its file, checksum, format, system,
when it was ingested and deleted, and by whom), ``batch_deletion_apps`` how many runs of
each application it took.

On SQLite a new row's id was the largest id plus one, so the id of a deleted newest
batch came back with the next file: a script deleting ``--batch 7 --yes`` by an id it
had noted would delete another file. ``ingest_batches`` is rebuilt with SQLite's
``AUTOINCREMENT``, which never gives an id twice (its counter starts at the largest id
the store holds). PostgreSQL's sequences never did.

The rebuild drops the table the runs' and rejects' foreign keys name, which SQLite
allows only with its foreign key checks off (``database._migrate`` turns them off for
a migration and checks every key before it commits).

Revision ID: 0008_batch_deletions
Revises: 0007_runs_of_batch
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_batch_deletions"
down_revision = "0007_runs_of_batch"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("ingest_batches", recreate="always",
                                  table_kwargs={"sqlite_autoincrement": True}):
            pass
    op.create_table(
        "batch_deletions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("batch_id", sa.Integer, nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("system", sa.String(200)),
        sa.Column("ingested_epoch_s", sa.Float, nullable=False),
        sa.Column("deleted_epoch_s", sa.Float, nullable=False),
        sa.Column("deleted_by", sa.String(200)),
        sa.Column("n_runs", sa.Integer, nullable=False),
        sa.Column("n_rejects", sa.Integer, nullable=False),
    )
    op.create_index("ix_batch_deletions_deleted", "batch_deletions", ["deleted_epoch_s"])
    op.create_table(
        "batch_deletion_apps",
        sa.Column("deletion_id", sa.Integer, sa.ForeignKey("batch_deletions.id"),
                  primary_key=True),
        sa.Column("app", sa.String(300), primary_key=True),
        sa.Column("n_runs", sa.Integer, nullable=False),
    )

"""Trained predictors live in the store, so a center-wide store shares them.

Revision ID: 0002_artifacts
Revises: 0001_initial
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_artifacts"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "artifacts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("created_epoch_s", sa.Float, nullable=False),
        sa.Column("format_version", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("document", sa.Text, nullable=False),
    )
    op.create_index("ix_artifacts_kind_created", "artifacts", ["kind", "created_epoch_s"])

"""A runtime predictor's series entries get rows of their own, so an estimate reads the
entries of the application it asks about instead of parsing every series of a center's
store (52k series made a 56 MB document and a 4 s estimate).

Revision ID: 0003_artifact_series
Revises: 0002_artifacts
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_artifact_series"
down_revision = "0002_artifacts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "artifact_series",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("artifact_id", sa.Integer, sa.ForeignKey("artifacts.id"), nullable=False),
        sa.Column("app", sa.String(300), nullable=False),
        sa.Column("app_folded", sa.String(300), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
    )
    op.create_index("ix_artifact_series_app", "artifact_series",
                    ["artifact_id", "app_folded"])

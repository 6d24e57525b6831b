"""A run's ``variant`` (build, input parameters such as VASP's NCORE and KPAR, transport
scheme) joins its series key, so curves of one code on one system that differ only in
configuration are no longer mixed into one series. Existing runs have none (NULL).

Revision ID: 0004_run_variant
Revises: 0003_artifact_series
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_run_variant"
down_revision = "0003_artifact_series"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("variant", sa.String(300)))

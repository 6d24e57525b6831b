"""The first store: systems, ingest batches, runs and rejects.

Revision ID: 0001_initial
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "systems",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("nodes", sa.Integer),
        sa.Column("cores_per_node", sa.Integer),
        sa.Column("gpus_per_node", sa.Integer),
        sa.Column("peak_flops_per_node", sa.Float),
        sa.Column("mem_bw_bytes_per_s_per_node", sa.Float),
        sa.Column("node_memory_bytes", sa.Float),
        sa.Column("net_injection_bw_bytes_per_s", sa.Float),
        sa.Column("net_latency_s", sa.Float),
        sa.Column("fs_bw_bytes_per_s", sa.Float),
        sa.Column("charge_factor", sa.Float),
        sa.Column("allocation_unit", sa.String(100)),
        sa.Column("time_granularity_s", sa.Integer),
        sa.Column("details", sa.JSON),
        sa.Column("origin", sa.String(20), nullable=False),
    )
    op.create_table(
        "ingest_batches",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("system", sa.String(200)),
        sa.Column("started_epoch_s", sa.Float, nullable=False),
        sa.Column("n_records", sa.Integer, nullable=False),
        sa.Column("n_stored", sa.Integer, nullable=False),
        sa.Column("n_duplicates", sa.Integer, nullable=False),
        sa.Column("n_rejected", sa.Integer, nullable=False),
    )
    op.create_index(
        "ix_ingest_batches_sha_format", "ingest_batches", ["sha256", "format"], unique=True
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("natural_key", sa.String(400), nullable=False, unique=True),
        sa.Column("batch_id", sa.Integer, sa.ForeignKey("ingest_batches.id"), nullable=False),
        sa.Column("source_line", sa.Integer),
        sa.Column("app", sa.String(300), nullable=False),
        sa.Column("system", sa.String(200), nullable=False),
        sa.Column("problem_size", sa.String(300)),
        sa.Column("problem_size_num", sa.Float),
        sa.Column("nodes", sa.Integer),
        sa.Column("ranks_per_node", sa.Float),
        sa.Column("threads_per_rank", sa.Integer),
        sa.Column("total_ranks", sa.Integer),
        sa.Column("gpus", sa.Integer),
        sa.Column("io_bytes", sa.Float),
        sa.Column("runtime_s", sa.Float),
        sa.Column("requested_walltime_s", sa.Float),
        sa.Column("state", sa.String(40)),
        sa.Column("exit_code", sa.Integer),
        sa.Column("user", sa.String(200)),
        sa.Column("account", sa.String(200)),
        sa.Column("partition", sa.String(200)),
        sa.Column("job_id", sa.String(200)),
        sa.Column("submit_epoch_s", sa.Float),
        sa.Column("start_epoch_s", sa.Float),
        sa.Column("end_epoch_s", sa.Float),
        sa.Column("max_rss_bytes", sa.Float),
        sa.Column("censored", sa.Boolean, nullable=False),
        sa.Column("extra", sa.JSON),
    )
    op.create_index("ix_runs_series", "runs", ["app", "system", "problem_size"])
    op.create_index("ix_runs_submit", "runs", ["submit_epoch_s"])
    op.create_index("ix_runs_system_job", "runs", ["system", "job_id"])
    op.create_table(
        "rejects",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("batch_id", sa.Integer, sa.ForeignKey("ingest_batches.id"), nullable=False),
        sa.Column("line_no", sa.Integer),
        sa.Column("raw", sa.Text),
        sa.Column("reason", sa.Text, nullable=False),
    )

"""The store's schema, in one module. Every change here ships an Alembic migration in
``migrations/versions`` and bumps :data:`SCHEMA_REVISION`.

Units are in the column names: seconds (``_s``), bytes (``_bytes``), epoch seconds UTC
(``_epoch_s``). Timestamps are kept as epoch seconds because scheduler logs give them in
many zones and formats; normalising at the parser boundary keeps every query simple.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

from perfpredict.store.revision import SCHEMA_REVISION  # noqa: E402,F401  (re-exported)

metadata = MetaData()

systems = Table(
    "systems",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("nodes", Integer),
    Column("cores_per_node", Integer),
    Column("gpus_per_node", Integer),
    Column("peak_flops_per_node", Float),
    Column("mem_bw_bytes_per_s_per_node", Float),
    Column("node_memory_bytes", Float),
    Column("net_injection_bw_bytes_per_s", Float),
    Column("net_latency_s", Float),
    Column("fs_bw_bytes_per_s", Float),
    Column("charge_factor", Float),
    Column("allocation_unit", String(100)),
    Column("time_granularity_s", Integer),
    # Queue limits, sources per number and anything else a catalog entry carries.
    Column("details", JSON),
    Column("origin", String(20), nullable=False, default="catalog"),
)

ingest_batches = Table(
    "ingest_batches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("path", Text, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("format", String(40), nullable=False),
    Column("system", String(200)),
    # when the batch's runs were last stored: set at the claim, and again as the last
    # statement of an ingest that claimed it or stored runs into it (see write_file)
    Column("started_epoch_s", Float, nullable=False),
    Column("n_records", Integer, nullable=False, default=0),
    # the runs whose batch_id is this batch (recounted at the end of each ingest of it)
    Column("n_stored", Integer, nullable=False, default=0),
    Column("n_duplicates", Integer, nullable=False, default=0),
    Column("n_rejected", Integer, nullable=False, default=0),
    Index("ix_ingest_batches_sha_format", "sha256", "format", unique=True),
    # SQLite gives a new row the largest id plus one, the id of a deleted newest batch
    # again: a script deleting a batch id it noted earlier would delete another file
    sqlite_autoincrement=True,
)

#: One row per ingest batch deleted (``runs delete``): what file it was, when it was
#: ingested and deleted and by whom, so that a shared store keeps a record of what left
#: it, and an estimate can tell that its predictor learned from runs no longer stored.
batch_deletions = Table(
    "batch_deletions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch_id", Integer, nullable=False),
    Column("path", Text, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("format", String(40), nullable=False),
    Column("system", String(200)),
    Column("ingested_epoch_s", Float, nullable=False),
    Column("deleted_epoch_s", Float, nullable=False),
    # the login that deleted it, where the operating system names one
    Column("deleted_by", String(200)),
    Column("n_runs", Integer, nullable=False),
    Column("n_rejects", Integer, nullable=False),
    Index("ix_batch_deletions_deleted", "deleted_epoch_s"),
)

#: How many runs of each application a deleted batch took with it.
batch_deletion_apps = Table(
    "batch_deletion_apps",
    metadata,
    Column("deletion_id", Integer, ForeignKey("batch_deletions.id"), primary_key=True),
    Column("app", String(300), primary_key=True),
    Column("n_runs", Integer, nullable=False),
)

#: Which batches' runs each ingested file's records met (stored already, by an earlier
#: file, so not stored again from it): a job two files held is stored once, from the
#: first, and deleting that file leaves the later one's record of it unstored, which
#: ``ingest --reread`` of the later file stores. ``met_batch_id`` outlives its batch
#: (the record of what a deleted batch took from the files that met it); NULL where the
#: file was ingested before this was recorded (revision 0009), holding the file's
#: ``n_duplicates``, which may have met any batch ingested before it.
batch_overlaps = Table(
    "batch_overlaps",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch_id", Integer, ForeignKey("ingest_batches.id"), nullable=False),
    Column("met_batch_id", Integer),
    Column("n_records", Integer, nullable=False),
    Index("ix_batch_overlaps_batch", "batch_id"),
    Index("ix_batch_overlaps_met", "met_batch_id"),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # system + job id (+ step) for scheduler jobs; a content hash for benchmark rows.
    Column("natural_key", String(400), nullable=False, unique=True),
    Column("batch_id", Integer, ForeignKey("ingest_batches.id"), nullable=False),
    Column("source_line", Integer),
    Column("app", String(300), nullable=False),
    Column("system", String(200), nullable=False),
    Column("problem_size", String(300)),
    Column("problem_size_num", Float),
    # what else tells one scaling curve apart: build, input parameters (VASP's NCORE, KPAR)
    Column("variant", String(300)),
    Column("nodes", Integer),
    Column("ranks_per_node", Float),
    Column("threads_per_rank", Integer),
    Column("total_ranks", Integer),
    Column("gpus", Integer),
    Column("io_bytes", Float),
    Column("runtime_s", Float),
    Column("requested_walltime_s", Float),
    Column("state", String(40)),
    Column("exit_code", Integer),
    Column("user", String(200)),
    Column("account", String(200)),
    Column("partition", String(200)),
    Column("job_id", String(200)),
    Column("submit_epoch_s", Float),
    Column("start_epoch_s", Float),
    Column("end_epoch_s", Float),
    Column("max_rss_bytes", Float),
    # TIMEOUT: runtime_s is a lower bound, not a measurement of the work.
    Column("censored", Boolean, nullable=False, default=False),
    Column("extra", JSON),
    Index("ix_runs_series", "app", "system", "problem_size"),
    Index("ix_runs_submit", "submit_epoch_s"),
    Index("ix_runs_system_job", "system", "job_id"),
    # an ingest counts its file's runs (and a new release drops its earlier one's) by batch
    Index("ix_runs_batch", "batch_id"),
)

rejects = Table(
    "rejects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch_id", Integer, ForeignKey("ingest_batches.id"), nullable=False),
    Column("line_no", Integer),
    Column("raw", Text),
    Column("reason", Text, nullable=False),
)

artifacts = Table(
    "artifacts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(40), nullable=False),
    Column("created_epoch_s", Float, nullable=False),
    Column("format_version", Integer, nullable=False),
    Column("sha256", String(64), nullable=False),
    # The whole artifact document (card + booster JSON), checksummed by sha256.
    Column("document", Text, nullable=False),
    Index("ix_artifacts_kind_created", "kind", "created_epoch_s"),
)

artifact_series = Table(
    "artifact_series",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("artifact_id", Integer, ForeignKey("artifacts.id"), nullable=False),
    Column("app", String(300), nullable=False),
    # casefolded: an estimate reads only the entries of the application it asks about
    Column("app_folded", String(300), nullable=False),
    # one series entry of a runtime predictor (key, medians, fitted laws), checksummed
    # with the other entries of its application in the sealed artifact document
    Column("entry", Text, nullable=False),
    Index("ix_artifact_series_app", "artifact_id", "app_folded"),
)

#: Run columns in the order the CSV contract (``ingest csv`` / ``runs export``) uses them.
RUN_FIELDS = [
    c.name
    for c in runs.columns
    if c.name not in {"id", "natural_key", "batch_id", "source_line"}
]

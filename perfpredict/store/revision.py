"""The schema revision this perfpredict reads and writes, importable without SQLAlchemy."""

SCHEMA_REVISION = "0002_artifacts"

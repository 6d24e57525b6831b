"""The schema revisions this perfpredict knows, and the gate every opening of a store
passes. Importable without SQLAlchemy or Alembic (an estimate's fast path uses it)."""

from __future__ import annotations

from perfpredict.config import command_url
from perfpredict.errors import PerfPredictError, SchemaOutOfDateError

#: Every Alembic revision shipped in ``migrations/versions``, oldest first.
SCHEMA_REVISIONS = ("0001_initial", "0002_artifacts", "0003_artifact_series",
                    "0004_run_variant", "0005_one_key_per_job", "0006_job_submit_key",
                    "0007_runs_of_batch", "0008_batch_deletions", "0009_batch_overlaps")
#: The revision this perfpredict reads and writes.
SCHEMA_REVISION = SCHEMA_REVISIONS[-1]


def check_revision(revision: str | None, safe_url: str, *, read_only: bool = False,
                   owner: tuple[str, str] | None = None) -> None:
    """Refuse a store at any revision but :data:`SCHEMA_REVISION`, saying what to do.

    An older store is upgraded with ``perfpredict db upgrade``, by its owner where it is
    ``read_only`` to the user (a center's reader was told to run the upgrade it may not),
    or where a server's store is ``owner``'s (its role, and the store's URL as that role):
    a loader that may write the tables but not alter them was told to run the upgrade,
    which failed. A newer one (written by a newer perfpredict) cannot be downgraded, so
    the fix is to upgrade perfpredict. ``safe_url`` must already have its password hidden.
    """
    if revision == SCHEMA_REVISION:
        return
    if revision in SCHEMA_REVISIONS:
        raise SchemaOutOfDateError(
            f"the store at {safe_url} is at schema revision {revision!r}, this perfpredict "
            f"needs {SCHEMA_REVISION!r}; " + upgrade_advice(safe_url, read_only=read_only,
                                                             owner=owner))
    if revision is None or revision == "unversioned":
        raise PerfPredictError(
            f"{safe_url} holds tables but no perfpredict schema revision, so it is not a "
            "perfpredict store; name the store meant (a library call its URL, a command "
            "--db), or for a new store a new file or an empty database")
    raise SchemaOutOfDateError(
        f"the store at {safe_url} is at schema revision {revision!r}, newer than this "
        f"perfpredict knows (it needs {SCHEMA_REVISION!r}): it was written by a newer "
        "perfpredict; upgrade perfpredict (pip install -U perfpredict) to use it")


def upgrade_advice(safe_url: str, *, read_only: bool = False,
                   owner: tuple[str, str] | None = None) -> str:
    """Who upgrades an older store, and the command: the user, or the role that owns a
    server's store (``owner``: its name and the store's URL as that role), which alone
    may alter its tables."""
    if owner is not None:
        role, owner_url = owner
        return (f"only the role that owns its tables, {role}, may upgrade it: ask its "
                f"owner to back it up and run: perfpredict --db {command_url(owner_url)} "
                "db upgrade")
    upgrade = f"perfpredict --db {command_url(safe_url)} db upgrade"
    return (f"it is read-only to you: ask its owner to back it up and run: {upgrade}"
            if read_only else f"back it up, then run: {upgrade}")

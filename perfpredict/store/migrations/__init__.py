"""Alembic migrations shipped inside the package, run programmatically (no alembic.ini)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Connection, Engine

MIGRATIONS_DIR = Path(__file__).parent


def _alembic_config(bind: Engine | Connection):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["bind"] = bind
    return config


def upgrade(bind: Engine | Connection, revision: str = "head") -> None:
    """Migrate the store behind ``bind`` to ``revision`` (default: the newest).

    Given a connection, the migration runs in its transaction and the caller commits."""
    from alembic import command

    command.upgrade(_alembic_config(bind), revision)

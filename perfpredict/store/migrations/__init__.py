"""Alembic migrations shipped inside the package, run programmatically (no alembic.ini)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

MIGRATIONS_DIR = Path(__file__).parent


def _alembic_config(engine: Engine):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the store behind ``engine`` to ``revision`` (default: the newest)."""
    from alembic import command

    command.upgrade(_alembic_config(engine), revision)

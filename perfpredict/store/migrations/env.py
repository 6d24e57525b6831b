"""Alembic environment: runs on the engine or connection perfpredict hands over in the
config (a connection when the caller already holds the migration lock)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection


def _run(connection: Connection) -> None:
    context.configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


bind = context.config.attributes["bind"]
if isinstance(bind, Connection):
    _run(bind)
else:
    with bind.begin() as connection:
        _run(connection)

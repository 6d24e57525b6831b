"""``perfpredict db``: the store's schema revision and its upgrade."""

from __future__ import annotations

from typing import Annotated

import typer

from perfpredict.cli.render import SummaryFormat, print_json

db_app = typer.Typer(help="Create a store, inspect and upgrade its schema.", no_args_is_help=True)


@db_app.command("init")
def init(ctx: typer.Context) -> None:
    """Create a new, empty store at --db (or say that one is already there).

    No other command but 'ingest' creates a store, so that a mistyped --db is an error
    rather than a new, empty store."""
    store = ctx.obj.open_store(create=True)
    typer.echo(f"Store {store.safe_url} is ready at the current schema.")


@db_app.command("upgrade")
def upgrade(ctx: typer.Context) -> None:
    """Migrate the store to the schema this perfpredict needs (back it up first)."""
    from perfpredict.store.revision import SCHEMA_REVISION

    store = ctx.obj.open_store(upgrade=True)
    typer.echo(f"Store {store.safe_url} upgraded from schema revision {store.upgraded_from} "
               f"to {SCHEMA_REVISION}." if store.upgraded_from else
               f"Store {store.safe_url} is at the current schema ({SCHEMA_REVISION}); "
               "nothing to upgrade.")


#: What ``revision:`` says, in the text, where no schema is stored, by ``state``.
_NO_REVISION = {"not created": "none yet (the default store is created on first use)",
                "empty": "empty (create it with 'perfpredict db init')"}


@db_app.command("status")
def status(
    ctx: typer.Context,
    fmt: Annotated[SummaryFormat, typer.Option(
        "--format", help="text (key: value lines) or json, for a script that checks the "
        "revision before it writes.")] = SummaryFormat.text,
) -> None:
    """Print the store's URL (password hidden) and schema revision."""
    from perfpredict.store.database import describe_store

    url, named_by = ctx.obj.db()
    described = describe_store(url, must_exist=ctx.obj.store_is_named(), named_by=named_by)
    if fmt == SummaryFormat.json:
        print_json(described)
        return
    for key, value in described.items():
        if value is None:  # no revision stored: the text says what that means
            value = _NO_REVISION[str(described["state"])]
        typer.echo(f"{key}: {value}")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")

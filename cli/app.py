"""Root of the ``perfpredict`` command: global options and the one place where library
errors become a one-line message and an exit code (2 bad input, 1 domain failure)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from perfpredict.errors import PerfPredictError


@dataclass
class Context:
    """What the root options hand to every command."""

    db_flag: str | None
    debug: bool

    def db_url(self) -> str:
        from perfpredict.config import resolve_db_url

        return resolve_db_url(self.db_flag)

    def open_store(self, *, upgrade: bool = False):  # type: ignore[no-untyped-def]
        from perfpredict.store import open_store

        return open_store(self.db_url(), upgrade=upgrade)


class _ErrorTranslatingGroup(TyperGroup):
    """Turns exceptions into ``Error: ...`` and an exit code; tracebacks only with --debug."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except PerfPredictError as exc:
            if _debug(ctx):
                raise
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except (typer.TyperException, typer.Exit, typer.Abort):  # usage errors, --help
            raise
        except BrokenPipeError:
            # The reader (head, less) went away: not an error worth a message. Point stdout
            # at /dev/null so that flushing it at exit does not fail a second time.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            typer.echo("Interrupted; nothing half-written was kept.", err=True)
            raise typer.Exit(130) from None
        except Exception as exc:  # a bug: say so in one line, keep the trace for --debug
            if _debug(ctx):
                raise
            from perfpredict.config import redact_url

            typer.echo(
                f"Error: internal error ({type(exc).__name__}: {redact_url(str(exc))}); "
                "rerun with --debug for the traceback and report it",
                err=True,
            )
            raise typer.Exit(1) from None


def _debug(ctx: typer.Context) -> bool:
    obj = ctx.find_object(Context)
    return bool(obj and obj.debug) or "--debug" in sys.argv


app = typer.Typer(
    cls=_ErrorTranslatingGroup,
    help="Predict HPC job runtimes at unseen scales, with calibrated uncertainty, and advise "
    "node counts, walltimes and allocation requests.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Store URL (sqlite:///file.db, postgresql+psycopg://...) "
                     "or a SQLite file path. Default: $PERFPREDICT_DB, the config file, then "
                     "perfpredict.db in the user data directory ($PERFPREDICT_HOME)."),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    ctx.obj = Context(db_flag=db, debug=debug)


def main() -> None:
    """Console-script entry point."""
    app()


# Each command module adds its commands to the root; they import heavy libraries lazily.
from perfpredict.cli import (  # noqa: E402
    advise_commands,
    db_commands,
    ingest_commands,
    predict_commands,
    runs_commands,
    systems_commands,
)

for _module in (ingest_commands, runs_commands, predict_commands, advise_commands,
                systems_commands, db_commands):
    _module.register(app)

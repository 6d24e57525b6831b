"""Root of the ``perfpredict`` command: global options and the one place where library
errors become a one-line message and an exit code (2 bad input, 1 domain failure)."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping
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

    def store_is_named(self) -> bool:
        """Whether the user named the store (flag, environment, config file)."""
        from perfpredict.config import named_db_url

        return named_db_url(self.db_flag) is not None

    def url_to_read(self) -> str | None:
        """The store URL for ``estimate``, None for a default store not created yet."""
        from perfpredict.store.location import url_to_read

        return url_to_read(self.db_url(), named=self.store_is_named())

    def open_store(self, *, upgrade: bool = False,  # type: ignore[no-untyped-def]
                   create: bool = False, write: bool = False):
        """The store. A store the user named is created only by the commands that
        ``create`` (``db init``, ``ingest``); the default store in the user directory on
        first use, as before. Commands that ``write`` refuse a store the user may only
        read."""
        from perfpredict.store import open_store

        return open_store(self.db_url(), upgrade=upgrade,
                          create=create or not self.store_is_named(), write=write or create)


#: Each top-level command, in the order ``--help`` lists them, and the module in
#: ``perfpredict.cli`` whose ``register(app)`` adds it.
COMMAND_MODULES = {
    "ingest": "ingest_commands", "train": "predict_commands",
    "estimate": "predict_commands", "evaluate": "predict_commands",
    "runs": "runs_commands", "datasets": "predict_commands", "advise": "advise_commands",
    "systems": "systems_commands", "db": "db_commands",
}


@functools.cache
def _registered(module_name: str) -> typer.Typer:
    """What a command module registers, imported and registered once per process (a
    module's ``register`` adds to its own sub-apps, so twice would add commands twice)."""
    registered = typer.Typer()
    importlib.import_module(f"perfpredict.cli.{module_name}").register(registered)
    return registered


def _build_command(name: str) -> Any:
    """The Click command ``name``, built by Typer from its registration alone, with the
    root's settings as building the whole tree would pass them."""
    registered = _registered(COMMAND_MODULES[name])
    one = typer.Typer(rich_markup_mode=app.rich_markup_mode,
                      pretty_exceptions_short=app.pretty_exceptions_short,
                      suggest_commands=app.suggest_commands)
    one.registered_commands = [c for c in registered.registered_commands if c.name == name]
    one.registered_groups = [g for g in registered.registered_groups if g.name == name]
    return typer.main.get_group(one).commands[name]


class _CommandsOnDemand(MutableMapping[str, Any]):
    """The root's commands, each built when first looked up.

    Importing every command module and letting Typer turn every command's options into
    Click parameters cost a single ``perfpredict estimate`` about 15 ms of its start-up
    target (2x ``import numpy``, issue 5); now it pays for its own command only.
    ``--help`` and the typo suggestions still see every command, in the same order.
    """

    def __init__(self, built: MutableMapping[str, Any]) -> None:
        self._built = built

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMAND_MODULES:
                raise KeyError(name)
            self._built[name] = _build_command(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def _names(self) -> list[str]:
        return [*COMMAND_MODULES, *(n for n in self._built if n not in COMMAND_MODULES)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class _ErrorTranslatingGroup(TyperGroup):
    """Turns exceptions into ``Error: ...`` and an exit code; tracebacks only with --debug.
    Its commands are built on demand (:class:`_CommandsOnDemand`)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _CommandsOnDemand(self.commands)

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

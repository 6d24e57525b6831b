"""Root of the ``perfpredict`` command: global options and the one place where library
errors become a one-line message and an exit code (2 bad input, 1 domain failure)."""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from perfpredict.errors import PerfPredictError


class Context:
    """What the root options hand to every command."""

    def __init__(self, db_flag: str | None, debug: bool) -> None:
        self.db_flag = db_flag
        self.debug = debug

    def db_url(self) -> str:
        return self.db()[0]

    def db(self) -> tuple[str, str]:
        """The store URL and where it came from (--db, $PERFPREDICT_DB, the config
        file, the default path), which the store's messages name."""
        from perfpredict.config import resolve_db

        return resolve_db(self.db_flag)

    def store_is_named(self) -> bool:
        """Whether the user named the store (flag, environment, config file)."""
        from perfpredict.config import named_db_url

        return named_db_url(self.db_flag) is not None

    def url_to_read(self) -> str | None:
        """The store URL for ``estimate``, None for a default store not created yet."""
        from perfpredict.store.location import url_to_read

        url, named_by = self.db()
        return url_to_read(url, named=self.store_is_named(), named_by=named_by)

    def open_store(self, *, upgrade: bool = False,  # type: ignore[no-untyped-def]
                   create: bool = False, write: bool = False):
        """The store. A store the user named is created only by the commands that
        ``create`` (``db init``, ``ingest``); the default store in the user directory on
        first use, as before. Commands that ``write`` refuse a store the user may only
        read; creating one writes it, but ``db init`` of a store that is there at the
        current schema reads it only (a reader of a shared store was told it "writes to
        it")."""
        from perfpredict.store import open_store

        url, named_by = self.db()
        return open_store(url, upgrade=upgrade, create=create or not self.store_is_named(),
                          write=write, named_by=named_by)


#: Each top-level command, in the order ``--help`` lists them, and the module in
#: ``perfpredict.cli`` whose ``register(app)`` adds it.
COMMAND_MODULES = {
    "ingest": "ingest_commands", "train": "predict_commands",
    "estimate": "estimate_commands", "evaluate": "predict_commands",
    "runs": "runs_commands", "datasets": "predict_commands", "advise": "advise_commands",
    "systems": "systems_commands", "db": "db_commands",
}


@functools.cache
def _commands_of(module_name: str) -> dict[str, Any]:
    """The Click commands a command module registers, by name: imported, registered and
    built once per process (a module's ``register`` adds to its own sub-apps, so twice
    would add commands twice). ``typer.main.get_command`` is Typer's documented bridge
    to Click; a module that registers one command gets that command back, not a group."""
    registered = typer.Typer(rich_markup_mode=app.rich_markup_mode,
                             pretty_exceptions_short=app.pretty_exceptions_short,
                             add_completion=False)
    importlib.import_module(f"perfpredict.cli.{module_name}").register(registered)
    built = typer.main.get_command(registered)
    commands = getattr(built, "commands", None)
    built_commands = dict(commands) if commands is not None else {str(built.name): built}
    for command in built_commands.values():
        _reflow_help(command)
    return built_commands


def _reflow_help(command: Any) -> None:
    """Join the lines of each paragraph of ``command``'s help (and its subcommands').

    Typer's rich help keeps a docstring's line breaks after its first paragraph and
    then wraps each line to the terminal, so at 80 columns every 88-character docstring
    line became a full line and a one-word line. A paragraph marked ``\b`` (Click's
    "keep these lines") stays as written."""
    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(
            paragraph if paragraph.startswith("\b") else " ".join(paragraph.split("\n"))
            for paragraph in paragraphs)
    for subcommand in getattr(command, "commands", {}).values():
        _reflow_help(subcommand)


class _ErrorTranslatingGroup(TyperGroup):
    """Turns exceptions into ``Error: ...`` and an exit code; tracebacks only with --debug.

    Its commands load lazily, Click's documented pattern ("Lazily Loading Subcommands":
    ``list_commands`` names them, ``get_command`` imports and builds the one asked for).
    Importing every command module and letting Typer turn every command's options into
    Click parameters cost a single ``perfpredict estimate`` about 15 ms of its start-up
    target (2x ``import numpy``, issue 5); now it pays for its own module only.
    ``--help``, completion and the typo suggestions still see every command, in order.
    """

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMAND_MODULES)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in COMMAND_MODULES:
            return _commands_of(COMMAND_MODULES[cmd_name])[cmd_name]
        # Typer suggests from the commands already built, which lazily are none.
        import difflib  # only for a typo: 0.7 ms of every start-up otherwise

        close = difflib.get_close_matches(cmd_name, list(COMMAND_MODULES))
        if close and not ctx.resilient_parsing:
            ctx.fail(f"No such command {cmd_name!r}. Did you mean "
                     f"{', '.join(map(repr, close))}?")
        return None

    def make_context(self, info_name: str | None, args: list[str],  # type: ignore[override]
                     parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except typer.TyperException as exc:  # a usage error in the root's own options
            raise _usage_error(exc) from None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line; a reader that goes away ends it quietly, with exit 0.

        ``perfpredict runs stats | head -1``: once head has its line it closes the pipe,
        and the next write fails. That is no error of the command's, so nothing is said
        and the exit code is the one it would have had, wherever the write failed: in a
        command's output, in a rich table, in the help. Click and rich each turn the
        BrokenPipeError into exit 1 (a SystemExit raised while handling it), so it is
        caught here, around both, once for every command."""
        try:
            return super().main(*args, **kwargs)
        except (BrokenPipeError, SystemExit) as exc:
            if not isinstance(exc, BrokenPipeError) and not isinstance(
                    exc.__context__, BrokenPipeError):
                raise
            # stdout to /dev/null, so that flushing it at exit does not fail a second time
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(0) from None

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except PerfPredictError as exc:
            if _debug(ctx):
                raise
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except typer.TyperException as exc:  # a subcommand's usage error, a typo'd command
            raise _usage_error(exc) from None
        except (typer.Exit, typer.Abort):  # --help, a command's own exit code
            raise
        except BrokenPipeError:  # the reader went away: no error, ended in main()
            raise
        except KeyboardInterrupt:
            typer.echo("Interrupted; nothing half-written was kept.", err=True)
            raise typer.Exit(130) from None
        except Exception as exc:  # a bug: say so in one line, keep the trace for --debug
            if _debug(ctx):
                raise
            if (full := _no_room(exc)) is not None:  # the machine's, not a bug
                typer.echo(f"Error: {full}; free space on that disk, or send the output "
                           "elsewhere, and run again", err=True)
                _drop_unwritable_stdout()
                raise typer.Exit(1) from None
            from perfpredict.config import redact_url

            typer.echo(
                f"Error: internal error ({type(exc).__name__}: {redact_url(str(exc))}); "
                "rerun with --debug for the traceback and report it",
                err=True,
            )
            raise typer.Exit(1) from None


#: The options of ``perfpredict`` itself, which a command after them never sees.
_ROOT_OPTIONS = ("--db", "--debug")

#: An option one command lacks that a user brings from another, by command and option:
#: what to do instead. ``advise walltime --input`` reads many formats, so its
#: ``--input-format`` was given to ``estimate --input`` too, which said "No such option"
#: and nothing of what that file may be.
_OPTIONS_OF_OTHERS = {
    ("estimate", "--input-format"): (
        "--input-format is an option of 'perfpredict advise walltime', not of 'estimate': "
        "estimate --input reads one format, a CSV of queries (columns app, nodes and any "
        "of system, problem_size, ...; plain or gzipped), so drop it; a scheduler log's "
        "jobs are advised with 'perfpredict advise walltime --input FILE --input-format "
        "FORMAT', a Darshan log is stored with 'perfpredict ingest darshan FILE'"),
}


def _usage_error(exc: typer.TyperException) -> BaseException:
    """Print a usage error (Click's: an unknown option or command, a value of the wrong
    type or outside its choices, a missing option) as the one line on stderr that every
    other error is (DESIGN.md's CLI contract), naming the help to read; return the exit
    (code 2) to raise in its place.
    Typer would draw it as a box under the command's usage line: five or more lines that
    a script reading stderr, or a user reading a terminal too narrow for the box, gets
    in pieces. The help a bare group prints (``perfpredict runs``) passes unchanged."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # Typer tests the name too: a private class
        return exc
    message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    option = getattr(exc, "option_name", None)
    if option in _ROOT_OPTIONS and ctx is not None and ctx.parent is not None:
        root, _, command = ctx.command_path.partition(" ")
        value = " PATH" if option == "--db" else ""
        message = (f"{option} is an option of '{root}' itself, not of '{command}': give it "
                   f"before the command, as in '{root} {option}{value} {command} ...'")
    elif ctx is not None and (instead := _OPTIONS_OF_OTHERS.get(
            (ctx.command_path.partition(" ")[2], option))) is not None:
        message = instead
    elif ctx is not None:
        stop = "" if message.endswith("?") else "."
        message = f"{message.rstrip('.')}{stop} See '{ctx.command_path} --help'."
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(getattr(exc, "exit_code", 2))


def _no_room(exc: BaseException) -> str | None:
    """What ran out of room, when ``exc`` is a write that found the disk full: the
    output (``runs export > file`` on a full disk), a plot, or the store (SQLite's
    "database or disk is full", PostgreSQL's disk_full, SQLSTATE 53100), which rolls
    the transaction back; None for any other error. It was reported as an internal
    error, to be reported as a bug."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"cannot write {exc.filename or 'the output'}: {exc.strerror}"
    driver_error = getattr(exc, "orig", None)  # SQLAlchemy's DBAPIError wraps the driver's
    if "database or disk is full" in str(driver_error or ""):
        return "the store's disk is full (SQLite: database or disk is full)"
    if getattr(driver_error, "sqlstate", None) == "53100":
        return "the PostgreSQL server's disk is full (SQLSTATE 53100, disk_full)"
    return None


def _drop_unwritable_stdout() -> None:
    """Flush standard output now; if that fails too (it is what filled the disk), send
    the rest to /dev/null, so that the flush at exit does not print a second error."""
    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _debug(ctx: typer.Context) -> bool:
    obj = ctx.find_object(Context)
    return bool(obj and obj.debug) or "--debug" in sys.argv


app = typer.Typer(
    cls=_ErrorTranslatingGroup,
    help="Predict HPC job runtimes at unseen scales, with calibrated uncertainty, and advise "
    "node counts, walltimes and allocation requests.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(asked: bool) -> None:
    if asked:
        from perfpredict import __version__

        typer.echo(f"perfpredict {__version__}")
        raise typer.Exit()


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
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print perfpredict's version and exit.")] = False,
) -> None:
    ctx.obj = Context(db_flag=db, debug=debug)


def main() -> None:
    """Console-script entry point."""
    app()

"""Command-line conventions (issue 14, items 17 and 18; issue 15's CLI part): --version,
-h, shell completion, and every choice and number checked before any work is done."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from perfpredict import __version__
from perfpredict.cli.app import app


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), prog_name="perfpredict")


def test_version() -> None:
    result = _run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"perfpredict {__version__}\n"


@pytest.mark.parametrize("path", [(), ("estimate",), ("runs", "stats"), ("advise", "walltime")])
def test_dash_h_is_help(path: tuple[str, ...]) -> None:
    short, long = _run(*path, "-h"), _run(*path, "--help")
    assert short.exit_code == 0 and short.stdout == long.stdout
    assert "Usage: perfpredict" in short.stdout


#: The perfpredict command, run by this Python
PERFPREDICT = [sys.executable, "-c",
               "from perfpredict.cli.app import app; app(prog_name='perfpredict')"]


def _complete(words: str) -> list[str]:
    """What bash completion offers after ``words`` (Click's protocol, as the script that
    --install-completion writes calls it)."""
    env = {**os.environ, "_PERFPREDICT_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    done = subprocess.run(PERFPREDICT, env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    return done.stdout.split()


def test_shell_completion_offers_commands_and_choices() -> None:
    assert "--install-completion" in _run("--help").stdout
    # typed in bash, as a user does: Typer finds the shell among the command's parent
    # processes, which a test runner started from an IDE or a detached job has none of
    # (the "; true" keeps bash from replacing itself with the command)
    script = subprocess.run(["bash", "-c", shlex.join([*PERFPREDICT, "--show-completion"])
                             + "; true"], capture_output=True, text=True, timeout=120,
                            check=True).stdout
    assert script.count("_PERFPREDICT_COMPLETE") == 1
    assert _complete("perfpredict est") == ["estimate"]
    assert _complete("perfpredict runs st") == ["stats"]
    assert _complete("perfpredict estimate --format ") == ["table", "json", "csv"]


@pytest.mark.parametrize("args", [
    ("estimate", "--app", "bert", "--nodes", "8", "--format", "yaml"),
    ("estimate", "--app", "bert", "--nodes", "4.5"),
    ("runs", "list", "--limit", "-1"),
    ("runs", "stats", "--format", "yaml"),
    ("train", "--format", "yaml"),
    ("ingest", "csv", "runs.csv", "--format", "yaml"),
    ("evaluate", "--group-by", "user"),
    ("advise", "--app", "bert", "--format", "yaml"),
    ("advise", "walltime", "--input", "jobs.csv", "--format", "yaml"),
    ("systems", "show", "Frontier", "--format", "yaml"),
], ids=lambda a: " ".join(a))
def test_a_wrong_choice_or_number_is_a_usage_error(args: tuple[str, ...]) -> None:
    """Exit 2 with Click's message naming the option, before any store is opened (the
    default store, which does not exist here, is never created)."""
    result = _run(*args)
    assert result.exit_code == 2
    line = _usage_error_line(result)
    assert "Invalid value for" in line
    assert [a for a in args if a.startswith("--")][-1] in line  # the option at fault


def _usage_error_line(result) -> str:  # type: ignore[no-untyped-def]
    """The one line on stderr a usage error is (DESIGN.md's CLI contract), not Typer's
    box under the usage line; it names the help to read."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert lines[0].endswith("--help'."), lines[0]
    return lines[0]


@pytest.mark.parametrize(("args", "said"), [
    (("estimate", "--app", "bert", "--nodez", "8"),
     "No such option: --nodez (Possible options: --nodes). "
     "See 'perfpredict estimate --help'."),
    (("estimat", "--app", "bert"),
     "No such command 'estimat'. Did you mean 'estimate'? See 'perfpredict --help'."),
    (("runs", "lst"), "Did you mean 'list'? See 'perfpredict runs --help'."),
    (("--dbx", "x.db", "runs", "list"), "No such option: --dbx"),
    (("advise", "walltime", "--kill-risk", "0.1"),
     "Missing option '--input'. See 'perfpredict advise walltime --help'."),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else "")
def test_a_usage_error_is_one_line_naming_the_help(args: tuple[str, ...], said: str) -> None:
    result = _run(*args)
    assert result.exit_code == 2
    assert said in _usage_error_line(result)


@pytest.mark.parametrize(("args", "said"), [
    (("estimate", "--app", "bert", "--nodes", "4", "--db", "x.db"),
     "--db is an option of 'perfpredict' itself, not of 'estimate': give it before the "
     "command, as in 'perfpredict --db PATH estimate ...'"),
    (("advise", "walltime", "--input", "jobs.csv", "--debug"),
     "as in 'perfpredict --debug advise walltime ...'"),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else "")
def test_a_root_option_after_the_command_says_where_it_goes(args: tuple[str, ...],
                                                            said: str) -> None:
    """Click's "No such option: --db" denies an option the user sees in the help."""
    result = _run(*args)
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert said in line


def test_advise_without_an_app_is_a_usage_error() -> None:
    """A script asking 'advise --format json' got the help text and exit 0."""
    for args in (("advise", "--format", "json"), ("advise", "--runs", "4", "--plot", "x.png")):
        result = _run(*args)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert "'advise' needs --app APP" in result.stderr


def test_a_bare_group_still_prints_its_help() -> None:
    result = _run("runs")
    assert result.exit_code == 2
    assert "Usage: perfpredict runs" in result.output and "Error" not in result.output


@pytest.fixture(scope="module")
def store_of_many_series(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store whose run and series tables are larger than a pipe holds (64 KiB), so that
    the command still writes when the reader goes away."""
    folder = tmp_path_factory.mktemp("pipe")
    db = f"sqlite:///{folder / 'store.db'}"
    runs = folder / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"application-{a},opal,{nodes},{100 / nodes}\n" for a in range(1500)
        for nodes in (1, 2)))
    assert CliRunner().invoke(app, ["--db", db, "ingest", "csv", str(runs)]).exit_code == 0
    return db


@pytest.mark.parametrize(("args", "lines_read"), [
    # the reader takes the first line, as 'head -1': rich's console, which prints the
    # tables, exited 1 when it went away
    (("runs", "stats"), 1),
    (("runs", "list", "--limit", "5000"), 1),
    (("runs", "export"), 1),
    (("runs", "list", "--format", "json"), 0),
    # Typer's help, printed with rich while the command line is read
    (("--help",), 0),
    (("runs", "export", "--help"), 0),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else f"{a} lines read")
def test_a_reader_that_goes_away_ends_the_command_quietly(
        store_of_many_series: str, args: tuple[str, ...], lines_read: int) -> None:
    """``perfpredict runs stats | head -1`` ends with exit 0 and nothing on stderr, as
    it would had the reader read everything: 'runs stats' and the help exited 1."""
    command = subprocess.Popen([*PERFPREDICT, "--db", store_of_many_series, *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert command.stdout is not None
    for _ in range(lines_read):
        assert command.stdout.readline()
    command.stdout.close()  # the command writes more than the pipe holds: it must notice
    _, stderr = command.communicate(timeout=120)
    assert (command.returncode, stderr.decode()) == (0, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full (a disk always full) "
                    "is Linux's")
@pytest.mark.parametrize("args", [("runs", "export"), ("runs", "list"),
                                  ("runs", "export", "--format", "json")],
                         ids=" ".join)
def test_a_full_disk_is_said_as_such_not_as_an_internal_error(
        store_of_many_series: str, args: tuple[str, ...]) -> None:
    """``runs export > file`` on a full disk was "internal error (OSError: [Errno 28] No
    space left on device); rerun with --debug ... and report it": one line that says
    what filled up and what to do, exit 1, and no second error from the flush at exit."""
    with open("/dev/full", "w") as full:
        command = subprocess.run([*PERFPREDICT, "--db", store_of_many_series, *args],
                                 stdout=full, stderr=subprocess.PIPE, text=True,
                                 timeout=120, check=False)
    assert (command.returncode, command.stderr) == (1, (
        "Error: cannot write the output: No space left on device; free space on that "
        "disk, or send the output elsewhere, and run again\n"))


def test_a_full_store_is_said_as_such(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SQLite's own "database or disk is full" (a store whose file cannot grow: here a
    page limit, as a full disk gives the same SQLITE_FULL), wrapped by SQLAlchemy as the
    store raises it, is named as the store's disk, not as a bug."""
    import sqlalchemy as sa

    from perfpredict.cli.app import _no_room

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'full.db'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE runs (note TEXT)")
        connection.exec_driver_sql("PRAGMA max_page_count = 2")
        with pytest.raises(sa.exc.OperationalError) as raised:
            connection.exec_driver_sql("INSERT INTO runs VALUES (?)", ("x" * 100_000,))
    assert _no_room(raised.value) == ("the store's disk is full (SQLite: database or disk "
                                      "is full)")
    assert _no_room(ValueError("database or disk is full")) is None  # not a driver's

"""Secrets and shells (issue 6): a database password never reaches output or errors, and
no user input reaches a shell (every child process gets a list argv, no shell)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from perfpredict.config import redact_url
from tests.reliability._data import run_cli

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "s3cr3t-Pa55word"
#: Nothing listens on port 1; the wrong password must not leak from the failure either.
UNREACHABLE = f"postgresql+psycopg://alice:{PASSWORD}@127.0.0.1:1/perfpredict"

COMMANDS = [("runs", "stats"), ("db", "status"), ("db", "upgrade"), ("train",),
            ("estimate", "--app", "lulesh", "--nodes", "8")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_password_never_in_output_or_errors(command: tuple[str, ...]) -> None:
    pytest.importorskip("psycopg")
    result = CliRunner().invoke(app, ["--db", UNREACHABLE, *command])
    assert result.exit_code != 0
    assert PASSWORD not in result.output
    assert "alice:***@127.0.0.1:1" in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_password_in_the_query_never_in_output_or_errors() -> None:
    """libpq takes the password as a query parameter too; it was printed whole."""
    pytest.importorskip("psycopg")
    url = f"postgresql+psycopg://alice@127.0.0.1:1/perfpredict?password={PASSWORD}"
    result = CliRunner().invoke(app, ["--db", url, "runs", "stats"])
    assert result.exit_code == 2
    assert PASSWORD not in result.output
    assert "password=***" in result.stderr


@pytest.mark.parametrize("how", ["flag", "env"])
def test_password_never_in_a_debug_traceback(tmp_path: Path, how: str) -> None:
    pytest.importorskip("psycopg")
    if how == "env":
        result = run_cli(tmp_path, "--debug", "runs", "stats", env={"PERFPREDICT_DB": UNREACHABLE})
    else:
        result = run_cli(tmp_path, "--debug", "--db", UNREACHABLE, "runs", "stats")
    assert result.returncode != 0
    assert "Traceback" in result.stderr
    assert PASSWORD not in result.stdout + result.stderr


@pytest.mark.parametrize(("url", "safe"), [
    ("postgresql+psycopg://u:p%40ss:w@h:5432/db", "postgresql+psycopg://u:***@h:5432/db"),
    ("postgresql://u@h/db", "postgresql://u@h/db"),
    ("sqlite:////tmp/a@b.db", "sqlite:////tmp/a@b.db"),
    (f"postgresql://alice:{PASSWORD}@h/db?sslmode=require",
     "postgresql://alice:***@h/db?sslmode=require"),
    (f"postgresql+psycopg://alice@h/db?sslmode=require&password={PASSWORD}",
     "postgresql+psycopg://alice@h/db?sslmode=require&password=***"),
    (f"postgresql+psycopg:///db?host=h&PASSWORD={PASSWORD}&user=alice",
     "postgresql+psycopg:///db?host=h&PASSWORD=***&user=alice"),
])
def test_redact_url(url: str, safe: str) -> None:
    assert redact_url(url) == safe


_SHELL_FUNCS = {("os", "system"), ("os", "popen"), ("os", "execl"), ("os", "execlp"),
                ("os", "execv"), ("os", "execvp"), ("os", "spawnl"), ("os", "spawnv"),
                ("os", "startfile"), ("subprocess", "getoutput"),
                ("subprocess", "getstatusoutput")}
_SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output"}


def _calls(tree: ast.AST) -> list[tuple[str, str, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)):
            found.append((node.func.value.id, node.func.attr, node))
    return found


def shell_problems(source: str, name: str) -> list[str]:
    problems = []
    for module, func, call in _calls(ast.parse(source)):
        where = f"{name}:{call.lineno}: {module}.{func}"
        if (module, func) in _SHELL_FUNCS:
            problems.append(f"{where} runs a shell")
        if module == "subprocess" and func in _SUBPROCESS:
            if not call.args or not isinstance(call.args[0], ast.List):
                problems.append(f"{where} without a literal list argv")
        for kw in call.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                problems.append(f"{where} with shell={ast.unparse(kw.value)}")
    return problems


def test_no_user_input_reaches_a_shell() -> None:
    sources = [p for folder in ("perfpredict", "cli") for p in (REPO / folder).rglob("*.py")]
    problems = [problem for p in sources
                for problem in shell_problems(p.read_text(encoding="utf-8"),
                                              str(p.relative_to(REPO)))]
    assert problems == []
    # The one child process (the Darshan reader) is there and passes a list argv.
    darshan = (REPO / "perfpredict/ingest/darshan_logs.py").read_text(encoding="utf-8")
    assert any(m == "subprocess" for m, _f, _c in _calls(ast.parse(darshan)))


@pytest.mark.parametrize("bad", [
    "import os\nos.system('ls ' + path)\n",
    "import subprocess\nsubprocess.run('ls ' + path, shell=True)\n",
    "import subprocess\nsubprocess.check_output(f'ls {path}')\n",
    "import os\nos.popen(cmd)\n",
])
def test_the_shell_scanner_catches_shell_use(bad: str) -> None:
    assert shell_problems(bad, "bad.py")


def test_password_never_in_an_open_stores_repr() -> None:
    """A notebook cell ending in ``store`` printed the dataclass's repr, with the URL's
    password in full (SQLAlchemy's Engine beside it hid it)."""
    pytest.importorskip("psycopg")
    from perfpredict.store import Store
    from perfpredict.store.database import make_engine

    store = Store(engine=make_engine(UNREACHABLE), url=UNREACHABLE)  # connects to nothing
    try:
        for shown in (repr(store), str(store), f"{[store]}"):
            assert PASSWORD not in shown
            assert "'postgresql+psycopg://alice:***@127.0.0.1:1/perfpredict'" in shown
    finally:
        store.dispose()

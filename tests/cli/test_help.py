"""Every command's --help works: exit 0, usage printed, nothing on stderr."""

from __future__ import annotations

import re

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from perfpredict.cli.app import app


def _command_paths(command, prefix=()):  # type: ignore[no-untyped-def]
    """Every command path, through Click's group API (the root builds its commands only
    when asked for them)."""
    yield prefix
    if hasattr(command, "list_commands"):
        ctx = command.make_context("perfpredict", [], resilient_parsing=True)
        for name in command.list_commands(ctx):
            yield from _command_paths(command.get_command(ctx, name), (*prefix, name))


PATHS = list(_command_paths(get_command(app)))


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "root" for p in PATHS])
def test_help_exits_zero(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.stdout
    assert not result.stderr


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "root" for p in PATHS])
def test_help_shows_every_option_whole_at_80_columns(path: tuple[str, ...]) -> None:
    """Rich's panels cut what does not fit with an ellipsis: '--min-speedup-per-dou…'
    could not be typed from the help (a long word in a help text, or a long list of
    choices, narrowed the option names' column)."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout, [line for line in result.stdout.splitlines()
                                      if "…" in line]


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "root" for p in PATHS])
def test_help_text_fills_its_lines_at_80_columns(path: tuple[str, ...]) -> None:
    """A docstring's own line breaks are not kept: wrapped again at 80 columns, each
    88-character docstring line became a full line and a line of one word."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    usage = next(i for i, line in enumerate(lines) if "Usage" in line)
    text = lines[usage + 1: next(i for i, line in enumerate(lines) if "╭" in line)]
    paragraphs = "\n".join(line.strip() for line in text).strip().split("\n\n")
    for paragraph in paragraphs:
        *filled, _last = paragraph.split("\n")
        assert all(len(line) > 40 for line in filled), paragraph


def _commands(command, prefix=()):  # type: ignore[no-untyped-def]
    """Every command that runs (not a group), with its path."""
    if not hasattr(command, "list_commands"):
        yield prefix, command
        return
    ctx = command.make_context("perfpredict", [], resilient_parsing=True)
    for name in command.list_commands(ctx):
        yield from _commands(command.get_command(ctx, name), (*prefix, name))


def test_every_option_says_what_it_does() -> None:
    """evaluate's --app and --confidence had no help: whether --app narrows the test or
    the training pool too (it does both) could only be read in the code. Ten --format
    options had none either: their choices do not say which is for a script, nor that
    'systems show --format toml' is what 'systems add' reads back."""
    bare = {" ".join(path): names for path, command in _commands(get_command(app))
            if (names := [p.opts[0] for p in command.params
                          if p.param_type_name == "option" and not p.help])}
    assert bare == {}


def test_bracketed_help_text_survives_rich_markup() -> None:
    """A terminal's --help renders help text as Rich markup, which takes '[word: ...]'
    for a tag and drops it: estimate's --format said "table, json or csv ; with --input
    ..." there, its '[default: table]' gone (the plain cli-reference.md still had it)."""
    lost = {}
    for path, command in _commands(get_command(app)):
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "1000"}).stdout
        said = (getattr(p, "help", None) or "" for p in command.params)
        if gone := [bracketed for text in said
                    for bracketed in re.findall(r"\[[^\]]*\]", text.replace("\\[", "["))
                    if bracketed not in shown]:
            lost[" ".join(path)] = gone
    assert lost == {}


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "root" for p in PATHS])
def test_usage_names_arguments_as_the_docs_do(path: tuple[str, ...]) -> None:
    """Typer names an argument by its parameter: 'ingest [OPTIONS] {FORMAT} {paths}...',
    'systems add [OPTIONS] {path}', where the README, the user guide and the catalog's
    page say PATH..., NAME and FILE.toml, and a missing one was "Missing argument
    'paths'"."""
    usage = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).stdout
    line = next(line for line in usage.splitlines() if "Usage:" in line)
    assert not re.search(r"[{\[][a-z]", line.split("[OPTIONS]")[-1]), line


def test_catalog_alias_in_a_log_is_stored_under_the_catalog_name(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nx,FRONTIER,2,10\n")
    result = cli("ingest", "csv", str(runs))
    assert result.exit_code == 0, result.output
    assert "new systems" not in result.stdout
    listed = cli("runs", "list", "--format", "csv")
    assert ",Frontier," in listed.stdout

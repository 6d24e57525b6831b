"""Write docs/cli-reference.md from the ``--help`` of every perfpredict command.

    python docs/generate_cli_reference.py            # rewrite docs/cli-reference.md
    python docs/generate_cli_reference.py --check    # exit 1 if the file is out of date

The page is generated, never edited by hand: tests/test_cli_reference.py fails when it
differs from what this script writes, so the reference cannot drift from the code.

It walks the Click command tree behind ``perfpredict.cli.app:app`` and renders each
command's help with Click's plain formatter, 100 columns wide: no Rich boxes, no colour,
no dependence on the terminal it runs in, so the output is the same on every machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Before Typer is imported: plain help text, whatever terminal runs this.
os.environ["TYPER_USE_RICH"] = "0"
os.environ["NO_COLOR"] = "1"
os.environ["TERMINAL_WIDTH"] = "100"
os.environ["COLUMNS"] = "100"

import typer  # noqa: E402

WIDTH = 100
PROG = "perfpredict"
REFERENCE = Path(__file__).resolve().parent / "cli-reference.md"
REGENERATE = "python docs/generate_cli_reference.py"

HEADER = f"""# CLI reference

<!-- Generated from the --help of every command by `{REGENERATE}`;
     do not edit. tests/test_cli_reference.py fails when this file is out of date. -->

Every command of `{PROG}`, with the help it prints. Global options (`--db`, `--debug`) go
before the command: `{PROG} --db sqlite:///runs.db runs stats`. See
[the user guide](user-guide.md) for what the commands are for, with examples.
"""


# Typer builds Click commands (recent Typer releases vendor their own copy of Click), so
# the tree is walked by duck typing: a group is what has ``list_commands``.


def _context(command: Any, name: str, parent: Any = None) -> Any:
    return command.context_class(command, info_name=name, parent=parent,
                                 terminal_width=WIDTH, max_content_width=WIDTH)


def _plain(command: Any) -> None:
    """Switch a Typer command (and its children) to Click's plain help formatter."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for child in getattr(command, "commands", {}).values():
        _plain(child)


def _walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """Each command with its context, parents before children, children in help order."""
    yield ctx, command
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            child = command.get_command(ctx, name)
            if child is None or child.hidden:
                continue
            yield from _walk(child, _context(child, name, ctx))


def render() -> str:
    """The whole reference page as Markdown."""
    from perfpredict.cli.app import app

    root = typer.main.get_command(app)
    _plain(root)
    root_ctx = _context(root, PROG)
    toc: list[str] = []
    sections: list[str] = []
    for ctx, command in _walk(root, root_ctx):
        path = ctx.command_path
        anchor = path.replace(" ", "-")
        depth = path.count(" ")
        toc.append(f"{'  ' * depth}- [`{path}`](#{anchor})")
        # the plain formatter prints Rich's markup escapes ("\\[dask]") as they are written
        text = "\n".join(line.rstrip().replace("\\[", "[")
                         for line in command.get_help(ctx).splitlines())
        sections.append(f"## `{path}`\n\n```text\n{text.strip()}\n```\n")
    return HEADER + "\n" + "\n".join(toc) + "\n\n" + "\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 when docs/cli-reference.md is out of date")
    parser.add_argument("--output", type=Path, default=REFERENCE, help="where to write")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; regenerate it with: {REGENERATE}",
                  file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Rendering results for people (tables) and scripts (json, csv) with stable columns."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stdout
from enum import Enum
from typing import Annotated, Any

import typer


class TableFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


#: ``--format`` of a command that prints rows: what the option does is not said by its
#: choices alone (which of them is for a script, and that the columns stay put).
TableFormatOption = Annotated[TableFormat, typer.Option(
    "--format", help="table for people; json or csv for scripts, with stable column names.")]


class SummaryFormat(str, Enum):
    """A command's report: sentences for people, JSON for scripts."""

    text = "text"
    json = "json"


def _cell(value: Any) -> str:
    """A table cell: a list (the batches ``runs batches`` says stored a file's jobs) as
    its items, which "[1, 2]" and an empty "[]" in every other row only obscured."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(map(_cell, value))
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


@contextmanager
def whole_output() -> Iterator[None]:
    """Standard output written inside this context goes to a temporary file, copied out
    once the context ends without an error: output rendered as it is made (``estimate
    --input`` answering a chunk of queries at a time) that fails part way prints
    nothing, not the rows before the failure, which a script's ``> out.csv`` would keep
    as if complete."""
    import shutil
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as whole:
        with redirect_stdout(whole):
            yield
        whole.seek(0)
        shutil.copyfileobj(whole, sys.stdout)


def print_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2, default=str))


def _print_json_rows(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """The list of ``rows`` (``columns`` each, in that order) exactly as :func:`print_json`
    prints it, written one row at a time: ``runs export --format json`` of 200k runs held
    1.3 GB as one list and its text, where the CSV of them streams in 52 MB."""
    opening = "["
    for row in rows:
        # a row's own lines indented one level more, as inside the list; JSON strings
        # hold no raw newline, so every newline here is the layout's
        text = json.dumps({c: row.get(c) for c in columns}, indent=2, default=str)
        sys.stdout.write(f"{opening}\n  " + text.replace("\n", "\n  "))
        opening = ","
    sys.stdout.write("[]\n" if opening == "[" else "\n]\n")


#: A cell's two padding spaces and its rule.
_BORDER = 3
#: The narrowest a key column as wide as a file's path is folded to (:func:`_key_columns`).
_FOLDED_KEY_WIDTH = 12


def _needed_width(label: str, cells: Sequence[str], console_width: int) -> int:
    """A column's width: every word of its label and cells whole (labels and text wrap at
    spaces, snake_case names are shown with spaces, numbers never wrap), and short cells
    on one line; long text (notes, sources) wraps within a third of the terminal."""
    words = [len(word) for text in (label, *cells) for word in text.split()]
    one_line = max((len(c) for c in cells), default=0)
    return max([*words, min(one_line, max(24, console_width // 3)), 1])


def _key_columns(cells: Sequence[Sequence[str]], widths: Sequence[int],
                 console_width: int) -> int:
    """How many leading columns say what a row is about: the fewest that tell every row
    apart (evaluate's "Every method" rows need the group and the method, ``runs
    rejects``' the file and the line), at most three, that fit together in half the
    terminal with the widest of them folded to :data:`_FOLDED_KEY_WIDTH` at most (a
    file's path); one where none do."""
    for n_keys in range(1, min(3, len(widths) - 1) + 1):
        keys = sorted(widths[:n_keys])
        if (sum(keys[:-1]) + min(keys[-1], _FOLDED_KEY_WIDTH) + _BORDER * n_keys
                > console_width // 2):
            break
        if len({tuple(row[:n_keys]) for row in cells}) == len(cells):
            return n_keys
    return 1


def _fitted_widths(widths: Sequence[int], console_width: int, n_keys: int) -> list[int]:
    """``widths`` narrowed so that each table :func:`_column_groups` makes fits the
    terminal: the first ``n_keys`` columns together within half of it (the widest of
    them narrowed, the others whole), any other column within what they leave. A word
    wider than that (a file's full path) folds within its own cell; a table left wider
    than the terminal had rich narrow every column evenly, and fold short ones too
    ('runs batches' showed batch 10 as "1" over "0")."""
    keys = list(widths[:n_keys])
    if keys:
        widest = keys.index(max(keys))
        others = sum(keys) - keys[widest]
        keys[widest] = min(keys[widest], max(
            1, console_width // 2 - _BORDER * len(keys) - others))
    room = max(1, console_width - 1 - sum(width + _BORDER for width in keys) - _BORDER)
    return keys + [min(width, room) for width in widths[n_keys:]]


def _column_groups(widths: Sequence[int], console_width: int,
                   n_keys: int = 1) -> list[list[int]]:
    """Column indexes split into tables that each fit ``console_width``, the first
    ``n_keys`` columns (what a row is about) repeated in every one, as pandas wraps a
    wide frame."""
    keys = list(range(min(n_keys, len(widths))))
    keys_width = 1 + sum(widths[i] + _BORDER for i in keys)
    groups: list[list[int]] = []
    used = console_width  # force a new group at the start
    for i in range(len(keys), len(widths)):
        if used + widths[i] + _BORDER > console_width:
            groups.append(list(keys))
            used = keys_width
        groups[-1].append(i)
        used += widths[i] + _BORDER
    return groups or [keys]


def print_rows(rows: Iterable[Mapping[str, Any]], fmt: str,
               columns: Sequence[str] | None = None, title: str | None = None) -> None:
    """Print ``rows`` as a table, JSON list or CSV with the given column order (by
    default the first row's keys).

    JSON and CSV are written as the rows come, so that an iterator of them (``runs
    export`` of a store's every run) is never held in memory.

    A table is never cut: every cell is shown whole and labels wrap at spaces; when the
    columns do not fit the terminal (80 columns, or $COLUMNS) together, they are shown
    as several tables, each starting with the columns that tell the rows apart. A word
    wider than the terminal leaves (a file's path) folds within its own cell.
    """
    if not columns:
        listed = list(rows)
        rows, columns = listed, list(listed[0].keys() if listed else [])
    if fmt == "json":
        _print_json_rows(rows, columns)
    elif fmt == "csv":
        from perfpredict.report.csv_rows import write_csv

        write_csv(sys.stdout, columns, rows)
    elif columns:  # a table of no columns (no rows, none named) shows nothing
        cells = [[_cell(r.get(c)) for c in columns] for r in rows]
        if not cells:  # said as psql says it: empty boxes said nothing, split in two
            typer.echo(f"{title}: (0 rows)" if title else "(0 rows)")
            return
        from rich.console import Console
        from rich.table import Table

        # cells are the user's text: a PBS job name like OOD-[hostname]_Jupyter_GPU
        # read as rich markup lost its "[hostname]", and ":rocket:" became an emoji
        console = Console(markup=False, emoji=False)
        labels = [c.replace("_", " ") for c in columns]
        widths = [_needed_width(label, [row[i] for row in cells], console.width)
                  for i, label in enumerate(labels)]
        n_keys = _key_columns(cells, widths, console.width)
        widths = _fitted_widths(widths, console.width, n_keys)
        for n, group in enumerate(_column_groups(widths, console.width, n_keys)):
            table = Table(title=title if n == 0 else None)
            for i in group:
                table.add_column(labels[i], width=widths[i], overflow="fold")
            for row in cells:
                table.add_row(*[row[i] for i in group])
            console.print(table)


def stored_app_names(store: Any, app: list[str] | None) -> list[str]:
    """The stored names of the applications ``--app`` gives, found as every command
    finds them (:func:`perfpredict.store.queries.resolve_apps`), with a note on stderr
    for each found under another spelling ("'BERT' is stored as 'bert'"), as an estimate
    names the series it answers with: a table or file of results does not say which
    application it read."""
    from perfpredict.store.queries import resolve_apps

    resolved = resolve_apps(store, app)
    for name in resolved:
        if name.note is not None:
            typer.echo(f"note: {name.note}", err=True)
    return [name.stored for name in resolved]


"""Rendering results for people (tables) and scripts (json, csv) with stable columns."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence
from enum import Enum
from typing import Any

import typer


class TableFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class SummaryFormat(str, Enum):
    """A command's report: sentences for people, JSON for scripts."""

    text = "text"
    json = "json"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def print_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2, default=str))


def print_rows(rows: Sequence[dict[str, Any]], fmt: str, columns: Sequence[str] | None = None,
               title: str | None = None) -> None:
    """Print ``rows`` as a table, JSON list or CSV with the given column order."""
    columns = list(columns or (rows[0].keys() if rows else []))
    if fmt == "json":
        print_json([{c: r.get(c) for c in columns} for r in rows])
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow([("" if r.get(c) is None else r.get(c)) for c in columns])
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for c in columns:
            table.add_column(c)
        for r in rows:
            table.add_row(*[_cell(r.get(c)) for c in columns])
        Console().print(table)

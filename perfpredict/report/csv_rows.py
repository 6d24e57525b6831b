"""CSV for scripts: the one writer behind every ``--format csv`` and the plots' data files.

The library answers with column names and rows (dicts, or an iterator of them when the
answer is large, as ``runs export`` of a million-run store is); this writes them, so the
same rows can as well be printed as a table or JSON.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any


def write_csv(out: IO[str], columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> int:
    """Write a header of ``columns`` and one line per row; returns the rows written.

    A missing or None cell is empty; keys outside ``columns`` are left out. Rows are
    written as they come, so an iterator is never held in memory.
    """
    return write_csv_cells(out, columns, ([row.get(c) for c in columns] for row in rows))


def write_csv_cells(out: IO[str], columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                    float_format: str | None = None) -> int:
    """:func:`write_csv` for rows that are already cells in the order of ``columns``
    (``estimate --input``'s 100k rows skip a dict each). ``float_format`` (a format spec
    such as ``".6g"``) rounds floats for readers that want a short cell."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    n_rows = 0
    for cells in rows:  # csv writes None as an empty cell
        if float_format:
            cells = [format(v, float_format) if isinstance(v, float) else v for v in cells]
        writer.writerow(cells)
        n_rows += 1
    return n_rows

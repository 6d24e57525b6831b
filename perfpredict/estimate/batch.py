"""``estimate --input``: a CSV of queries in, the same rows with their estimates out."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfpredict.counts import plain
from perfpredict.errors import BadInputError, PerfPredictError
from perfpredict.estimate.estimates import BATCH_COLUMNS, load_predictor
from perfpredict.estimate.lookup import Query, column_name
from perfpredict.laws.roofline_terms import VOLUMES
from perfpredict.store.handle import StoreLike

_TEXT_COLUMNS = ("app", "system", "problem_size", "variant")
_NUMBER_COLUMNS = ("nodes", "ranks_per_node", "threads_per_rank", *VOLUMES)


def read_queries(path: str | os.PathLike[str]
                 ) -> tuple[list[str], list[dict[str, str]], list[Query]]:
    """The query CSV's header, raw rows and parsed queries; bad rows name their line."""
    header, rows, queries, line_nos = _read_queries(path)
    for query, line_no in zip(queries, line_nos, strict=True):
        try:
            query.validate()
        except BadInputError as exc:
            raise _at_line(exc, path, line_no) from None
    return header, rows, queries


def _read_queries(path: str | os.PathLike[str]
                  ) -> tuple[list[str], list[dict[str, str]], list[Query], list[int]]:
    """:func:`read_queries`, and the line each row ends on (blank lines are skipped), the
    queries not yet validated (:meth:`Query.validate`): the estimate validates each query
    before it answers any, and a bad one's error, which says which query it is, is named
    by its line then (:func:`estimate_batch`). Validated here too, 100k queries were
    validated twice: reading them took 1.17 s of CPU rather than 0.80 s, of a 4.8 s batch
    (docs/performance.md). A row the reader refuses (a node count that is no number) is
    named before any row validation would refuse, wherever the two are in the file.
    ``path`` as ``ingest_file`` takes it, a text or a Path (a text was an AttributeError,
    "'str' object has no attribute 'open'", and so was a DataFrame of queries); ``-``
    reads standard input."""
    from perfpredict.ingest._text.lines import read_through, stream_name
    from perfpredict.ingest.fields import FieldError, header_fix, named_twice, number

    if not isinstance(path, str | os.PathLike):
        raise BadInputError(f"a query file is named by its path, not a "
                            f"{type(path).__name__}; for queries held in Python, call "
                            "load_predictor(store).estimate_many([Query(...), ...])")
    shown = stream_name(Path(path))  # standard input (-) is named <stdin>
    with read_through(Path(path)) as readable:
        header, rows, line_nos = _csv_rows(readable)
    if not header:  # said so, not "the header has no 'app' column" of a header not there
        raise BadInputError("the query file is empty; give a header line (at least app,nodes) "
                            "and one row per query", path=shown, line_no=1)
    if (twice := named_twice(header)) is not None:
        raise BadInputError(twice, path=shown, line_no=1)
    for needed in ("app", "nodes"):
        if needed not in header:
            fix = header_fix(header, ("app", "nodes", "system", "problem_size"),
                             f"add the column '{needed}' to the header (see 'perfpredict "
                             "estimate --help')")
            raise BadInputError(f"the header has no '{needed}' column; a query file needs "
                                f"at least app and nodes; {fix}", path=shown, line_no=1)
    queries = []
    for line_no, row in zip(line_nos, rows, strict=True):
        if None in row:  # DictReader's cells past the header: a comma in a label, unquoted
            raise BadInputError(f"expected {len(header)} fields as in the header, found "
                                f"{len(header) + len(row[None])}; quote fields that contain "
                                "commas", path=shown, line_no=line_no)
        values: dict[str, Any] = {name: text for name in _TEXT_COLUMNS
                                  if (text := (row.get(name) or "").strip())}
        for name in _NUMBER_COLUMNS:
            try:  # the one reader of numbers written in tables (ingest csv's too)
                value = number(f"column {name!r}", row.get(name) or "")
            except FieldError as exc:
                raise BadInputError(str(exc), path=shown, line_no=line_no) from None
            if value is not None:
                values[name] = value
        if missing := [name for name in ("app", "nodes") if name not in values]:
            raise BadInputError(f"{' and '.join(map(column_name, missing))} "
                                f"{'is' if len(missing) == 1 else 'are'} empty; every row "
                                "needs an app and a node count", path=shown, line_no=line_no)
        if values["nodes"] % 1:  # as --nodes takes them: 4.5 nodes is a typo
            raise BadInputError(f"{column_name('nodes')} must be a whole number, got "
                                f"{values['nodes']:g}", path=shown, line_no=line_no)
        queries.append(Query(**values, field_name=column_name))
    return header, rows, queries, line_nos


def _csv_rows(path: Path) -> tuple[list[str], list[dict[Any, Any]], list[int]]:
    """The header, the rows (keyed by column, cells past the header by None) and the
    line each row ends on of the query CSV ``path``."""
    import csv

    try:
        # as ingest csv reads a header: a spreadsheet's byte-order mark and the spaces
        # after hand-written commas are not part of the column names
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = [name.strip() for name in reader.fieldnames or []]
            reader.fieldnames = header
            rows, line_nos = [], []
            for row in reader:
                rows.append(row)
                line_nos.append(reader.line_num)
    except UnicodeDecodeError as exc:
        from perfpredict.ingest._text.lines import WIDE_TEXT_FIX, wide_text

        with path.open("rb") as fh:
            fix = WIDE_TEXT_FIX if wide_text(fh.read(4)) else f"cannot read the query file: {exc}"
        raise BadInputError(fix, path=path) from exc
    except OSError as exc:
        raise BadInputError(f"cannot read the query file: {exc}", path=path) from exc
    return header, rows, line_nos


def _at_line(exc: PerfPredictError, path: str | os.PathLike[str],
             line_no: int) -> PerfPredictError:
    """``exc``, about one query of the file at ``path``, naming the file and the query's
    line: bad input by its ``path`` and ``line_no``, as every reader names them."""
    from perfpredict.ingest._text.lines import stream_name

    shown = stream_name(Path(path))
    if isinstance(exc, BadInputError):
        return type(exc)(exc.reason, path=shown, line_no=line_no)
    return type(exc)(f"{shown}:{line_no}: {exc}")


@dataclass(frozen=True)
class BatchEstimates:
    """``estimate --input``'s answer: the input's columns then :data:`BATCH_COLUMNS`, and
    one row per input row, in its order."""

    columns: list[str]
    #: cells in the order of ``columns``, as CSV writes them: ``notes`` joined with "; "
    #: ("" where there are none)
    rows: list[tuple[Any, ...]]
    queries: list[Query]
    #: each row's notes, as ``perfpredict estimate`` of its query gives them
    notes: list[tuple[str, ...]]

    def __repr__(self) -> str:
        # what a notebook shows of estimate_batch(...): its size and columns, where the
        # dataclass's repr wrote every row, query and note (1.6 MB for 1,000 queries);
        # the rows are records(), pandas.DataFrame(batch.records()) a frame of them
        return f"BatchEstimates(n_rows={len(self.rows)}, columns={self.columns!r})"

    def records(self) -> list[dict[str, Any]]:
        """One dict per row, for JSON: the input's numbers (nodes, layout, I/O bytes) as
        the numbers they were read as, where the CSV rows keep them as written, and the
        notes as a list, as ``estimate --format json`` gives one query's (a note may hold
        "; " itself, so the joined cell cannot be split back)."""
        records = []
        for row, query, notes in zip(self.rows, self.queries, self.notes, strict=True):
            record = dict(zip(self.columns, row, strict=True))
            record["notes"] = list(notes)
            for name in _NUMBER_COLUMNS:
                value = getattr(query, name)
                if name in record and value is not None:
                    record[name] = plain(value)
            records.append(record)
        return records


def estimate_batch(db_url: StoreLike | None, path: str | os.PathLike[str],
                   confidence: float = 0.9) -> BatchEstimates:
    """Answer every row of a query CSV: its own cells, then the estimate's columns, the
    last of them ``notes``: what ``perfpredict estimate`` of the row would note, joined
    with "; " (:meth:`~perfpredict.estimate.LoadedPredictor.columns`).

    An input column named like an answer is dropped (the answer, after the input's
    columns, takes its name); ``runtime_s`` is kept as it was, not used. A bad row, or
    one the predictor cannot answer, fails the batch naming its line.
    """
    header, rows, queries, line_nos = _read_queries(path)
    try:
        answers = load_predictor(db_url).columns(queries, confidence)
    except PerfPredictError as exc:  # a bad query, an unknown application: its line
        if exc.query_index is None:
            raise
        raise _at_line(exc, path, line_nos[exc.query_index]) from None
    kept = [c for c in header if c not in BATCH_COLUMNS]
    columns = [*kept, *BATCH_COLUMNS]
    cells = {c: answers[c].tolist() for c in BATCH_COLUMNS}
    notes = cells["notes"]
    joined = {id(said): "; ".join(said) for said in notes}  # rows alike share a tuple
    cells["notes"] = [joined[id(said)] for said in notes]
    values = zip(*(cells[c] for c in BATCH_COLUMNS), strict=True)
    return BatchEstimates(columns, [(*(row.get(c) for c in kept), *answer)
                                    for row, answer in zip(rows, values, strict=True)],
                          queries, notes)

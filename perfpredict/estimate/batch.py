"""``estimate --input``: a CSV of queries in, the same rows with their estimates out."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfpredict.counts import plain
from perfpredict.deprecation import renamed_keyword
from perfpredict.errors import BadInputError, PerfPredictError
from perfpredict.estimate.estimates import BATCH_COLUMNS, load_predictor
from perfpredict.estimate.lookup import Query, column_name
from perfpredict.laws.roofline_terms import VOLUMES
from perfpredict.store.handle import StoreLike

if TYPE_CHECKING:
    import csv

    from perfpredict.estimate.estimates import LoadedPredictor

_TEXT_COLUMNS = ("app", "system", "problem_size", "variant")
_NUMBER_COLUMNS = ("nodes", "ranks_per_node", "threads_per_rank", *VOLUMES)


#: Queries read and answered together by :func:`estimate_batches`: a batch's memory
#: grows with this, not with the file (1M queries answered at once peaked at 1.3 GiB;
#: in chunks of 100k, 326 MiB; of 250k, 694 MiB), and its time with the number of
#: chunks, since each chunk answers its queries series by series, at a cost per series
#: it touches (about 1.2 s a chunk over the bundled predictor's series: 1M queries took
#: 50 s of CPU in chunks of 100k, 40 s in chunks of 250k, 34 s at once). A file of up to
#: this many queries is one chunk, answered as it was at once (docs/performance.md).
CHUNK_QUERIES = 100_000


def read_queries(path: str | os.PathLike[str]
                 ) -> tuple[list[str], list[dict[str, str]], list[Query]]:
    """The query CSV's header, raw rows and parsed queries; bad rows name their line."""
    rows: list[dict[str, str]] = []
    queries: list[Query] = []
    line_nos: list[int] = []
    with _query_file(path) as (header, parsed):
        for line_no, row, query in parsed:
            rows.append(row)
            queries.append(query)
            line_nos.append(line_no)
    for query, line_no in zip(queries, line_nos, strict=True):
        try:
            query.validate()
        except BadInputError as exc:
            raise _at_line(exc, path, line_no) from None
    return header, rows, queries


_Parsed = tuple[int, dict[str, str], Query]


@contextmanager
def _query_file(path: str | os.PathLike[str]
                ) -> Iterator[tuple[list[str], Iterator[_Parsed]]]:
    """The query CSV's header, and its rows as they are read: each with the line it ends
    on (blank lines are skipped) and its query, not yet validated (:meth:`Query.validate`):
    the estimate validates each query of a chunk before it answers any, and a bad one's
    error, which says which query it is, is named by its line then
    (:func:`estimate_batches`).
    Validated here too, 100k queries were validated twice: reading them took 1.17 s of CPU
    rather than 0.80 s, of a 4.8 s batch (docs/performance.md). A row the reader refuses
    (a node count that is no number) is refused as it is read. ``path`` as
    ``ingest_file`` takes it, a text or a Path (a text was an AttributeError, "'str'
    object has no attribute 'open'", and so was a DataFrame of queries); ``-`` reads
    standard input, copied to a temporary file that lasts as long as this context."""
    from perfpredict.ingest._text.lines import read_through, stream_name

    if not isinstance(path, str | os.PathLike):
        raise BadInputError(f"a query file is named by its path, not a "
                            f"{type(path).__name__}; for queries held in Python, call "
                            "load_predictor(store).estimate_many([Query(...), ...])")
    shown = stream_name(Path(path))  # standard input (-) is named <stdin>
    with read_through(Path(path)) as readable:
        _refuse_darshan_log(readable, shown)
        with _csv_rows(readable) as (header, rows):
            _check_header(header, shown, readable)
            yield header, _queries(header, rows, shown)


def _refuse_darshan_log(path: Path, shown: str) -> None:
    """Refuse a Darshan log given as the query file: it holds a job's I/O counters, not
    queries. Its bytes read as CSV were "not UTF-8 text (perhaps Latin-1 ...); save the
    file as UTF-8", a fix for a spreadsheet's file."""
    from perfpredict.ingest.registry import is_darshan_log

    if is_darshan_log(path):
        raise BadInputError("the file is a Darshan I/O log, not a query file (a CSV with at "
                            "least the columns app and nodes, one row per query); store "
                            "its I/O with 'perfpredict ingest darshan'", path=shown)


def _check_header(header: list[str], shown: str, path: Path) -> None:
    """Refuse a query file whose header lacks what every query needs; where its first
    record is a scheduler's log (a sacct dump, an SWF log), say so: such a file holds
    jobs that ran, not queries, and was said to lack an 'app' column."""
    from perfpredict.ingest.fields import header_fix, named_twice
    from perfpredict.ingest.registry import first_record, other_format_fix

    if not header:  # said so, not "the header has no 'app' column" of a header not there
        raise BadInputError("the query file is empty; give a header line (at least app,nodes) "
                            "and one row per query", path=shown, line_no=1)
    if (twice := named_twice(header)) is not None:
        raise BadInputError(twice, path=shown, line_no=1)
    for needed in ("app", "nodes"):
        if needed not in header:
            log = other_format_fix(path, "csv", "", lambda fmt: (
                f"'perfpredict ingest {fmt}' to store its jobs, or 'perfpredict advise "
                "walltime' to advise such jobs their walltimes"))
            if log is not None:
                raise BadInputError(f"{log}; a query file is a CSV with at least the "
                                    "columns app and nodes, one row per query", path=shown,
                                    line_no=first_record(path)[0])
            fix = header_fix(header, ("app", "nodes", "system", "problem_size"),
                             f"add the column '{needed}' to the header (see 'perfpredict "
                             "estimate --help')")
            raise BadInputError(f"the header has no '{needed}' column; a query file needs "
                                f"at least app and nodes; {fix}", path=shown, line_no=1)


def _queries(header: list[str], rows: Iterator[tuple[int, dict[Any, Any]]],
             shown: str) -> Iterator[_Parsed]:
    """Each row with its line and its query; a row that is no query is refused naming
    its line."""
    from perfpredict.ingest.fields import FieldError, number

    for line_no, row in rows:
        if None in row:  # DictReader's cells past the header: a comma in a label, unquoted
            raise BadInputError(f"expected {len(header)} fields as in the header, found "
                                f"{len(header) + len(row[None])}; quote fields that contain "
                                "commas", path=shown, line_no=line_no)
        values: dict[str, Any] = {name: text for name in _TEXT_COLUMNS
                                  if (text := (row.get(name) or "").strip())}
        for name in _NUMBER_COLUMNS:
            text = row.get(name) or ""
            try:  # the one reader of numbers written in tables (ingest csv's too)
                value = number(f"column {name!r}", text)
            except FieldError as exc:
                raise BadInputError(str(exc), path=shown, line_no=line_no) from None
            if value is not None:
                values[name] = value
            elif name == "nodes" and text.strip():
                # "nan", "NA": a missing value's mark leaves out an optional column, but
                # the node count is needed, and "column 'nodes' is empty" was not so
                raise BadInputError(f"{column_name(name)} must be a number, got "
                                    f"{text.strip()!r}; every row needs a node count",
                                    path=shown, line_no=line_no)
        if missing := [name for name in ("app", "nodes") if name not in values]:
            raise BadInputError(f"{' and '.join(map(column_name, missing))} "
                                f"{'is' if len(missing) == 1 else 'are'} empty; every row "
                                "needs an app and a node count", path=shown, line_no=line_no)
        if values["nodes"] % 1:  # as --nodes takes them: 4.5 nodes is a typo
            raise BadInputError(f"{column_name('nodes')} must be a whole number, got "
                                f"{values['nodes']:g}", path=shown, line_no=line_no)
        yield line_no, row, Query(**values, field_name=column_name)


@contextmanager
def _csv_rows(path: Path
              ) -> Iterator[tuple[list[str], Iterator[tuple[int, dict[Any, Any]]]]]:
    """The header of the query CSV ``path``, and its rows as they are read (keyed by
    column, cells past the header by None), each with the line it ends on. Read as
    ``ingest csv`` reads a file: gzip as it is (by its content: a gzipped query file
    was said to be "not UTF-8 text (perhaps Latin-1 ...)"), another compression or
    UTF-16 text refused saying which (:func:`~perfpredict.ingest._text.lines.open_binary`)."""
    import csv
    import io

    from perfpredict.ingest._text.lines import open_binary

    with _read_errors_named(path):
        fh = io.TextIOWrapper(open_binary(path), encoding="utf-8", newline="")
    with fh:
        # as ingest csv reads a header: a spreadsheet's byte-order mark (open_binary
        # skips it) and the spaces after hand-written commas are not part of the column
        # names
        lines = _LinesRead(fh)
        reader = csv.DictReader(lines)
        with _read_errors_named(path, lines):
            header = [name.strip() for name in reader.fieldnames or []]
            reader.fieldnames = header
        yield header, _numbered_rows(reader, lines, path)


class _LinesRead:
    """The lines of a text file as the ``csv`` module reads them, counted: where it
    refuses a row, its own count (``line_num``) may stop before the line it was reading
    (a cell over its field limit on line 3 was said to be on line 2)."""

    def __init__(self, fh: Iterator[str]) -> None:
        self.fh = fh
        self.n_read = 0

    def __iter__(self) -> Iterator[str]:
        for line in self.fh:
            self.n_read += 1
            yield line


def _numbered_rows(reader: csv.DictReader[str], lines: _LinesRead, path: Path
                   ) -> Iterator[tuple[int, dict[Any, Any]]]:
    """``reader``'s rows with the line each ends on; a file that cannot be read on is
    bad input naming it and the line (only what reading raises: not what the caller
    does between rows)."""
    with _read_errors_named(path, lines):
        for row in reader:
            yield lines.n_read, row


@contextmanager
def _read_errors_named(path: Path, lines: _LinesRead | None = None) -> Iterator[None]:
    """A query file that cannot be read, is not UTF-8 text, holds a row the ``csv``
    module refuses or is a damaged gzip stream, as bad input naming it and, once its
    ``lines`` are read, the line: a Latin-1 name on line 3 was said as a byte's position
    in a block the text layer decoded ("position 51"), and a cell over the ``csv``
    module's field limit was an internal error naming neither file nor line."""
    import csv
    import gzip
    import zlib

    from perfpredict.ingest._text.lines import damaged_stream, first_line_not_utf8

    try:
        yield
    except UnicodeDecodeError as exc:
        raise BadInputError("the line is not UTF-8 text (perhaps Latin-1 or Windows-1252); "
                            "save the file as UTF-8 (a spreadsheet's 'CSV UTF-8')", path=path,
                            line_no=first_line_not_utf8(path)) from exc
    except csv.Error as exc:  # a cell past the field limit, a NUL byte: the line it is on
        from perfpredict.ingest.fields import unreadable_row

        raise BadInputError(unreadable_row(exc), path=path,
                            line_no=lines.n_read if lines else None) from exc
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:  # cut short, or bytes changed
        raise damaged_stream(path, (lines.n_read if lines else 0) + 1, exc) from exc
    except OSError as exc:
        where = f" past line {lines.n_read}" if lines and lines.n_read else ""
        raise BadInputError(f"cannot read the query file{where}: {exc}", path=path) from exc


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


@dataclass(frozen=True)
class StreamedEstimates:
    """``estimate --input``'s answer as it is made, chunk by chunk: the columns (the
    input's, then :data:`BATCH_COLUMNS`) and the :class:`BatchEstimates` of each chunk of
    queries, in the file's order, made as ``chunks`` is read (:func:`estimate_batches`)."""

    columns: list[str]
    chunks: Iterator[BatchEstimates]

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Every row's cells (:attr:`BatchEstimates.rows`), chunk after chunk."""
        for chunk in self.chunks:
            yield from chunk.rows

    def records(self) -> Iterator[dict[str, Any]]:
        """Every row as a dict (:meth:`BatchEstimates.records`), chunk after chunk."""
        for chunk in self.chunks:
            yield from chunk.records()


@renamed_keyword("db_url", "store")
def estimate_batch(store: StoreLike | None, path: str | os.PathLike[str],
                   confidence: float = 0.9) -> BatchEstimates:
    """Answer every row of a query CSV: its own cells, then the estimate's columns, the
    last of them ``notes``: what ``perfpredict estimate`` of the row would note, joined
    with "; " (:meth:`~perfpredict.estimate.LoadedPredictor.columns`).

    An input column named like an answer is dropped (the answer, after the input's
    columns, takes its name); ``runtime_s`` is kept as it was, not used. A bad row, or
    one the predictor cannot answer, fails the batch naming its line. Every row is held
    in memory, so they are answered as one chunk (each series once);
    :func:`estimate_batches` gives the same rows a chunk at a time.
    """
    streamed = estimate_batches(store, path, confidence, chunk_queries=sys.maxsize)
    [whole] = streamed.chunks
    return whole


@renamed_keyword("db_url", "store")
def estimate_batches(store: StoreLike | None, path: str | os.PathLike[str],
                     confidence: float = 0.9,
                     chunk_queries: int = CHUNK_QUERIES) -> StreamedEstimates:
    """:func:`estimate_batch`'s rows, answered ``chunk_queries`` at a time as the file is
    read, so that a batch of millions of queries holds one chunk's in memory. The rows do
    not depend on the chunk size. A bad header is refused here; a bad row, or one the
    predictor cannot answer, when its chunk is reached, naming its line, after the rows
    of the chunks before it were given (``estimate --input`` prints nothing until every
    row is answered). Within a chunk, a row the reader refuses (a node count that is no
    number) is named before any query the predictor refuses; so is it in a file of one
    chunk, wherever the two are in it."""
    if chunk_queries < 1:
        raise BadInputError(f"chunk_queries must be 1 or more, got {chunk_queries}")
    opened = ExitStack()
    header, parsed = opened.enter_context(_query_file(path))
    kept = [c for c in header if c not in BATCH_COLUMNS]
    columns = [*kept, *BATCH_COLUMNS]
    return StreamedEstimates(columns, _answered(opened, store, path, parsed, columns,
                                                chunk_queries, confidence))


def _answered(opened: ExitStack, db_url: StoreLike | None, path: str | os.PathLike[str],
              parsed: Iterator[_Parsed], columns: list[str], chunk_queries: int,
              confidence: float) -> Iterator[BatchEstimates]:
    """The rows of ``parsed`` answered a chunk at a time; ``opened`` (the query file) is
    closed at the end. The predictor is loaded once the first chunk is read, so that a
    bad row there is named before a store without a predictor; a file without rows is
    answered as a chunk of none, which checks the store and the confidence all the
    same."""
    kept = columns[:-len(BATCH_COLUMNS)]
    predictor: LoadedPredictor | None = None
    with opened:
        for chunk in _chunked(parsed, chunk_queries):
            predictor = predictor or load_predictor(db_url)
            queries = [query for _, _, query in chunk]
            try:
                answers = predictor.columns(queries, confidence)
            except PerfPredictError as exc:  # a bad query, an unknown application: its line
                if exc.query_index is None:
                    raise
                raise _at_line(exc, path, chunk[exc.query_index][0]) from None
            cells = {c: answers[c].tolist() for c in BATCH_COLUMNS}
            notes = cells["notes"]
            joined = {id(said): "; ".join(said) for said in notes}  # rows alike share a tuple
            cells["notes"] = [joined[id(said)] for said in notes]
            values = zip(*(cells[c] for c in BATCH_COLUMNS), strict=True)
            yield BatchEstimates(columns,
                                 [(*(row.get(c) for c in kept), *answer)
                                  for (_, row, _), answer in zip(chunk, values, strict=True)],
                                 queries, notes)


def _chunked(parsed: Iterator[_Parsed], size: int) -> Iterator[list[_Parsed]]:
    """``parsed`` in lists of ``size`` (the last may be shorter); one empty list where
    ``parsed`` holds nothing."""
    chunk = list(islice(parsed, size))
    yield chunk
    while chunk := list(islice(parsed, size)):
        yield chunk

"""Ingest files into the store: checksum, parse, and hand the records to the store
writer (:mod:`perfpredict.store.writer`), one transaction per file.

Guarantees a user relies on:

* A file already ingested (same sha256 and format) stores nothing and says so.
* Runs carry a natural key, system + job id, so a job seen in two overlapping
  accounting dumps is stored once. A row without a job id (a benchmark result) is keyed
  by its content, the file's sha256 and its occurrence in that file: identical rows are
  repeated measurements, kept whether they repeat within a file or in a later file,
  while the same file ingested again stores nothing (an edited file is a new file, so
  its rows are stored again, unless it is ingested as replacing the earlier file's
  checksum, as a bundled data set's new release is: then the earlier runs go). A file
  grown by lines appended since it was ingested from the same path (or standard input)
  is the same file: only the lines added are stored
  (:mod:`perfpredict.store.file_versions`); so is one whose only change is lines an
  earlier ingest rejected, fixed since: only those lines are stored.
* Jobs the parser skipped as not run yet (pending, running) are counted, and a file
  that yields nothing, or no runtime at all, gets a warning.
* ``on_error="fail"`` (default): the first bad record refuses the whole file with its
  path, 1-based line and reason; nothing from it is stored. ``on_error="skip"``: good
  records are stored and bad ones go to the rejects table with their reason.
* A format that never names the machine (PBS, LSF, Darshan) without ``--system`` is one
  usage error before the file is read, not a reject per record.
* A batch job script, given as any format, is one usage error naming the line that
  shows it (:func:`~perfpredict.ingest.registry.refuse_job_script`), under
  ``on_error="skip"`` too, rather than a bad first record with the format's own fix.
* One transaction per file: a crash (even SIGKILL) leaves the store as it was before the
  file, and a rerun completes it.
* A stream (``-`` for standard input, a pipe such as ``<(sacct ...)``) is copied to a
  temporary file first and that copy ingested, so the rules above hold for it as for a
  file (the same output piped in again stores nothing), and messages name it as given
  (``<stdin>:12: ...``).
* A stream of a command's output (``sacct ... | perfpredict ingest sacct -``) that ends
  inside a line was cut: it is refused whole (exit 2; under ``on_error="skip"`` kept as
  one reject), since the jobs after that line are missing too.
* A scheduler's log still being written (a plain file or a stream of
  :data:`~perfpredict.ingest.registry.LIVE_LOG_FORMATS` whose last line has no newline)
  is read up to its last newline, the line after it left for the next ingest, which
  stores it once; a CSV table is read whole, newline or not.
* Such a log whose line 1 is no record while the lines after it are records (logrotate's
  ``copytruncate`` emptied it while a record was written: the rest of that record) has
  that line left, with a warning naming it, rather than refused whole
  (:func:`rotated_tail_left`); a file of another format is still refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from perfpredict.counts import counted, first_names
from perfpredict.errors import BadInputError, ChangedWhileReadError, given
from perfpredict.ingest._text.lines import (
    STDIN_PATH,
    check_input,
    drop_unfinished_line,
    ends_inside_line,
    file_sha256,
    is_stream,
    spooled,
    stream_name,
    unended_last_line,
)
from perfpredict.ingest.records import (
    BadRecord,
    BatchItem,
    IngestOptions,
    ParsedItem,
    RunBatch,
    Skipped,
)
from perfpredict.ingest.registry import (
    LINE_FORMATS,
    LIVE_LOG_FORMATS,
    PIPED_COMMAND_FORMATS,
    BatchParser,
    first_record,
    get_batch_parser,
    names_system,
    other_format_fix,
    reads_stream,
    refuse_job_script,
    rotated_copy_of,
    rotated_tail,
)
from perfpredict.store import Store
from perfpredict.store.handle import fills_store
from perfpredict.store.writer import BatchReport, ProgressCallback, write_file

__all__ = ["BatchReport", "ingest_file", "ingest_paths", "rotated_tail_left", "whole_stream"]

CHUNK_RECORDS = 5_000
#: What a parser yields, passed on as it came by :func:`whole_stream` and
#: :func:`rotated_tail_left`.
_Item = TypeVar("_Item")
#: How ingest options are made, for a caller who handed in something else (a dict).
OPTIONS_EXAMPLE = "perfpredict.ingest.records.IngestOptions(on_error='skip')"
#: What an ingest of a file that changed while it was read says (:func:`ingest_file`).
CHANGED_WHILE_READ = ("it changed while it was read (lines appended?), so a copy of it taken "
                      "after was ingested, up to its last complete line; what is written "
                      "since is stored by its next ingest")
#: What an ingest of a scheduler's log whose last line has no newline says of that line
#: (:func:`ingest_file`).
LAST_LINE_LEFT = ("the last line has no newline: left for the next ingest, as the "
                  "scheduler may still be writing it")
#: What it says instead where the file is the rotated copy of the log named
#: (:func:`~perfpredict.ingest.registry.rotated_copy_of`), which will not grow.
ROTATED_LAST_LINE_LEFT = ("the last line has no newline: left unread, as the file is the "
                          "copy of {log} rotated while that record was written (logrotate's "
                          "copytruncate), which will not grow: the rest of that record is "
                          "line 1 of {log}")
#: Why a stream of :data:`~perfpredict.ingest.registry.PIPED_COMMAND_FORMATS` that ends
#: inside a line is refused (:func:`whole_stream`).
CUT_STREAM = ("the stream ends inside this line, and sacct ends every line with a newline: "
              "the command writing it stopped early (killed, or its connection lost), so "
              "this line is cut and the jobs after it are missing; run it again (under set "
              "-o pipefail the pipeline fails with it), or give a saved file that only lacks "
              "its last newline by its name")
#: Files an ingest stopped by a bad one names as not read; more are counted.
UNREAD_SHOWN = 3


def _chunks(items: Iterable[BatchItem], size: int,
            ) -> Iterator[RunBatch | Skipped | list[ParsedItem]]:
    """Batches as they come, single items gathered into lists of up to ``size``."""
    chunk: list[ParsedItem] = []
    for item in items:
        if isinstance(item, RunBatch | Skipped):
            if chunk:
                yield chunk
                chunk = []
            yield item
            continue
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _check_input(fmt: str, path: Path) -> None:
    """Refuse ``path`` before anything of it is read when it cannot be ingested as
    ``fmt`` (:func:`~perfpredict.ingest._text.lines.check_input`, and a pipe of a format
    read from its own file)."""
    check_input(path)
    if is_stream(path) and not reads_stream(fmt):
        raise BadInputError(f"is a pipe; {fmt} logs are read from their own file, whose name "
                            "is kept with the run: give the log file", path=stream_name(path))


def _named_file(path: object) -> Path:
    """``path``, a text or a Path, as a Path. Anything else is refused saying what to do:
    a DataFrame of runs, the likeliest in a notebook, was a TypeError ("expected str,
    bytes or os.PathLike object"), and ``ingest_paths`` read its column names as files
    ("app: no such file")."""
    if isinstance(path, str | os.PathLike):
        return Path(path)
    raise BadInputError(f"a file to ingest is named by its path, not a {type(path).__name__}; "
                        "write runs held in Python to a CSV file first (frame.to_csv("
                        "'runs.csv', index=False)) and ingest that file: its checksum is "
                        "what keeps a second ingest of it from storing anything twice")


@fills_store
def ingest_file(store: Store, fmt: str, path: str | Path, options: IngestOptions | None = None,
                progress: ProgressCallback | None = None,
                replaces: Sequence[str] = ()) -> BatchReport:
    """Ingest one file of format ``fmt`` into ``store``: ``perfpredict ingest FMT PATH``.

    ``fmt`` is one of :data:`~perfpredict.ingest.registry.FORMATS` ("csv", "sacct",
    "sacct-json", "jobcomp", "swf", "pbs", "lsf", "sge", "darshan"); ``path`` a file, or
    ``"-"`` for standard input; ``options`` an :class:`IngestOptions` (``system``,
    ``on_error="skip"``, the command's other options). Returns the file's
    :class:`~perfpredict.store.writer.BatchReport`: ``n_stored`` runs stored,
    ``n_duplicates`` already held, ``n_rejected`` kept as rejects, ``already_ingested``
    for a file stored before (which stores nothing again), and its ``warnings``.

    A bad record raises :class:`~perfpredict.errors.BadInputError` naming the file and
    line, and nothing of the file is stored (one transaction per file), so the call can
    be repeated once the file is fixed; the module doc lists the guarantees.
    ``replaces``: checksums of earlier releases of the file, whose runs it replaces
    (:func:`~perfpredict.store.writer.write_file`)."""
    options = (IngestOptions() if options is None
               else given(options, IngestOptions, OPTIONS_EXAMPLE))
    options.validate()
    path = _named_file(path)
    parse = get_batch_parser(fmt)
    options.check_format(fmt)
    _check_input(fmt, path)
    stream = is_stream(path)
    name = Path(stream_name(path)) if stream else path
    if not stream:
        # before --system is asked for, which would not make a script readable either; a
        # stream is checked in its copy, once taken (_ingest_copy)
        refuse_job_script(path, options)
    if not options.system and not names_system(fmt):
        # a log of another format says so first, at its first record (as it does once
        # --system is given): --system would not make it readable
        other = None if stream else other_format_fix(path, fmt, "", options.read_as)
        if other:
            raise BadInputError(f"{other} (nothing from this file was stored)", path=name,
                                line_no=first_record(path)[0])
        raise BadInputError(f"{fmt} logs do not name the machine their jobs ran on; pass "
                            "--system NAME (nothing from this file was stored)", path=name)
    if stream:
        # a scheduler's log piped in (ssh host cat accounting/today | ...) is read as its
        # file is: a line still being written is left for the next ingest, which pipes
        # the log in grown (it was refused, the whole log with it, once an hour or so)
        return _ingest_copy(store, path, name, fmt, parse, options, progress, replaces,
                            stored_as=str(name), whole_lines=fmt in LIVE_LOG_FORMATS)
    if fmt in LIVE_LOG_FORMATS and ends_inside_line(path):
        # a record still being written (LIVE_LOG_FORMATS): a copy up to the line before
        # is ingested, whose checksum the same file, unchanged, has again (said already
        # ingested), and the file once whole is another, whose jobs before that line are
        # found stored by their keys and the one after it stored once
        return _ingest_copy(store, path, name, fmt, parse, options, progress, replaces,
                            whole_lines=True)
    as_read = _file_state(path)
    left: list[str] = []
    try:
        report = write_file(store, path, fmt, file_sha256(path), options,
                            _chunks(_unchanged(rotated_tail_left(parse(path, options), path,
                                                                 fmt, left), path, as_read),
                                    CHUNK_RECORDS), progress, replaces)
        report.warnings += left
        return report
    except ChangedWhileReadError:
        pass  # nothing of it was stored: its copy, taken now, is ingested instead
    except BadInputError:
        if _file_state(path) == as_read:
            raise
        # refused, perhaps at a line still being written: its copy is read up to the last
        # whole line (a bad line before it is refused again, in the copy)
    check_input(path)  # moved away meanwhile: said as for a file never there
    report = _ingest_copy(store, path, name, fmt, parse, options, progress, replaces,
                          whole_lines=fmt in LINE_FORMATS)
    report.warnings.append(CHANGED_WHILE_READ)
    return report


def _ingest_copy(store: Store, path: Path, name: Path, fmt: str, parse: BatchParser,
                 options: IngestOptions, progress: ProgressCallback | None,
                 replaces: Sequence[str], stored_as: str | None = None,
                 whole_lines: bool = False) -> BatchReport:
    """Ingest a copy of ``path`` (:func:`~perfpredict.ingest._text.lines.spooled`), read
    with ``fmt``'s ``parse``, whose checksum is of what is parsed, whatever is written to
    ``path`` meanwhile; up to its last line break where ``whole_lines``, a line after it
    said left for the next ingest in a scheduler's log (:data:`LAST_LINE_LEFT`; in its
    rotated copy, which will not grow, left for good: :data:`ROTATED_LAST_LINE_LEFT`). Bad
    input in the copy names ``name``."""
    with spooled(path) as copy:
        left = whole_lines and drop_unfinished_line(copy) and fmt in LIVE_LOG_FORMATS
        try:
            if is_stream(path):  # read only now (ingest_file checked a file before)
                refuse_job_script(copy, options)
            items = parse(copy, options)
            if is_stream(path) and fmt in PIPED_COMMAND_FORMATS:
                items = whole_stream(items, copy)
            first_left: list[str] = []
            report = write_file(store, name, fmt, file_sha256(copy), options,
                                _chunks(rotated_tail_left(items, copy, fmt, first_left),
                                        CHUNK_RECORDS),
                                progress, replaces, stored_as=stored_as, read_from=copy)
            report.warnings += first_left
        except BadInputError as exc:
            if exc.path != str(copy):
                raise
            raise exc.naming(name) from exc
    if left:
        log = None if is_stream(path) else rotated_copy_of(path)
        report.warnings.append(ROTATED_LAST_LINE_LEFT.format(log=log) if log
                               else LAST_LINE_LEFT)
    return report


def whole_stream(items: Iterable[_Item], copy: Path) -> Iterator[_Item | BadRecord]:
    """``items``, parsed from ``copy``, that of a stream of
    :data:`~perfpredict.ingest.registry.PIPED_COMMAND_FORMATS`; where the stream ends
    inside a line, that line alone, as the whole stream's bad record (:data:`CUT_STREAM`):
    the command that wrote it stopped early, so what it wrote is not all there was, and
    storing the jobs before the cut would make a cron job's sacct failure pass unseen.
    ``advise walltime --input -`` reads its stream through this too: advised, the cut
    line was a job with a value cut short."""
    cut = unended_last_line(copy)
    if cut is None:
        yield from items
        return
    yield BadRecord(*cut, CUT_STREAM, whole_file=True)


def rotated_tail_left(items: Iterable[_Item], path: Path, fmt: str,
                      warnings: list[str]) -> Iterator[_Item]:
    """``items``, parsed from ``path`` as ``fmt``, but for the bad record of its line 1
    where that line is the rest of a record cut by the log's rotation
    (:func:`~perfpredict.ingest.registry.rotated_tail`): left, and why added to
    ``warnings``, rather than refusing the whole log."""
    why = rotated_tail(path, fmt)
    for item in items:
        if why and isinstance(item, BadRecord) and item.line_no == 1 and not item.whole_file:
            warnings.append(why)
            why = None
            continue
        yield item


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """What tells that ``path`` changed: its inode (a file replaced), size and time of
    last change; None once it is gone."""
    try:
        state = path.stat()
    except OSError:
        return None
    return state.st_ino, state.st_size, state.st_mtime_ns


def _unchanged(items: Iterable[BatchItem], path: Path, as_read: tuple[int, int, int] | None
               ) -> Iterator[BatchItem]:
    """``items``, parsed from ``path``, then :class:`ChangedWhileReadError` if the file
    changed since it was ``as_read`` (before its checksum), which undoes its ingest."""
    yield from items
    if _file_state(path) != as_read:
        raise ChangedWhileReadError(f"{path} changed while it was read")


@fills_store
def ingest_paths(store: Store, fmt: str, paths: str | os.PathLike[str] | Iterable[str | Path],
                 options: IngestOptions | None = None,
                 progress: ProgressCallback | None = None,
                 on_report: Callable[[BatchReport], None] | None = None) -> list[BatchReport]:
    """Ingest several files, each in its own transaction (a bad one stops the rest, the
    files before it stored, and its error names the files after it, not read: a nightly
    job's log must say which to ingest again). Every path is checked before any file is
    read, so a
    mistyped one stores nothing; ``on_report`` is told of each file as it is stored, so
    that what was stored before a bad file is said. One path, a text or a Path, is one
    file (a text was read as paths of its letters, "/: is a directory", and a Path was
    a TypeError)."""
    # a DataFrame is one table given, not the file names its iteration gives (its columns);
    # what is no path and holds none (5) is one thing given too, refused as no path
    if (isinstance(paths, str | os.PathLike) or hasattr(paths, "to_csv")
            or not isinstance(paths, Iterable)):
        files = [_named_file(paths)]
    else:
        files = [_named_file(p) for p in paths]
    if sum(str(path) == STDIN_PATH for path in files) > 1:
        raise BadInputError("'-' (standard input) is given more than once; it can be read "
                            "only once")
    for path in files:
        _check_input(fmt, path)
    reports = []
    for i, path in enumerate(files):
        try:
            reports.append(ingest_file(store, fmt, path, options, progress))
        except BadInputError as exc:
            unread = [str(later) for later in files[i + 1:]]
            if not unread:
                raise
            were = "was" if len(unread) == 1 else "were"
            raise exc.adding(f"{counted(len(unread), 'file')} given after it {were} not read: "
                             f"{first_names(unread, shown=UNREAD_SHOWN)}") from exc
        if on_report is not None:
            on_report(reports[-1])
    return reports

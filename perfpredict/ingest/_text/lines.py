"""Reading input files line by line with bounded memory, gzip handled transparently."""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from perfpredict.errors import BadInputError, DamagedStreamError, PerfPredictError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
#: What reading a damaged gzip stream raises: cut short (EOFError), a bad header or
#: checksum (gzip.BadGzipFile, an OSError), damaged compressed data (zlib.error, which
#: reached the user as an internal error).
STREAM_DAMAGE = (OSError, EOFError, zlib.error)
#: Most bytes asked of a stream at once by :func:`read_upto`.
READ_PIECE_BYTES = 1 << 20


#: The path that names standard input (``sacct ... | perfpredict ingest sacct -``), and
#: how a message or a stored batch names it.
STDIN_PATH = "-"
STDIN_NAME = "<stdin>"


def readable_file(path: Path) -> bytes:
    """The first two bytes of ``path``; a missing file, a directory, a device or a file
    the user may not read is bad input that says which.

    A pipe is not read here: it gives its bytes once, and a file is read several times
    (these bytes, its checksum, its records), so ingest copies a stream to a file first
    (:func:`spooled`). Given where no copy is made, it is refused before it is opened,
    which would wait for a writer."""
    try:
        mode = path.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            kind = "a pipe" if is_stream(path) else "a device"
            raise BadInputError(f"is {kind}, not a file; perfpredict reads a file more than "
                                "once: save the output to a file first (sacct ... > "
                                "jobs.psv) and give that", path=path)
        with path.open("rb") as probe:
            return probe.read(2)
    except FileNotFoundError as exc:
        raise BadInputError("no such file; check the path", path=path) from exc
    except IsADirectoryError as exc:
        raise BadInputError("is a directory, not a file; name the files inside", path=path) from exc
    except PermissionError as exc:
        raise BadInputError("permission denied; check the file's permissions", path=path) from exc


def is_stream(path: Path) -> bool:
    """Whether ``path`` gives its bytes once: ``-`` (standard input), a pipe
    (``/dev/stdin`` piped, ``<(sacct ...)``, a named FIFO) or a socket. ``/dev/stdin``
    redirected from a file (``< jobs.psv``) is that file."""
    if str(path) == STDIN_PATH:
        return True
    try:
        mode = path.stat().st_mode
    except OSError:  # missing or unreadable: readable_file says which
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def stream_name(path: Path) -> str:
    """How messages and the store name the stream ``path``: ``<stdin>`` for ``-``, else
    the path as given (resolved, ``/dev/fd/63`` is a pipe of a process long gone)."""
    return STDIN_NAME if str(path) == STDIN_PATH else str(path)


def check_input(path: Path) -> None:
    """Refuse ``path`` before anything is read when it cannot be: a file as
    :func:`readable_file` does, standard input when it is a terminal (nothing was piped
    in, and ingest would wait for typed lines). A pipe is not opened: opening one waits
    for its writer."""
    if str(path) == STDIN_PATH:
        if sys.stdin is None or sys.stdin.isatty():
            raise BadInputError("standard input is a terminal, not a pipe; pipe the output "
                                "in (sacct ... | perfpredict ingest sacct -) or give a file",
                                path=STDIN_NAME)
    elif not is_stream(path):
        readable_file(path)


@contextmanager
def spooled(path: Path) -> Iterator[Path]:
    """A temporary copy (in ``TMPDIR``) of the stream ``path`` (:func:`is_stream`), or
    of a file that changed while it was read, removed on leaving. Copied a piece at a
    time, so memory stays bounded whatever the stream's size; its bytes as they came, so
    a gzip stream stays gzip and the copy's checksum is the stream's. Like ``cat``, a
    named pipe no one writes to is waited on until one does (or Ctrl-C)."""
    with ExitStack() as stack:
        source = (sys.stdin.buffer if str(path) == STDIN_PATH
                  else stack.enter_context(path.open("rb")))
        handle, name = tempfile.mkstemp(prefix="perfpredict-", suffix=".spool")
        copy = Path(name)
        stack.callback(copy.unlink, missing_ok=True)
        with os.fdopen(handle, "wb") as sink:
            try:
                shutil.copyfileobj(source, sink, READ_PIECE_BYTES)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                    raise
                raise PerfPredictError(
                    f"{stream_name(path)}: no room to copy the stream to "
                    f"{tempfile.gettempdir()} ({exc.strerror}); nothing was stored: set "
                    "TMPDIR to a directory with room, or save the output to a file and give "
                    "that") from exc
        yield copy


@contextmanager
def read_through(path: Path) -> Iterator[Path]:
    """``path`` as a file to read: itself, or a stream's temporary copy (:func:`spooled`),
    refused first when it cannot be read (:func:`check_input`). Bad input about the copy
    names the stream as the user gave it (``<stdin>``), not the copy."""
    check_input(path)
    if not is_stream(path):
        yield path
        return
    with spooled(path) as copy:
        try:
            yield copy
        except BadInputError as exc:
            if exc.path != str(copy):
                raise
            raise exc.naming(stream_name(path)) from exc


def open_binary(path: Path):  # type: ignore[no-untyped-def]
    """The file as a binary stream, decompressed when it is gzip (by content, not name),
    past a UTF-8 byte-order mark. Text in UTF-16 or UTF-32 (a spreadsheet's "Unicode
    text" export) is bad input saying so: read as UTF-8 its every other byte is NUL, and
    its header would be refused as naming columns that are not there. A file compressed
    otherwise than with gzip (:data:`OTHER_COMPRESSION`) is bad input naming the command
    that decompresses it.

    The mark is skipped here, for every text format at once: a file saved by an editor
    or PowerShell (``Out-File -Encoding utf8``) starts with it, and read as text it was
    part of the first field, so a PBS, LSF, SWF or jobcomp log was refused at line 1 as
    not being one, and a Grid Engine log's first queue name was stored with it."""
    magic = readable_file(path)
    fh = gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")
    try:
        head = fh.peek(HEAD_BYTES)[:HEAD_BYTES]
    except STREAM_DAMAGE as exc:
        fh.close()
        raise damaged_stream(path, 1, exc) from exc
    if wide_text(head[:4]):
        fh.close()
        raise BadInputError(WIDE_TEXT_FIX, path=path)
    if compressed := next((how for pattern, how in OTHER_COMPRESSION.items()
                           if pattern.match(head)), None):
        fh.close()
        kind, command = compressed
        raise BadInputError(f"the file is {kind}-compressed; decompress it first ({command} "
                            f"{path.name}), or compress it with gzip, which is read as it is",
                            path=path)
    if head.startswith(UTF8_BOM):
        fh.read(len(UTF8_BOM))
    return fh


#: Magic numbers of the compressions logrotate and mail use besides gzip, and the
#: command that undoes each. Read as text, such a file was refused at line 1 as not
#: being a record of its format (only CSV and sacct said "binary").
#: bzip2's is its "BZh", block size and first block's (or end of stream's) magic: a text
#: may start with "BZh".
OTHER_COMPRESSION = {
    re.compile(rb"\xfd7zXZ\x00"): ("xz", "xz -d"),
    re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)"): ("bzip2", "bunzip2"),
    re.compile(rb"\x28\xb5\x2f\xfd"): ("zstd", "zstd -d"),
    re.compile(rb"PK\x03\x04"): ("zip", "unzip"),
}
#: Bytes of a file's start that say how it is encoded or compressed.
HEAD_BYTES = 10
WIDE_TEXT_FIX = "the file is UTF-16 or UTF-32 text; save it as UTF-8 (a spreadsheet's 'CSV UTF-8')"


def wide_text(head: bytes) -> bool:
    """Whether a file's first four bytes are UTF-16 or UTF-32 text: a byte-order mark
    followed by a NUL, or every other byte NUL (a BOM alone is no proof: a damaged UTF-8
    file may start with those two bytes)."""
    return len(head) >= 4 and b"\x00" in head[:4] and (
        head[:2] in (b"\xff\xfe", b"\xfe\xff")
        or head[1:4:2] == b"\x00\x00" or head[0:4:2] == b"\x00\x00")


def first_line_not_utf8(path: Path) -> int | None:
    """The first line (1-based) of the file ``path`` (decompressed where it is gzip, as
    :func:`open_binary` reads it) that is not UTF-8 text, where a reader decoding a block
    at a time can say only the byte's position in the block; a character's bytes never
    span a line break, so each line is decoded alone."""
    with open_binary(path) as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return line_no
    return None


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_no, text)`` pairs, 1-based, without the line ending.

    Invalid UTF-8 is replaced (U+FFFD) rather than rejected: a stray byte in a job name
    should not cost the job. A corrupt gzip stream is bad input at the line it breaks.
    """
    return ((line_no, text) for line_no, text, _ in ended_lines(path))


#: Why the last line of a scheduler daemon's log is not read when no newline ends it.
#: The daemon ends every record with one (PBS, LSF, Grid Engine, Slurm's jobcomp), so
#: the file was cut short or is still being written; the cut record read as a job of
#: its own (``Resource_List.walltime=9`` of 96:00:00, ``ProcCnt=1`` of 16,
#: ``Cluster=al`` of alex), and the whole record, read later, changed none of it. An
#: ingest reads a plain file of such a log only up to its last newline
#: (:data:`~perfpredict.ingest.registry.LIVE_LOG_FORMATS`): this refuses such a line
#: inside a gzip file, which will not grow, and where these parsers are called alone.
#: Its fix is for a compressed copy, which said to ingest "the file again once it is
#: whole", as if the copy would grow: the log itself would.
CUT_SHORT_REASON = ("the last line has no newline at its end, as every record of this "
                    "log has: the log was cut short, or compressed or copied while that "
                    "line was written, and the record may be cut inside a value; ingest "
                    "the log itself (its last line is left for the next ingest until it is "
                    "whole) or a copy made once it is whole")


def ended_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """:func:`numbered_lines` with whether each line was ended by a newline (all but,
    perhaps, the last): a log whose every record ends with one refuses a last line
    without it (:data:`CUT_SHORT_REASON`)."""
    line_no = 0
    with open_binary(path) as fh:
        try:
            for line_no, raw in enumerate(fh, start=1):  # noqa: B007 - used after the loop
                yield (line_no, raw.decode("utf-8", errors="replace").rstrip("\r\n"),
                       raw.endswith(b"\n"))
        except STREAM_DAMAGE as exc:
            raise damaged_stream(path, line_no + 1, exc) from exc


class LineLookup:
    """The text of numbered lines of a file, read forward: lines asked for in order cost
    one read of the file in all, one asked for again (or before the last) starts over."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines: Iterator[tuple[int, str]] | None = None
        self._at = 0

    def text(self, line_no: int) -> str | None:
        """Line ``line_no`` (1-based) without its ending, or None past the file's end."""
        if self._lines is None or line_no <= self._at:
            self._lines, self._at = numbered_lines(self.path), 0
        for at, text in self._lines:
            self._at = at
            if at == line_no:
                return text
        self._lines = None
        return None


def read_upto(path: Path, fh: BinaryIO, size: int | None = None,
              first_line_no: int = 1) -> bytes:
    """``size`` bytes of the stream ``fh`` of ``path`` (fewer only at its end; None: all
    that is left), the first of them on line ``first_line_no``. Read a piece at a time
    (one decompression step of a gzip stream each), so that a damaged stream is refused
    at the first line it could not deliver whole: read at once, a file cut after 5,255
    lines was "damaged" at line 1."""
    pieces: list[bytes] = []
    n_read = 0
    try:
        while size is None or n_read < size:
            piece = fh.read1(READ_PIECE_BYTES if size is None  # type: ignore[attr-defined]
                             else min(size - n_read, READ_PIECE_BYTES))
            if not piece:
                break
            pieces.append(piece)
            n_read += len(piece)
    except STREAM_DAMAGE as exc:
        n_lines = sum(piece.count(b"\n") for piece in pieces)
        raise damaged_stream(path, first_line_no + n_lines, exc) from exc
    return b"".join(pieces)


def damaged_stream(path: Path, line_no: int, exc: Exception) -> DamagedStreamError:
    """The error for a corrupt gzip stream, at the first line it could not deliver
    (``line_no``), saying how far it was read."""
    where = f"after line {line_no - 1}" if line_no > 1 else "before its first line"
    return DamagedStreamError(f"the compressed stream is damaged {where} ({exc}); "
                              "re-copy the file", path=path, line_no=line_no)


def file_sha256(path: Path) -> str:
    """Checksum of the file as stored on disk, the identity of an ingest batch."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def ends_inside_line(path: Path) -> bool:
    """Whether the plain text file ``path`` ends without a newline after its last line
    (its first bytes and its last one read). A file that is not plain text, as its first
    bytes say, does not: gzip (a scheduler appends to a plain file, and one compressed
    while written is cut inside its stream, refused as damaged: :func:`damaged_stream`),
    another compression or a binary file (a NUL byte: UTF-16 text, a Darshan log),
    which its reader refuses or reads as it is."""
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
        if (not head or head.startswith(GZIP_MAGIC) or b"\x00" in head
                or any(pattern.match(head) for pattern in OTHER_COMPRESSION)):
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def unended_last_line(path: Path) -> tuple[int, str] | None:
    """The number and text of the last line of ``path`` (decompressed where it is gzip)
    when no newline ends it, else None. A plain file is read through only when its last
    byte is not a newline; a gzip one is, as its last bytes are compressed."""
    with path.open("rb") as fh:
        if fh.read(2) != GZIP_MAGIC and not ends_inside_line(path):
            return None
    last = None
    for last in ended_lines(path):  # noqa: B007 - the last one is wanted
        pass
    if last is None or last[2]:
        return None
    return last[0], last[1]


def drop_unfinished_line(path: Path) -> bool:
    """Cut the text file ``path`` after its last line break; whether there was anything
    after it to cut. A copy of a file taken while a line was being written to it ends
    with the part written, which read as a record is a wrong one ("...,45" of a runtime
    of 455.0 being written), and whose checksum no later version of the file has at a
    line break, so that the file, grown, was taken for an edited one. A gzip file is
    left whole (its bytes are no lines)."""
    with path.open("r+b") as fh:
        if fh.read(2) == GZIP_MAGIC:
            return False
        size = end = fh.seek(0, os.SEEK_END)
        while end > 0:
            start = max(end - READ_PIECE_BYTES, 0)
            fh.seek(start)
            at = fh.read(end - start).rfind(b"\n")
            if at >= 0:
                fh.truncate(start + at + 1)
                return start + at + 1 < size
            end = start
        fh.truncate(0)
        return size > 0


def line_prefix_sha256s(path: Path, wanted: Collection[str],
                        replaced: Mapping[int, bytes] | None = None) -> set[str]:
    """Which of the checksums ``wanted`` are those of the file's first lines, with or
    without the last one's line break: earlier versions of a file that grew by lines
    appended (a results CSV a benchmark script appends to, ingested every night). With
    ``replaced``, the lines it numbers (1-based) are read as the text it gives them, the
    rest as they are: an earlier version whose rejected lines were fixed since
    (:func:`perfpredict.store.file_versions.rejected_lines_read`)."""
    found: set[str] = set()
    digest = hashlib.sha256()
    replaced = replaced or {}

    def check() -> None:
        so_far = digest.copy().hexdigest()
        if so_far in wanted:
            found.add(so_far)

    with path.open("rb") as fh:
        for line_no, line in enumerate(fh, start=1):
            body = line.removesuffix(b"\n").removesuffix(b"\r")
            digest.update(replaced.get(line_no, body))
            if len(body) < len(line):
                check()
                digest.update(line[len(body):])
            check()
            if len(found) == len(wanted):
                break
    return found

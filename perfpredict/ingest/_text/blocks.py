"""Text input in blocks of whole lines, split into delimited fields with numpy.

A 1M-line accounting dump holds about 25M fields; making a Python string of each costs
more than sqlite3 takes to load the whole file. Here a block of a few MB stays one bytes
object, lines and fields are offsets into it, and a column becomes one fixed-width numpy
array only when a parser asks for it. Lines the split cannot vouch for (another field
count, non-ASCII or NUL bytes, a field over :data:`MAX_FIELD_BYTES`, blank lines) are
left out of the table; the parser reads those through its per-record code, so that each
rule keeps one definition.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from perfpredict.ingest._text.lines import open_binary, read_upto

#: Bytes read per block: memory stays bounded (a few times this) on files of any size.
BLOCK_BYTES = 4 << 20
#: Fields longer than this send their line to the per-record code, so that one long job
#: name cannot make a column's fixed-width array huge.
MAX_FIELD_BYTES = 1024
#: The ASCII bytes ``str.split()`` cuts at (``str.isspace``).
_BLANK_BYTES = b" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"


@dataclass
class LineBlock:
    """Whole lines of a file: ``data[starts[i]:ends[i]]`` is line ``first_line_no + i``
    without its line ending (``\\n`` and any ``\\r`` before it)."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray
    first_line_no: int

    @property
    def codes(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.uint8)

    @cached_property
    def padded_codes(self) -> np.ndarray:
        """The bytes and zeros after them, so that a field of up to
        :data:`MAX_FIELD_BYTES` starting anywhere can be read as a fixed-width window."""
        return np.concatenate([self.codes, np.zeros(MAX_FIELD_BYTES + 1, dtype=np.uint8)])

    @property
    def line_nos(self) -> np.ndarray:
        return self.first_line_no + np.arange(len(self.starts))

    def text(self, i: int) -> str:
        """Line ``i`` decoded as :func:`~perfpredict.ingest._text.lines.numbered_lines` does."""
        return self.data[self.starts[i]:self.ends[i]].decode("utf-8", errors="replace")

    def line_of(self, offsets: np.ndarray) -> np.ndarray:
        """Index of the line holding each byte offset."""
        return np.searchsorted(self.starts, offsets, side="right") - 1


def _block(data: bytes, first_line_no: int) -> LineBlock:
    codes = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(codes == ord("\n"))
    ends = newlines if data.endswith(b"\n") else np.append(newlines, len(data))
    starts = np.concatenate(([0], newlines[: len(ends) - 1] + 1))
    while True:  # "\r\n" and "\r\r\n" endings: strip every trailing CR
        carriage = (ends > starts) & (codes[ends - 1] == ord("\r"))
        if not carriage.any():
            break
        ends = ends - carriage
    return LineBlock(data, starts.astype(np.int64), ends.astype(np.int64), first_line_no)


def line_blocks(path: Path, block_bytes: int | None = None) -> Iterator[LineBlock]:
    """The file (gzip by content) as blocks of about ``block_bytes`` (default
    :data:`BLOCK_BYTES`) of whole lines."""
    block_bytes = block_bytes or BLOCK_BYTES
    next_line_no, pending = 1, b""
    with open_binary(path) as fh:
        while True:
            chunk = read_upto(path, fh, block_bytes, next_line_no + pending.count(b"\n"))
            data = pending + chunk
            cut = len(data) if not chunk else data.rfind(b"\n") + 1
            if cut:
                block = _block(data[:cut], next_line_no)
                next_line_no += len(block.starts)
                yield block
            if not chunk:
                return
            pending = data[cut:]


@dataclass
class ByteColumn:
    """One field of many lines as a zero-padded ``(n, width)`` byte matrix."""

    matrix: np.ndarray
    lengths: np.ndarray

    @property
    def values(self) -> np.ndarray:
        """The fields as a fixed-width bytes array (``S<width>``)."""
        return np.ascontiguousarray(self.matrix).view(f"S{self.matrix.shape[1]}").ravel()

    def equals(self, word: bytes) -> np.ndarray:
        """Which fields are exactly ``word``."""
        if len(word) > self.matrix.shape[1]:
            return np.zeros(len(self.lengths), dtype=bool)
        target = np.zeros(self.matrix.shape[1], dtype=np.uint8)
        target[: len(word)] = np.frombuffer(word, dtype=np.uint8)
        return (self.lengths == len(word)) & np.all(self.matrix == target, axis=1)

    def find(self, word: bytes) -> tuple[np.ndarray, np.ndarray]:
        """Per field: how often ``word`` occurs in it, and where it first does (-1: not)."""
        n, width = self.matrix.shape
        if width < len(word):
            return np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        hits = np.ones((n, width - len(word) + 1), dtype=bool)
        for k, byte in enumerate(word):
            hits &= self.matrix[:, k:k + hits.shape[1]] == byte
        counts = hits.sum(axis=1)
        return counts, np.where(counts > 0, hits.argmax(axis=1), -1)

    def take(self, rows: np.ndarray) -> ByteColumn:
        return ByteColumn(self.matrix[rows], self.lengths[rows])

    def slice(self, starts: np.ndarray, ends: np.ndarray) -> ByteColumn:
        """The bytes ``[starts, ends)`` of each field (positions within the field)."""
        return gather(self.matrix.ravel(), np.arange(len(starts)) * self.matrix.shape[1]
                      + starts, np.maximum(ends - starts, 0))


def gather(codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> ByteColumn:
    """The byte ranges ``codes[starts[i]:starts[i] + lengths[i]]`` as a column."""
    width = max(int(lengths.max(initial=0)), 1)
    starts = np.where(lengths > 0, starts, 0)
    shortfall = int(starts.max(initial=0)) + width - len(codes)
    if shortfall > 0:
        codes = np.concatenate([codes, np.zeros(shortfall, dtype=np.uint8)])
    # every window of `width` bytes as one item, without copying; indexing copies the
    # chosen ones (three times faster than taking rows of a 2-d view of the windows)
    codes = np.ascontiguousarray(codes)
    windows = np.ndarray((len(codes) - width + 1,), dtype=f"V{width}", buffer=codes,
                         strides=(1,))
    matrix = windows[starts].view(np.uint8).reshape(len(starts), width)
    # Zero what follows each field: row L of `keep` is L bytes of 0xFF, then zeros. Taking
    # one row per field and and-ing costs half of comparing every byte's offset.
    keep = np.where(np.arange(width) < np.arange(width + 1)[:, None], np.uint8(0xFF),
                    np.uint8(0))
    matrix &= np.take(keep, lengths, axis=0)
    return ByteColumn(matrix, lengths.astype(np.int64))


@dataclass
class FieldTable:
    """The lines of a block that split into exactly the expected fields: ``lines`` are
    their indices in the block, ``starts``/``ends`` byte offsets of shape
    ``(len(lines), n_columns)``."""

    block: LineBlock
    lines: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def column(self, j: int | None, rows: np.ndarray) -> ByteColumn:
        """Field ``j`` of the table rows ``rows``; ``None`` (a column the file lacks)
        is an empty field on every row."""
        if j is None:
            return ByteColumn(np.zeros((len(rows), 1), np.uint8), np.zeros(len(rows), np.int64))
        starts = self.starts[rows, j]
        return gather(self.block.padded_codes, starts, self.ends[rows, j] - starts)

    def cells(self) -> ByteColumn:
        """Every field of every row, row after row: one column to convert at once when
        all fields are read alike."""
        starts = self.starts.ravel()
        return gather(self.block.padded_codes, starts, self.ends.ravel() - starts)


def _odd_lines(block: LineBlock) -> np.ndarray:
    """Lines with non-ASCII or NUL bytes, whose splitting is left to ``str`` methods."""
    codes = block.codes
    odd = np.zeros(len(block.starts), dtype=bool)
    # Nearly every block has none: its minimum and maximum say so in a fraction of a
    # millisecond, while finding the bytes themselves takes ten.
    if len(codes) and (codes.min() == 0 or codes.max() >= 0x80):
        odd[block.line_of(np.flatnonzero((codes == 0) | (codes >= 0x80)))] = True
    return odd


def _short_fields(block: LineBlock, lines: np.ndarray, starts: np.ndarray,
                  ends: np.ndarray) -> FieldTable:
    """The table of the lines whose fields all fit :data:`MAX_FIELD_BYTES`."""
    lengths = ends - starts
    if lengths.max(initial=0) <= MAX_FIELD_BYTES:  # the usual case: no copies
        return FieldTable(block, lines, starts, ends)
    short = np.all(lengths <= MAX_FIELD_BYTES, axis=1)
    return FieldTable(block, lines[short], starts[short], ends[short])


def split_whitespace(block: LineBlock, n_columns: int) -> FieldTable:
    """The lines of ``block`` with exactly ``n_columns`` fields as ``str.split()`` (no
    argument) cuts them: at runs of whitespace, none before the first or after the last."""
    codes = block.codes
    blank = np.zeros(256, dtype=bool)
    blank[list(_BLANK_BYTES)] = True
    filled = np.concatenate(([False], ~blank[codes], [False]))
    edges = np.flatnonzero(filled[1:] != filled[:-1])  # field starts and ends, alternating
    field_starts, field_ends = edges[0::2], edges[1::2]
    first = np.searchsorted(field_starts, block.starts)  # no field spans a "\n"
    counts = np.diff(np.append(first, len(field_starts)))
    ok = (counts == n_columns) & ~_odd_lines(block)
    keep = np.repeat(ok, counts)
    lines = np.flatnonzero(ok)
    return _short_fields(block, lines, field_starts[keep].reshape(len(lines), n_columns),
                         field_ends[keep].reshape(len(lines), n_columns))


def split_fields(block: LineBlock, delimiter: bytes, n_columns: int,
                 trailing_delimiter: bool) -> FieldTable:
    """The lines of ``block`` with exactly ``n_columns`` fields (one more, empty, after a
    trailing delimiter when ``trailing_delimiter``), as ``str.split`` would cut them."""
    codes, width = block.codes, len(delimiter)
    odd = _odd_lines(block)
    hits = codes[: len(codes) - width + 1] == delimiter[0]
    for k, byte in enumerate(delimiter[1:], start=1):
        hits &= codes[k:k + len(hits)] == byte
    positions = np.flatnonzero(hits)
    if width > 1:  # overlapping matches ("^|^|^"): leave them to str.split
        odd[block.line_of(positions[1:][np.diff(positions) < width])] = True
    # delimiters of line i: positions[first[i]:first[i + 1]] (none sit in line endings)
    first = np.searchsorted(positions, block.starts)
    counts = np.diff(np.append(first, len(positions)))
    last = first + counts - 1
    # The rule of sacct_rows.Layout.split: with a trailing delimiter (-p) every line has
    # exactly one delimiter per column and ends with one; else one fewer.
    trailing = trailing_delimiter & (counts == n_columns) & (
        positions[np.maximum(last, 0)] + width == block.ends if len(positions) else False)
    ok = (trailing if trailing_delimiter else counts == n_columns - 1) & ~odd
    keep = np.repeat(ok, counts)
    keep[last[ok & trailing]] = False
    lines = np.flatnonzero(ok)
    cuts = positions[keep].reshape(len(lines), n_columns - 1)
    # filled in place: a third cheaper than np.column_stack's temporaries
    starts = np.empty((len(lines), n_columns), dtype=np.int64)
    starts[:, 0] = block.starts[lines]
    np.add(cuts, width, out=starts[:, 1:])
    ends = np.empty_like(starts)
    ends[:, :-1] = cuts
    ends[:, -1] = np.where(trailing[lines], block.ends[lines] - width, block.ends[lines])
    return _short_fields(block, lines, starts, ends)

"""Earlier versions of a file: what it held when it was ingested from the same path
before, found as its first lines. A results CSV a benchmark script appends to is
ingested every night; each night's file is the last one with lines added, and the store
knows it as the same file (:func:`perfpredict.store.writer.write_file` keys its rows as
the first version's, ``runs delete --file`` takes every version back out). So is a file
whose only other change is lines an earlier ingest rejected, fixed as the rejection
asked: found by putting back the text its rejects kept of those lines."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection

from perfpredict.ingest._text.lines import line_prefix_sha256s
from perfpredict.store.schema import ingest_batches, rejects


def batches_from(conn: Connection, stored_path: str, sha256: str, fmt: str | None = None
                 ) -> list[tuple[int, str]]:
    """The batches (id and checksum) ingested from ``stored_path`` (a resolved path, or
    ``<stdin>``: the same script's output piped in every night) with content other than
    ``sha256``'s, as ``fmt`` if given, oldest first."""
    query = select(ingest_batches.c.id, ingest_batches.c.sha256).where(
        ingest_batches.c.path == stored_path, ingest_batches.c.sha256 != sha256)
    if fmt is not None:
        query = query.where(ingest_batches.c.format == fmt)
    return [(row.id, row.sha256) for row in conn.execute(query.order_by(ingest_batches.c.id))]


def line_prefixes(batches: list[tuple[int, str]], file: Path) -> list[int]:
    """Those of ``batches`` whose file was ``file`` less lines appended since. The file
    is read only where there are such batches to look for (one pass: 0.2-0.5 s for 200k
    lines, docs/performance.md)."""
    if not batches:
        return []
    prefixes = line_prefix_sha256s(file, {sha256 for _, sha256 in batches})
    return [batch_id for batch_id, sha256 in batches if sha256 in prefixes]


def rejected_lines_read(conn: Connection, batches: list[tuple[int, str]], file: Path
                        ) -> dict[int, list[int]]:
    """Those of ``batches`` whose file was ``file`` (less lines appended since) but for
    lines the batch rejected, with those lines: every line it stored is unchanged, at the
    same line. Told by the checksum of ``file`` with each such line put back as its
    reject kept it; a reject kept otherwise than as its line (a CSV row of quoted cells,
    kept as its cells joined; a line cut to 10,000 characters) finds no such batch. The
    file is read once per batch with rejects of a line."""
    found: dict[int, list[int]] = {}
    for batch_id, sha256 in batches:
        as_rejected = {line_no: (raw or "").encode("utf-8")
                       for line_no, raw in conn.execute(
                           select(rejects.c.line_no, rejects.c.raw).where(
                               rejects.c.batch_id == batch_id, rejects.c.line_no.is_not(None)))}
        if as_rejected and line_prefix_sha256s(file, {sha256}, as_rejected):
            found[batch_id] = sorted(as_rejected)
    return found


def earlier_versions(conn: Connection, stored_path: str, file: Path, sha256: str) -> list[int]:
    """The batches ingested from ``stored_path`` before whose file was ``file`` (checksum
    ``sha256``) less lines appended since, or less lines appended and lines it rejected
    fixed since (:func:`rejected_lines_read`), oldest first."""
    earlier = batches_from(conn, stored_path, sha256)
    grown = line_prefixes(earlier, file)
    fixed = rejected_lines_read(conn, [b for b in earlier if b[0] not in grown], file)
    return sorted([*grown, *fixed])

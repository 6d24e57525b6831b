"""Earlier versions of a file: what it held when it was ingested from the same path
before, found as its first lines. A results CSV a benchmark script appends to is
ingested every night; each night's file is the last one with lines added, and the store
knows it as the same file (:func:`perfpredict.store.writer.write_file` keys its rows as
the first version's, ``runs delete --file`` takes every version back out)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection

from perfpredict.ingest._text.lines import line_prefix_sha256s
from perfpredict.store.schema import ingest_batches


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


def earlier_versions(conn: Connection, stored_path: str, file: Path, sha256: str) -> list[int]:
    """The batches ingested from ``stored_path`` before whose file was ``file`` (checksum
    ``sha256``) less lines appended since, oldest first."""
    return line_prefixes(batches_from(conn, stored_path, sha256), file)

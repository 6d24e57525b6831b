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


def earlier_versions(conn: Connection, stored_path: str, file: Path, sha256: str,
                     fmt: str | None = None) -> list[int]:
    """The batches ingested from ``stored_path`` (a resolved path, or ``<stdin>``: the
    same script's output piped in every night) before, as ``fmt`` if given, whose file
    was ``file`` (checksum ``sha256``) less lines appended since, oldest first. The file
    is read only where such batches exist (one pass: 0.2-0.5 s for 200k lines,
    docs/performance.md)."""
    query = select(ingest_batches.c.id, ingest_batches.c.sha256).where(
        ingest_batches.c.path == stored_path, ingest_batches.c.sha256 != sha256)
    if fmt is not None:
        query = query.where(ingest_batches.c.format == fmt)
    earlier = conn.execute(query.order_by(ingest_batches.c.id)).all()
    if not earlier:
        return []
    prefixes = line_prefix_sha256s(file, {row.sha256 for row in earlier})
    return [row.id for row in earlier if row.sha256 in prefixes]

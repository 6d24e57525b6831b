"""Where a SQLite store lives and how to open it, decided without touching it.

Standard library only: an estimate reads a SQLite store through ``sqlite3`` and must not
import SQLAlchemy (see :mod:`perfpredict.store`), yet it must refuse a missing store and
read a read-only one exactly as the commands that open an engine do.

A store is read-only when the user cannot write its file, or its directory (SQLite's WAL
needs a ``-wal`` and ``-shm`` file beside the store). Write permission bits count as well
as ``os.access``: a center that ``chmod 444``-s its shared store means it to be read-only
for everyone, root included (root passes every ``os.access`` check, and SQLite would then
create files in a directory its owner made read-only).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import quote

from perfpredict.config import command_url, origin_note
from perfpredict.errors import NotFoundError


def sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL; None for other backends and in-memory stores."""
    _, sep, rest = url.partition(":///")
    path = rest.split("?", 1)[0]
    if not url.startswith("sqlite") or not sep or path in ("", ":memory:"):
        return None
    return Path(path).expanduser()


def missing_store(where: str, named_by: str | None = None) -> NotFoundError:
    """The error of every command but ``db init`` and ``ingest`` on a store that is not
    there: they never create one by accident (a mistyped ``--db`` would otherwise answer
    from an empty store, or from the bundled predictor, without a word).

    ``named_by`` is where the CLI found the URL (:func:`perfpredict.config.resolve_db`);
    None for a library caller, who passed it, and is told the calls that create a store
    rather than the commands (it was told "perfpredict --db ... db init, or check --db
    and PERFPREDICT_DB")."""
    if named_by is None:
        return NotFoundError(
            f"no store at {where}; create it with perfpredict.store.open_store({where!r}) "
            f"or by ingesting into it (perfpredict.ingest.ingest_file({where!r}, FORMAT, "
            "FILE))")
    return NotFoundError(
        f"no store at {where} (from {named_by}); create it with \"perfpredict --db "
        f"{command_url(where)} db init\" or by ingesting into it (\"perfpredict --db ... "
        f"ingest FORMAT FILE\"), or correct {named_by}")


def require_sqlite_file(path: Path, named_by: str | None = None) -> None:
    """Raise :func:`missing_store` unless ``path`` is an existing file."""
    if path.is_dir():
        raise NotFoundError(f"no store at {path}{origin_note(named_by)}: it is a directory; "
                            f"give a file path such as {path / 'perfpredict.db'}")
    if not path.exists():
        raise missing_store(str(path), named_by)


def url_to_read(url: str, *, named: bool, named_by: str | None = None) -> str | None:
    """``url`` for a command that only reads a store through its URL (``estimate``), or
    None when the user named no store and the default one does not exist yet: a first
    estimate then answers from the bundled predictor. A store the user named must exist
    (``named_by``: where, for its message)."""
    path = sqlite_file(url)
    if path is None:
        return url
    if not named and not path.exists():
        return None
    require_sqlite_file(path, named_by)
    return url


def _writable(path: Path) -> bool:
    mode = path.stat().st_mode
    return os.access(path, os.W_OK) and bool(stat.S_IMODE(mode) & 0o222)


def sqlite_read_only(path: Path) -> bool:
    """Whether the store at ``path`` (an existing file) must be opened read-only."""
    return not (_writable(path) and _writable(path.parent))


def sqlite_uri(path: Path, *, read_only: bool = False) -> str:
    """The ``sqlite3.connect(..., uri=True)`` address of an existing store file, opened
    read-only when asked (an estimate only reads) or when the user cannot write it.

    Read-only stores are opened with ``mode=ro``; when not even the ``-shm`` file can be
    created (read-only directory, no writer has it open) they are also ``immutable``,
    the one way SQLite reads a WAL store without writing beside it. Nobody can be writing
    to it then: a writer needs that same directory.
    """
    uri = f"file:{quote(str(path.resolve()))}"
    if not (read_only or sqlite_read_only(path)):
        return uri
    shm = path.with_name(path.name + "-shm")
    if not _writable(path.parent) and not shm.exists():
        return uri + "?mode=ro&immutable=1"
    return uri + "?mode=ro"

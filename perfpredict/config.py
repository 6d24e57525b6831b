"""Settings, resolved in one place: flag, then ``PERFPREDICT_*`` environment variable,
then the config file, then the default.

The user directory is ``$PERFPREDICT_HOME`` when set (tests set it so they never touch
``$HOME``), else the platform's user data directory. The config file is
``<home>/config.toml``; it may set ``db = "sqlite:///..."`` or
``db = "postgresql+psycopg://..."``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from perfpredict.errors import BadInputError

HOME_ENV = "PERFPREDICT_HOME"
DB_ENV = "PERFPREDICT_DB"
DEFAULT_DB_FILENAME = "perfpredict.db"
#: What the config file may set.
CONFIG_KEYS = ("db",)


def home_dir() -> Path:
    """The directory holding the default store, the config file and caches."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("perfpredict", appauthor=False))


def config_path() -> Path:
    return home_dir() / "config.toml"


def read_config() -> dict[str, Any]:
    """The config file's contents, or an empty dict when there is none."""
    path = config_path()
    if not path.exists():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as fh:
            config = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"the config file is not valid TOML ({exc}); fix or delete it",
                            path=path) from exc
    except OSError as exc:  # a directory, a file the user may not read
        raise BadInputError(f"the config file cannot be read ({exc.strerror}); fix or "
                            "delete it", path=path) from exc
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise BadInputError(f"the config file sets {', '.join(map(repr, unknown))}, which "
                            f"perfpredict does not read; it reads {', '.join(CONFIG_KEYS)}",
                            path=path)
    if "db" in config and (not isinstance(config["db"], str) or not config["db"].strip()):
        raise BadInputError(f"db must be a store URL or file path in quotes, got "
                            f"{config['db']!r}; fix it, or delete the line for the default "
                            "store", path=path)
    return config


def named_db_url(flag: str | None = None) -> str | None:
    """The store the user named (``--db`` flag, then ``PERFPREDICT_DB``, then config
    ``db``), or None when they named none and the default store is meant (an empty
    ``PERFPREDICT_DB`` names none)."""
    named = _named_db(flag)
    return named[0] if named else None


def _named_db(flag: str | None) -> tuple[str, str] | None:
    """:func:`named_db_url` and where it was named (:func:`resolve_db`)."""
    if flag:
        return flag, "--db"
    if os.environ.get(DB_ENV, "").strip():
        return os.environ[DB_ENV].strip(), f"${DB_ENV}"
    configured = _beside_config(read_config().get("db"))
    return (configured, f"the db line of {config_path()}") if configured else None


def _beside_config(db: str | None) -> str | None:
    """The config file's ``db``, a relative SQLite path (``center.db``,
    ``sqlite:///center.db``) taken from the config file's folder, as a file's settings
    are read: from the working directory, ``train`` in another folder found no store
    and ``ingest`` there made a second one."""
    if db is None:
        return None
    prefix = "sqlite:///" if db.startswith("sqlite:///") else ""
    if "://" in db and not prefix:
        return db
    path = db.removeprefix(prefix)
    if path == ":memory:" or Path(path).expanduser().is_absolute():
        return db
    return f"{prefix}{config_path().parent / path}"


def resolve_db_url(flag: str | None = None) -> str:
    """The store URL: the one the user named (:func:`named_db_url`), else a SQLite file in
    the user directory. A bare file path is accepted as a SQLite store."""
    return resolve_db(flag)[0]


def resolve_db(flag: str | None = None) -> tuple[str, str]:
    """:func:`resolve_db_url` and where that URL came from ("--db", "$PERFPREDICT_DB",
    "the db line of CONFIG", "the default path"), for the messages about a store the
    CLI chose (``open_store(..., named_by=...)``): they said "check --db and
    PERFPREDICT_DB" to a notebook that had passed the URL itself, and to a user whose
    URL came from one of the two."""
    named = _named_db(flag)
    if named is not None:
        return store_url(named[0]), named[1]
    return store_url(home_dir() / DEFAULT_DB_FILENAME), "the default path"


def origin_note(named_by: str | None) -> str:
    """`` (from WHERE)`` after a store's URL in a message, where perfpredict chose the URL
    (:func:`resolve_db`); nothing where the caller passed it, who knows where it came
    from."""
    return f" (from {named_by})" if named_by else ""


def store_url(store: str | os.PathLike[str]) -> str:
    """The URL of the store ``store`` names: a URL, or a SQLite file's path (text or a
    ``Path``), as ``--db`` takes either; anything else is bad input saying what is (an
    open Store is taken by the functions that take a store, not named again:
    :mod:`perfpredict.store.handle`)."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if not isinstance(store, str):
        raise BadInputError(f"a store is named by its URL or a SQLite file's path, not a "
                            f"{type(store).__name__}; the functions that take a store take "
                            "one opened with perfpredict.store.open_store as well")
    return store if "://" in store else f"sqlite:///{Path(store).expanduser()}"


#: A password given as a query parameter (``...db?password=...``), which libpq reads as
#: it reads one before the ``@``.
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#\s'\"]*", re.IGNORECASE)


def command_url(url: str) -> str:
    """``url`` with any password left out, shell-quoted, for a command a message asks the
    user to run: with ``***`` in its place the command failed to authenticate as pasted
    (the driver reads the password from ``~/.pgpass`` or ``PGPASSWORD``, as psql does),
    and a path with a space or a URL with ``&`` was two words to the shell. Takes a URL
    whose password :func:`redact_url` hid as well."""
    base, mark, query = url.partition("?")
    kept = [part for part in query.split("&") if not part.lower().startswith("password=")]
    url = base + (mark + "&".join(kept) if kept else "")
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        credentials, _, host = rest.rpartition("@")
        url = f"{scheme}://{credentials.split(':', 1)[0]}@{host}"
    return "'" + url.replace("'", "'\"'\"'") + "'"


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print in messages."""
    url = _QUERY_PASSWORD.sub(r"\1***", url)
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else url

"""A server's store lost mid-command (:func:`lost_connection`): a module of its own,
importing neither SQLAlchemy nor the modules that open and take stores, so that both
the opener (:mod:`perfpredict.store.database`, for a connection lost while a store
opens) and the functions taking a store (:mod:`perfpredict.store.handle`) say it alike
without importing each other."""

from __future__ import annotations

from perfpredict.errors import PerfPredictError
from perfpredict.store.opened import Store

#: PostgreSQL's SQLSTATEs of a server going down under a session (admin_shutdown,
#: crash_shutdown, cannot_connect_now).
SERVER_SHUTDOWN_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})


def lost_connection(store: Store, exc: Exception) -> PerfPredictError | None:
    """The one-line error for a server's store that went away mid-command (restarted,
    its connection killed), or None when ``exc`` is something else. It was "internal
    error (OperationalError: the connection is lost ...); report it", after a line of
    psycopg's own, for an ingest whose transaction the server had rolled back: nothing
    was half-written, and running the command again is the fix."""
    if type(exc).__module__ != "sqlalchemy.exc" or store.engine.dialect.name == "sqlite":
        return None
    from sqlalchemy.exc import DBAPIError, OperationalError

    # the client lost the server (no SQLSTATE), a connection exception (class 08) or the
    # server shutting down (57P01-57P03); not a deadlock or a full disk, which are
    # OperationalErrors too but no lost connection, nor fixed by running again
    sqlstate = getattr(getattr(exc, "orig", None), "sqlstate", None)
    if not isinstance(exc, DBAPIError) or not (
            exc.connection_invalidated
            or (isinstance(exc, OperationalError)
                and (sqlstate is None or sqlstate.startswith("08")
                     or sqlstate in SERVER_SHUTDOWN_SQLSTATES))):
        return None
    first_line = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else ""
    return PerfPredictError(
        f"lost the connection to the store at {store.safe_url} ({first_line}); what this "
        "command was writing was rolled back, so nothing is half-written: run it again once "
        "the server answers (what is already stored is not stored twice)")

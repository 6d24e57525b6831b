"""Training on dask.distributed, for a center-scale store (``perfpredict train --dask``).

Inside :func:`dask_training`, the workers read the runs from the store themselves, in
partitions of (application, system) pairs (:func:`read_series`), the nested-extrapolation
examples are built in partitions of series (one ``dask.delayed`` task per chunk) and
every overhead regressor is fitted with ``xgboost.dask.DaskXGBRegressor`` on the
cluster's workers. Outside it, nothing changes: the single-process path is the default
and imports no dask.

The client is passed to ``HybridPredictor.fit`` (and on to the nested examples and every
tree fit), not given as an estimator parameter: parameters are saved in the artifact as
JSON, and a client is a live connection.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from perfpredict._imports import require
from perfpredict.errors import BadInputError
from perfpredict.model.series import Series

#: ``--dask local``: a cluster on this machine instead of a scheduler's address.
LOCAL = "local"
#: Store partitions per worker: enough that a large pair does not leave workers idle.
PARTITIONS_PER_WORKER = 4

@contextmanager
def dask_training(scheduler: str) -> Iterator[Any]:
    """Connect to the scheduler at ``scheduler`` (or start a local cluster for
    :data:`LOCAL`, its workers' XGBoost console quiet: :func:`quiet_xgboost_console`)
    and yield the client to train with; disconnects afterwards."""
    distributed = require("dask.distributed", "dask")
    # a Client without an address starts a LocalCluster sized to this machine; its
    # scheduler's HTTP server (dashboard, health) on a free port, as nothing prints its
    # address: on a shared host where another user's cluster held 8787, it warned "Port
    # 8787 is already in use. Perhaps you already have a cluster running?" amid train's
    # output (dashboard_address=None keeps the HTTP server, and the warning, on 8787)
    if scheduler == LOCAL:
        client = distributed.Client(dashboard_address=":0")
        client.register_worker_callbacks(setup=quiet_xgboost_console)  # a restarted one too
    else:
        try:
            client = distributed.Client(scheduler, timeout="10s")
        except (OSError, ValueError, TimeoutError) as exc:
            raise BadInputError(
                f"--dask {scheduler}: no dask scheduler answers there ({exc}); give its "
                "address as tcp://HOST:PORT (8786 by default), or 'local' to start one "
                "on this machine") from None
    with client:
        yield client


#: The log callback :func:`quiet_xgboost_console` gives XGBoost, held so that it lives as
#: long as the worker process (XGBoost keeps only its address).
_xgboost_log_callback: Any = None


def _xgboost_warnings_only(message: bytes) -> None:
    """XGBoost's native log line ``message`` as Python's own callback passes it on
    (``xgboost.core._log_callback``), but for the console lines it prints: a warning is
    a Python warning (on the worker's stderr, once per message), the rest is dropped."""
    text = message.decode("utf-8", "replace")
    if "WARNING:" in text:
        warnings.warn(text, UserWarning, stacklevel=2)


def quiet_xgboost_console() -> None:
    """On a worker of the local cluster: keep XGBoost's collective from printing
    "Task [xgboost.dask-0]:tcp://127.0.0.1:39383 got rank 0" once per worker and fitted
    booster, hundreds of lines on the terminal for a center's store, while its warnings
    still reach it.

    The line is logged at XGBoost's console level, which no ``verbosity`` silences
    (``xgboost.config_context(verbosity=0)`` neither), and in a dask worker's task
    thread it goes to stderr directly: XGBoost passes its log lines to the callback
    registered in the calling thread, and Python's, which turns warnings into Python
    warnings, is registered only in the thread that imported xgboost. So each thread
    that joins XGBoost's communicator (``xgboost.collective.init``, where xgboost.dask
    starts every fit) first registers :func:`_xgboost_warnings_only` as its own.
    Only the local cluster's workers, this command's own processes, are changed: a
    remote cluster's workers log to their own files, not the user's terminal."""
    global _xgboost_log_callback
    if _xgboost_log_callback is not None:  # run once per worker process
        return
    import ctypes

    import xgboost.collective
    from xgboost import core

    join = getattr(xgboost.collective, "init", None)
    register = getattr(getattr(core, "_LIB", None), "XGBRegisterLogCallback", None)
    if join is None or register is None:  # an XGBoost without them: its lines, not a failure
        return
    _xgboost_log_callback = ctypes.CFUNCTYPE(None, ctypes.c_char_p)(_xgboost_warnings_only)

    def quiet_join(**args: Any) -> None:
        register(_xgboost_log_callback)
        join(**args)

    xgboost.collective.init = quiet_join


def read_series(client: Any, db_url: str,
                app: str | Sequence[str] | None = None) -> tuple[list[Series], int]:
    """The store's series (of ``app``, one application's name or several, when given),
    read and built by the workers: (series in key order, runs read).

    The driver only asks the store for its (application, system) pairs and their run
    counts; each task then opens the store itself and reads a balanced group of pairs,
    so the runs never pass through the driver. The workers must reach the store: a
    PostgreSQL server, or a SQLite file on a file system they share.
    """
    dask = require("dask", "dask")
    from perfpredict.store import open_store
    from perfpredict.store.queries import app_system_sizes

    with open_store(db_url) as store:
        sizes = app_system_sizes(store, app=app)
    n_workers = max(1, len(client.scheduler_info()["workers"]))
    groups = balanced_groups(sizes, PARTITIONS_PER_WORKER * n_workers)
    tasks = [dask.delayed(_read_partition)(db_url, group) for group in groups]
    parts: list[tuple[list[Series], int]] = client.gather(client.compute(tasks))
    series = sorted((s for part, _ in parts for s in part), key=lambda s: s.key)
    return series, sum(n_runs for _, n_runs in parts)


def balanced_groups(sizes: list[tuple[str, str, int]],
                    n_groups: int) -> list[list[tuple[str, str]]]:
    """(application, system) pairs in at most ``n_groups`` groups of similar run counts:
    largest pair first into the lightest group."""
    loads = [0] * max(1, min(n_groups, len(sizes)))
    groups: list[list[tuple[str, str]]] = [[] for _ in loads]
    for app, system, n_runs in sorted(sizes, key=lambda row: -row[2]):
        lightest = loads.index(min(loads))
        groups[lightest].append((app, system))
        loads[lightest] += n_runs
    return [group for group in groups if group]


def _read_partition(db_url: str, pairs: list[tuple[str, str]]) -> tuple[list[Series], int]:
    """On a worker: the series of ``pairs`` and how many runs they were built from."""
    from perfpredict.model.series import build_series
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    with open_store(db_url) as store:
        frame = runs_frame(store, app_systems=pairs)
    return build_series(frame), len(frame)

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

import asyncio
import logging
import os
import pkgutil
import signal
import socket
import threading
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from perfpredict import __version__
from perfpredict._imports import require
from perfpredict.config import redact_url
from perfpredict.errors import BadInputError, NotFoundError, PerfPredictError
from perfpredict.model.series import Series
from perfpredict.store.location import sqlite_file

#: ``--dask local`` (or ``local:N``): a cluster on this machine instead of a scheduler's
#: address.
LOCAL = "local"
#: Store partitions per worker: enough that a large pair does not leave workers idle.
PARTITIONS_PER_WORKER = 4

#: Seconds a scheduler's address has to answer in: a dask scheduler does in milliseconds,
#: a port where nothing listens makes dask retry until then.
CONNECT_TIMEOUT_S = 10.0


@contextmanager
def dask_training(scheduler: str) -> Iterator[Any]:
    """Connect to the scheduler at ``scheduler`` (or start a local cluster for
    :data:`LOCAL`, its workers' XGBoost console quiet: :func:`quiet_xgboost_console`)
    and yield the client to train with; disconnects afterwards.

    A scheduler's cluster must run this perfpredict (:func:`require_same_perfpredict`),
    and a worker that leaves it while the block runs (killed, out of memory, its node
    gone) ends the training with one line, not an internal error
    (:func:`_cluster_failure`)."""
    n_local = local_workers(scheduler)  # a bad count is bad input, dask installed or not
    distributed = require("dask.distributed", "dask")
    # now, not at the first tree fit once the workers have read the store: dask and
    # distributed alone (without the extra's dask.dataframe and pyarrow) lack it
    require("xgboost.dask", "dask")
    if n_local is not None:
        client = _local_client(distributed, n_local)
    else:
        _require_scheduler(scheduler)
        try:
            client = distributed.Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, ValueError, TimeoutError) as exc:
            raise _no_scheduler(scheduler, exc) from None
    client_log = logging.getLogger("distributed.client")
    with client, _dropped(client_log, _SCHEDULER_LOST):
        if n_local is None:
            _require_workers(client, scheduler)
            require_same_perfpredict(client, scheduler)
        workers = set(client.scheduler_info()["workers"])
        try:
            yield client
        except PerfPredictError:
            raise
        except Exception as exc:
            failure = _cluster_failure(client, scheduler, workers, exc,
                                       killed=isinstance(exc, distributed.KilledWorker))
            if failure is None:
                raise
            raise failure from exc


#: How dask's client logs a scheduler it lost, which :func:`_cluster_failure` says too.
_SCHEDULER_LOST = "Failed to reconnect to scheduler"


@contextmanager
def _dropped(logger: logging.Logger, message_start: str) -> Iterator[None]:
    """``logger`` without its records that begin with ``message_start`` while the block
    runs: a scheduler killed mid-training logged "distributed.client - ERROR - Failed to
    reconnect to scheduler after 10.00 seconds, closing client" above train's one-line
    error that says so."""
    def keep(record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(message_start)

    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


def local_workers(scheduler: str) -> int | None:
    """How many workers ``--dask local`` (``local:N``: N) starts on this machine; None
    for a scheduler's address.

    One single-threaded worker each: every tree is fitted on one thread per worker
    (:class:`perfpredict.overhead.regressor.OverheadRegressor`), so plain ``local`` starts
    one per core this process may run on. dask's own default (one worker per core up to
    four, multi-threaded ones beyond) left cores idle on a larger machine. XGBoost on
    dask samples and bins per worker, so the predictor depends on their number, and
    with it on the machine: ``local:N`` trains the same predictor on any machine."""
    name, colon, count = scheduler.partition(":")
    if name != LOCAL:
        return None
    if not colon:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    if count.isascii() and count.isdigit() and int(count) > 0:
        return int(count)
    raise BadInputError(f"--dask {scheduler}: the number of local workers must be a whole "
                        "number of at least 1, as in 'local:4' (or 'local' for one per core)")


def _local_client(distributed: Any, n_workers: int) -> Any:
    """A client of a new cluster of ``n_workers`` single-threaded worker processes on
    this machine (:func:`local_workers`), their XGBoost console quiet.

    Its scheduler's HTTP server (dashboard, health) on a free port, as nothing prints its
    address: on a shared host where another user's cluster held 8787, it warned "Port
    8787 is already in use. Perhaps you already have a cluster running?" amid train's
    output (dashboard_address=None keeps the HTTP server, and the warning, on 8787).
    Its worker processes are started ignoring SIGINT: Ctrl-C at the terminal reaches the
    whole process group, and each worker printed a KeyboardInterrupt traceback around
    train's one "Interrupted" line; this process still stops them when it ends (an
    ignored signal stays ignored in a spawned process, and Python then installs no
    handler of its own). Its workers log only what is critical (``silence_logs``):
    stopped mid-transfer, they logged the closed connections, tracebacks included; what
    makes them fail reaches train as an error of its own (:func:`_cluster_failure`)."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main_thread else None
    try:
        client = distributed.Client(n_workers=n_workers, threads_per_worker=1,
                                    dashboard_address=":0", silence_logs=logging.CRITICAL)
    finally:
        if previous is not None:  # None: not Python's to set back (nor was it changed)
            signal.signal(signal.SIGINT, previous)
    client.register_worker_callbacks(setup=quiet_xgboost_console)  # a restarted one too
    return client


def _no_scheduler(scheduler: str, reason: object) -> BadInputError:
    return BadInputError(
        f"--dask {scheduler}: no dask scheduler answers there ({reason}); give its "
        "address as tcp://HOST:PORT (8786 by default), or 'local' to start one on this "
        "machine")


def _require_scheduler(scheduler: str) -> None:
    """Refuse ``scheduler`` unless a dask scheduler answers there within
    :data:`CONNECT_TIMEOUT_S`.

    ``distributed.Client`` bounds only the connection by its timeout: at an address
    where another server listens and keeps the connection open without answering in
    dask's protocol (a web server, `python -m http.server`), it waited for the
    scheduler's reply forever. The scheduler is asked who it is (its ``identity``),
    which a worker's address answers too, as a worker. In a thread with an event loop
    of its own, so that a caller inside a running loop (a notebook) can call it too.

    A server that speaks first (an SSH port's banner, an HTTP proxy's "426 Upgrade
    Required") sends bytes dask reads as the length of its first message: dask then
    asked numpy for exabytes, and train ended in an internal MemoryError."""
    distributed = require("distributed", "dask")
    # the TLS settings of dask's configuration, as a Client would connect with
    connection_args = distributed.Security().get_connection_args("client")

    async def identity() -> Any:
        connection = await distributed.comm.connect(scheduler, timeout=CONNECT_TIMEOUT_S,
                                                    **connection_args)
        try:
            await connection.write({"op": "identity", "reply": True})
            return await connection.read()
        finally:
            connection.abort()

    async def answer() -> Any:
        return await asyncio.wait_for(identity(), CONNECT_TIMEOUT_S)

    with ThreadPoolExecutor(max_workers=1) as thread:
        try:
            reply = thread.submit(asyncio.run, answer()).result()
        except TimeoutError:
            raise _no_scheduler(scheduler, f"nothing answered in dask's protocol within "
                                           f"{CONNECT_TIMEOUT_S:g} s") from None
        except MemoryError:
            raise _no_scheduler(scheduler, "a server answered that does not speak "
                                           "dask's protocol") from None
        except (OSError, ValueError) as exc:
            raise _no_scheduler(scheduler, exc) from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind == "Worker":
        raise BadInputError(
            f"--dask {scheduler}: that is a dask worker's address; give its scheduler's "
            "(the address 'dask worker' was started with, tcp://HOST:8786 by default)")
    if kind != "Scheduler":
        raise _no_scheduler(scheduler, f"a {kind or 'server'} answered, not a scheduler")


def _require_workers(client: Any, scheduler: str) -> None:
    """Refuse a scheduler that has no worker within :data:`CONNECT_TIMEOUT_S`.

    Its first task waits for a worker: with none (their batch job still queued, or
    started against another address) train waited forever without a word."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        raise BadInputError(
            f"--dask {scheduler}: the scheduler has no workers (none joined within "
            f"{CONNECT_TIMEOUT_S:g} s); start them with 'dask worker {scheduler}' and "
            "train again, or use 'local' to start a cluster on this machine") from None


def require_same_perfpredict(client: Any, scheduler: str) -> None:
    """Refuse a cluster whose scheduler or a worker lacks this perfpredict.

    The scheduler unpickles the tasks and the workers run perfpredict's code: without
    it, the first task failed as an "internal error" about the scheduler's "task graph"
    or a missing module; with another version, they would read the store or build the
    nested examples as that version does, into a predictor saved as this one's. Each
    process is asked for the ``__version__`` of the perfpredict it imports (not for
    the version its package metadata claims: an install whose metadata is found but
    whose code is not, imports nothing)."""
    version_of = (pkgutil.resolve_name, "perfpredict:__version__")
    found: dict[str, object] = {}
    try:
        found["scheduler"] = client.run_on_scheduler(*version_of)
    except Exception as exc:  # raised there, by the import
        found["scheduler"] = exc
    found.update((f"worker {address}", version) for address, version in sorted(
        client.run(*version_of, on_error="return").items()))
    others = {where: version for where, version in found.items() if version != __version__}
    if others:
        listed = "; ".join(
            f"{where}: {'cannot import it' if isinstance(version, BaseException) else version}"
            for where, version in others.items())
        raise BadInputError(
            f"--dask {scheduler}: the cluster does not run perfpredict {__version__} as "
            f"this train does ({listed}); install perfpredict[dask] {__version__} where "
            "the scheduler and workers run, and restart them")


def _cluster_failure(client: Any, scheduler: str, workers: set[str], exc: Exception,
                     killed: bool) -> PerfPredictError | None:
    """The error to report for ``exc``, raised while training on ``client``'s cluster,
    when a worker left it since it had ``workers`` (or the scheduler went away): not an
    internal error (XGBoost, for one, says "Invalid worker address ... Resilience is not
    yet supported"), but a failure of this training, which saves nothing; so too when
    ``killed``, dask's KilledWorker: a task whose workers died each time it ran. None
    when the cluster is whole: ``exc`` is then what it is.

    A client that lost its scheduler is no longer "running" (it tries to reconnect, then
    closes), and asked for the workers it answers from what it knew before: a task
    cancelled for "scheduler-connection-lost" then read as an error of its own."""
    if (lost := _lost_workers(client, workers)) is None:
        what = "the scheduler went away"
    elif lost or killed:
        what = f"worker {', '.join(lost)} left the cluster" if lost else str(exc)
    else:
        return None
    return PerfPredictError(
        f"--dask {scheduler}: training stopped, as {what} ({type(exc).__name__}); nothing "
        "was saved and the previous predictor still answers; train again once the "
        "cluster's workers are back (their logs say why they stopped)")


def _lost_workers(client: Any, workers: set[str]) -> list[str] | None:
    """Which of ``workers`` left ``client``'s cluster; None when the scheduler is gone."""
    if client.status != "running":
        return None
    try:
        return sorted(workers - set(client.scheduler_info()["workers"]))
    except Exception:  # whatever the lost connection raises
        return None


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
    PostgreSQL server, or a SQLite file on a file system they share, named to them by
    its absolute path (:func:`workers_store_url`).

    Each partition must hold the runs the driver counted for its pairs: a worker that
    found another store at the same path (a stale copy on its node's local disk) read
    249 runs of a 17,226-run store, and train saved the predictor it fitted on them into
    this store without a word.
    """
    dask = require("dask", "dask")
    from perfpredict.store import open_store
    from perfpredict.store.queries import app_system_sizes

    db_url = workers_store_url(db_url)
    with open_store(db_url, create=False) as store:
        sizes = app_system_sizes(store, app=app)
    n_workers = max(1, len(client.scheduler_info()["workers"]))
    groups = balanced_groups(sizes, PARTITIONS_PER_WORKER * n_workers)
    tasks = [dask.delayed(_read_partition)(db_url, group) for group in groups]
    parts: list[tuple[list[Series], int]] = client.gather(client.compute(tasks))
    n_runs_read = sum(n_runs for _, n_runs in parts)
    if n_runs_read != sum(n_runs for _, _, n_runs in sizes):
        raise BadInputError(
            f"the dask workers read {n_runs_read} runs from the store at "
            f"{redact_url(db_url)}, which holds {sum(n for _, _, n in sizes)} of them "
            "here: they see another store at that path (a copy on their nodes' own "
            "disks?), or it changed while they read it; give the workers the store this "
            "train reads (a PostgreSQL server, or a file system they share) and train "
            "again")
    series = sorted((s for part, _ in parts for s in part), key=lambda s: s.key)
    return series, n_runs_read


def workers_store_url(db_url: str) -> str:
    """``db_url`` as the workers must open it: a SQLite file by its absolute path.

    A worker resolves a relative path (``--db center.db``) against its own working
    directory, which is not this process's for a cluster started elsewhere (``dask
    worker`` run in the user's home): each worker then created an empty store there and
    train said "the store holds 0 runs" of a store holding thousands."""
    path = sqlite_file(db_url)
    if path is None:
        return db_url
    scheme = db_url.partition(":///")[0]
    query = db_url.partition("?")[1:]
    return f"{scheme}:///{path.absolute()}{''.join(query)}"


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
    """On a worker: the series of ``pairs`` and how many runs they were built from.
    A store this worker cannot open is an error naming the worker's host: never a new,
    empty store created in its place. A SQLite file it cannot see is said as such: the
    store's own "no store at PATH; create it with ... db init" told the user to create,
    on the host where train runs, the store that is already there."""
    from perfpredict.model.series import build_series
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    path = sqlite_file(db_url)
    try:
        if path is not None and not path.is_file():
            raise PerfPredictError(f"there is no file {path} on that host")
        store = open_store(db_url, create=False)
    except PerfPredictError as exc:
        raise BadInputError(
            f"a dask worker on {socket.gethostname()} cannot open the store at "
            f"{redact_url(db_url)}: {_why_unopened(exc)}; the workers must reach it as this "
            "train does: a PostgreSQL server, or a SQLite file on a file system they "
            "share, at the same path") from None
    with store:
        frame = runs_frame(store, app_systems=pairs)
    return build_series(frame), len(frame)


def _why_unopened(exc: PerfPredictError) -> str:
    """Why a worker could not open the store, without the advice the store's own error
    gives the one who named it: "check --db and PERFPREDICT_DB", and "create it with
    ... db init" for a store not there, were said to a notebook that had named no --db,
    and are not what to do from the command line either, the store this train read
    being the one the workers were given."""
    from perfpredict.store.database import failure_text

    if isinstance(exc, NotFoundError):
        return "that host finds no perfpredict store there"
    if isinstance(exc.__cause__, Exception):  # what the database said
        return failure_text(exc.__cause__)
    return str(exc)

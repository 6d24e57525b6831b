"""``train --dask``: the workers read the store in partitions, and train the same
predictor, within a stated tolerance, as the single-process path."""

from __future__ import annotations

import logging
import socket
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from perfpredict import datasets
from perfpredict.model.series import build_series

#: Largest difference allowed in a nested mean |log error| between the two paths: XGBoost
#: on Dask samples rows (``subsample``) per worker, so its trees differ a little.
TOLERANCE = 0.03


@pytest.mark.slow
@pytest.mark.parametrize("names", [["relearn", "lulesh_thicket"], ["castro_scaling"]])
def test_dask_training_matches_the_single_process_path(tmp_path: Path, names: list[str]) -> None:
    """``train(store, dask=ADDRESS)`` end to end: the workers read the store, build the
    nested examples and fit the boosters; the saved predictor matches the one trained
    in this process. Both stores borrow from the bundled data sets, on the workers too:
    Castro's two strong-scaling applications their intervals and half the correction,
    RELeARN's and LULESH's weak scaling alone the correction and the slope drift."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.store import open_store
    from perfpredict.train import train

    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    datasets.ingest(store, names)
    single = train(store)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = train(store, dask=cluster.scheduler_address)
    store.dispose()
    assert (on_dask.n_runs, on_dask.n_series, on_dask.base_law, on_dask.borrowed_datasets) == (
        single.n_runs, single.n_series, single.base_law, single.borrowed_datasets)
    assert (single.dask_workers, on_dask.dask_workers) == (None, 2)
    assert single.borrowed_datasets is not None
    assert not set(names) & set(single.borrowed_datasets)
    assert single.metrics.keys() == on_dask.metrics.keys()
    for name, value in single.metrics.items():
        assert on_dask.metrics[name] == pytest.approx(value, abs=TOLERANCE), (
            name, single.metrics, on_dask.metrics)


@pytest.mark.slow
def test_workers_read_the_same_series_from_the_store(store) -> None:  # type: ignore[no-untyped-def]
    """Each worker opens the store and reads its own (application, system) pairs; merged,
    the series equal the ones the single-process path builds, run for run."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.distributed import balanced_groups, read_series
    from perfpredict.store.queries import app_system_sizes, runs_frame

    for name in ("relearn", "lulesh_thicket", "mlperf_hpc"):
        datasets.ingest(store, [name])
    expected = build_series(runs_frame(store))
    sizes = app_system_sizes(store)
    assert len(balanced_groups(sizes, 4)) == min(4, len(sizes)) > 1  # several partitions
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        series, n_runs = read_series(client, store.url)
    assert n_runs == sum(n for _, _, n in sizes) == len(runs_frame(store))
    assert [s.key for s in series] == [s.key for s in expected]
    for got, want in zip(series, expected, strict=True):
        assert np.array_equal(got.scale, want.scale)
        assert np.array_equal(got.runtime_s, want.runtime_s)
        assert (got.weak, got.scale_unit, got.io_share) == (want.weak, want.scale_unit,
                                                           want.io_share)


def test_balanced_groups_put_the_largest_pairs_apart() -> None:
    from perfpredict.distributed import balanced_groups

    sizes = [("a", "x", 100), ("b", "x", 90), ("c", "y", 10), ("d", "y", 5)]
    groups = balanced_groups(sizes, 2)
    assert groups == [[("a", "x"), ("d", "y")], [("b", "x"), ("c", "y")]]  # 105 and 100 runs
    assert balanced_groups(sizes, 10) == [[("a", "x")], [("b", "x")], [("c", "y")], [("d", "y")]]
    assert balanced_groups([], 3) == []


def test_a_scheduler_address_that_answers_nothing_is_bad_input() -> None:
    """Not an internal error: the address is the user's to fix."""
    pytest.importorskip("dask.distributed")
    from perfpredict.distributed import dask_training
    from perfpredict.errors import BadInputError

    with pytest.raises(BadInputError, match="--dask nonsense: no dask scheduler answers "
                                            "there .*'local'"):
        with dask_training("nonsense"):
            pass


@pytest.mark.parametrize(("scheduler", "workers"), [
    ("local:3", 3), ("local:1", 1), ("tcp://10.0.0.7:8786", None), ("localhost:8786", None)])
def test_local_workers_are_counted_from_the_address(scheduler: str,
                                                     workers: int | None) -> None:
    from perfpredict.distributed import local_workers

    assert local_workers(scheduler) == workers


def test_plain_local_starts_a_worker_per_usable_core() -> None:
    """One single-threaded worker per core (each fits its trees on one thread), not
    dask's default of four multi-threaded ones on a larger machine."""
    import os

    from perfpredict.distributed import local_workers

    assert local_workers("local") == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("scheduler", ["local:0", "local:two", "local:-1", "local:", "local:2.5", "local:²"])
def test_a_bad_number_of_local_workers_is_bad_input(  # type: ignore[no-untyped-def]
        cli, db_url: str, scheduler: str) -> None:
    """Refused before anything is read or started, dask installed or not; the store
    keeps no predictor."""
    from perfpredict.store.artifacts import load_latest_runtime

    result = cli("train", "--dask", scheduler)
    assert result.exit_code == 2, result.output
    assert result.output == (f"Error: --dask {scheduler}: the number of local workers must "
                             "be a whole number of at least 1, as in 'local:4' (or 'local' "
                             "for one per core)\n")
    assert load_latest_runtime(db_url) is None


#: The same regressor fitted on two clusters of ``local:2`` one after the other: the
#: trees depend on the number of workers, not on the cluster. Run as a script: the
#: workers are processes spawned from it.
_FIT_ON_TWO_LOCAL_CLUSTERS = """
import numpy as np

from perfpredict.distributed import dask_training
from perfpredict.overhead.regressor import OverheadRegressor

if __name__ == "__main__":
    rng = np.random.default_rng(0)
    features, target = rng.random((400, 3)), rng.random(400)
    predictions = []
    for _ in range(2):
        with dask_training("local:2") as client:
            assert len(client.scheduler_info()["workers"]) == 2
            fitted = OverheadRegressor(n_estimators=20).fit(features, target, client=client)
            predictions.append(fitted.predict(features))
    print(np.array_equal(*predictions), bool(np.ptp(predictions[0]) > 0))
"""


@pytest.mark.slow
def test_the_same_number_of_local_workers_fits_the_same_trees(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    import subprocess
    import sys

    script = tmp_path / "two_clusters.py"
    script.write_text(_FIT_ON_TWO_LOCAL_CLUSTERS)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.stdout == "True True\n", (done.stdout, done.stderr)


@pytest.mark.slow
def test_train_says_how_many_workers_trained_the_predictor(
        tmp_path: Path, timed_runs_csv: Path) -> None:
    """``perfpredict train --dask local:1`` as a user runs it (a process of its own, the
    workers spawned from it): train names the number the predictor depends on, and the
    artifact keeps it."""
    pytest.importorskip("dask.distributed")
    import subprocess
    import sys

    from perfpredict.store.artifacts import load_latest_runtime

    url = f"sqlite:///{tmp_path / 'store.db'}"
    cli = [sys.executable, "-c", "from perfpredict.cli.app import main; main()", "--db", url]
    subprocess.run([*cli, "ingest", "csv", str(timed_runs_csv)], check=True,
                   capture_output=True)
    done = subprocess.run([*cli, "train", "--dask", "local:1", "--no-borrow-bundled"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("  trained on 1 dask worker: the trees depend on their number, so the same "
            "number (--dask local:1, or a cluster of as many) trains this predictor again"
            in done.stdout.splitlines()), done.stdout
    found = load_latest_runtime(url)
    assert found is not None and found[0]["training"]["dask_workers"] == 1


#: Two fits on ``train --dask local``'s cluster, the second given a parameter XGBoost does
#: not use (a warning of its own, on the worker). Run as a script: the workers are
#: processes spawned from it.
_FIT_ON_LOCAL_CLUSTER = """
import dask.array
import numpy as np
import xgboost.dask

from perfpredict.distributed import dask_training
from perfpredict.overhead.regressor import OverheadRegressor

if __name__ == "__main__":
    features, target = np.random.default_rng(0).random((200, 3)), np.arange(200.0)
    with dask_training("local") as client:
        OverheadRegressor(n_estimators=3).fit(features, target, client=client)
        booster = xgboost.dask.DaskXGBRegressor(n_estimators=2, not_a_parameter=1)
        booster.client = client
        booster.fit(dask.array.from_array(features, chunks=100),
                    dask.array.from_array(target, chunks=100))
"""


def test_the_local_clusters_xgboost_prints_its_warnings_and_not_its_ranks(
        tmp_path: Path) -> None:
    """Each fit printed "Task [xgboost.dask-0]:tcp://127.0.0.1:39383 got rank 0" per
    worker on the terminal: hundreds of lines training a center's store. With another
    cluster's dashboard on port 8787 (a shared host), it warned "Port 8787 is already in
    use" too."""
    pytest.importorskip("dask.distributed")
    import socket
    import subprocess
    import sys

    script = tmp_path / "fit.py"
    script.write_text(_FIT_ON_LOCAL_CLUSTER)
    with socket.socket() as dashboard:
        try:
            dashboard.bind(("", 8787))
            dashboard.listen()
        except OSError:
            pass  # another user's cluster holds it already: the case itself
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "got rank" not in done.stderr
    assert "already in use" not in done.stderr
    assert 'Parameters: { "not_a_parameter" } are not used.' in done.stderr


def _in_time(call, timeout_s: float):  # type: ignore[no-untyped-def]
    """``call()``'s result, or a failed test when it has not returned in ``timeout_s``
    (the thread is left behind: it hung, which is the failure)."""
    import threading

    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert results, f"still waiting after {timeout_s} s"
    return results[0]


def test_a_server_that_never_answers_as_a_scheduler_is_bad_input_in_time(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A web server's port (or any that accepts and then says nothing dask reads) made
    ``train --dask tcp://HOST:PORT`` wait forever: dask's own timeout bounds only the
    connection."""
    pytest.importorskip("dask.distributed")
    import socket

    from perfpredict import distributed

    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        result = _in_time(lambda: cli("train", "--dask", address), 30)
    _refused_as_no_scheduler(result, address, "nothing answered in dask's protocol within 1 s")


def test_a_server_that_speaks_first_is_no_scheduler_not_an_internal_error(
        cli) -> None:  # type: ignore[no-untyped-def]
    """An SSH port (``--dask tcp://login1:22``) greets with a banner, which dask read as
    the length of its first message: "internal error (MemoryError: Unable to allocate
    3.07 EiB ...)"."""
    pytest.importorskip("dask.distributed")
    import socket
    import threading

    with socket.socket() as ssh:
        ssh.bind(("127.0.0.1", 0))
        ssh.listen()
        address = f"tcp://127.0.0.1:{ssh.getsockname()[1]}"

        def greet() -> None:
            connection, _ = ssh.accept()
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" + b"x" * 64)
                connection.recv(1)  # until the client hangs up

        threading.Thread(target=greet, daemon=True).start()
        result = _in_time(lambda: cli("train", "--dask", address), 30)
    _refused_as_no_scheduler(result, address,
                             "a server answered that does not speak dask's protocol")


def _refused_as_no_scheduler(result, address: str, why: str) -> None:  # type: ignore[no-untyped-def]
    """``train --dask address`` refused in one line, exit 2, saying why no scheduler."""
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: --dask {address}: no dask scheduler answers there ({why}); give its "
        "address as tcp://HOST:PORT (8786 by default), or 'local' to start one on this "
        "machine"]


def test_dask_without_the_extras_dataframe_is_refused_before_any_work(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """dask and distributed installed alone (not perfpredict[dask], which brings
    dask.dataframe and pyarrow): XGBoost's dask module failed to import at the first tree
    fit, after the workers had read the store, as an internal error to report."""
    pytest.importorskip("dask.distributed")
    import sys

    from perfpredict import distributed

    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 1.0)
    monkeypatch.setitem(sys.modules, "xgboost.dask", None)  # not importable
    result = cli("train", "--dask", "tcp://127.0.0.1:1")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: this feature needs the 'xgboost.dask' package")
    assert result.output.strip().endswith("install it with: pip install 'perfpredict[dask]'")


def test_a_workers_address_is_refused_naming_the_scheduler(cli) -> None:  # type: ignore[no-untyped-def]
    distributed = pytest.importorskip("dask.distributed")

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        (worker,) = cluster.scheduler_info["workers"]
        result = _in_time(lambda: cli("train", "--dask", worker), 60)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: --dask {worker}: that is a dask worker's "
                                    "address; give its scheduler's")


def test_a_cluster_of_another_perfpredict_is_refused(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Workers without perfpredict failed as an "internal error" about the task graph;
    of another version, they would train a predictor saved as this version's."""
    distributed = pytest.importorskip("dask.distributed")
    import perfpredict
    from perfpredict import distributed as on_dask

    monkeypatch.setattr(on_dask, "__version__", "0.0.1")  # this train's, not the cluster's
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        result = cli("train", "--dask", cluster.scheduler_address)
        (worker,) = cluster.scheduler_info["workers"]
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: --dask {cluster.scheduler_address}: the cluster does not run perfpredict "
        f"0.0.1 as this train does (scheduler: {perfpredict.__version__}; worker {worker}: "
        f"{perfpredict.__version__}); install perfpredict[dask] 0.0.1 where the scheduler "
        "and workers run, and restart them"]


def test_a_worker_lost_while_training_is_a_failure_of_the_training() -> None:
    """XGBoost's "Invalid worker address ... Resilience is not yet supported", after a
    worker died mid-fit, was an internal error to report; an error with the cluster whole
    is still what it is."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.distributed import dask_training
    from perfpredict.errors import BadInputError, PerfPredictError

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        with pytest.raises(ValueError, match="a bug"):
            with dask_training(address):
                raise ValueError("a bug")
        with pytest.raises(PerfPredictError, match=(
                f"--dask {address}: training stopped, as worker \\S+ left the cluster "
                r"\(ValueError\); nothing was saved and the previous predictor still "
                "answers")) as failure:
            with dask_training(address) as client:
                lost = sorted(client.scheduler_info()["workers"])[:1]
                client.retire_workers(lost, close_workers=True)
                raise ValueError("Invalid worker address: ... Resilience is not yet supported")
    assert not isinstance(failure.value, BadInputError)  # exit 1: train again


def test_a_scheduler_gone_while_training_is_a_failure_of_the_training() -> None:
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.distributed import dask_training
    from perfpredict.errors import PerfPredictError

    # closing a cluster whose scheduler the client shut down waits for it as long as a
    # connection may take (30 s by default); the client connects with its own timeout
    with (dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
          distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                   dashboard_address=None) as cluster):
        address = cluster.scheduler_address
        with pytest.raises(PerfPredictError, match=(
                f"--dask {address}: training stopped, as the scheduler went away "
                r"\(OSError\); nothing was saved")):
            with dask_training(address) as client:
                client.shutdown()
                raise OSError("Timed out during handshake while connecting")


def test_a_scheduler_without_workers_is_refused_in_time(
        cli, store, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A scheduler whose workers have not started (their batch job still queued): train
    waited for them forever, without a word, at its first task (reading the store)."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict import distributed as perfpredict_distributed
    from perfpredict.store.artifacts import load_latest_runtime

    datasets.ingest(store, ["lulesh_thicket"])
    monkeypatch.setattr(perfpredict_distributed, "CONNECT_TIMEOUT_S", 1.0)
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        result = _in_time(lambda: cli("train", "--dask", address), 60)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: --dask {address}: the scheduler has no workers (none joined within 1 s); "
        f"start them with 'dask worker {address}' and train again, or use 'local' to "
        "start a cluster on this machine"]
    assert load_latest_runtime(db_url) is None


def test_a_scheduler_killed_while_training_is_said_once(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler process killed mid-training: dask's client logged "Failed to reconnect
    to scheduler after 10.00 seconds, closing client" above the one line that says the
    scheduler went away."""
    pytest.importorskip("dask.distributed")
    import socket
    import subprocess
    import sys

    from dask.distributed import Client

    from perfpredict import distributed
    from perfpredict.errors import PerfPredictError

    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 2.0)  # how long it tries again
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", str(port), "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"tcp://127.0.0.1:{port}"
    worker = subprocess.Popen(  # train refuses a scheduler without workers
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
         "--no-nanny", "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until it listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        with Client(address, timeout="30s") as waiting:
            waiting.wait_for_workers(1, timeout=60)
        with pytest.raises(PerfPredictError, match="training stopped, as the scheduler "
                           "went away"):
            with distributed.dask_training(address) as client:
                scheduler.kill()
                scheduler.wait()
                time.sleep(1)  # the client noticed: a task now waits until it gives up
                client.submit(sum, [1, 2]).result(timeout=30)
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    assert not [record for record in caplog.records
                if "Failed to reconnect" in record.getMessage()]
    assert not logging.getLogger("distributed.client").filters  # as it was after


def test_a_worker_that_cannot_open_the_store_creates_none(tmp_path: Path) -> None:
    """A worker that could not see the store's file created an empty one and read no
    runs from it: train then said "the store holds 0 runs". Nor does it tell the user
    to create the store ("db init"), which train has just read."""
    from perfpredict.distributed import _read_partition
    from perfpredict.errors import BadInputError

    missing = tmp_path / "elsewhere.db"
    with pytest.raises(BadInputError) as refused:
        _read_partition(f"sqlite:///{missing}", [("app", "system")])
    assert str(refused.value).startswith(
        f"a dask worker on {socket.gethostname()} cannot open the store at "
        f"sqlite:///{missing}: there is no file {missing} on that host; the workers must "
        "reach it as this train does")
    assert "db init" not in str(refused.value)
    assert not missing.exists()


@pytest.mark.parametrize(("content", "why"), [
    (None, "that host finds no perfpredict store there"),
    (b"not a database", "DatabaseError: (sqlite3.DatabaseError) file is not a database"),
])
def test_a_worker_that_cannot_open_the_store_says_why_and_not_where_it_was_named(
        tmp_path: Path, content: bytes | None, why: str) -> None:
    """A worker that found an empty database, or no database, at the store's path said
    "check --db and PERFPREDICT_DB" (and "create it with ... db init") to a notebook that
    had named no --db, where the store this train read was the one the workers were
    given: now what the worker found, at the URL it was given."""
    from perfpredict.distributed import _read_partition
    from perfpredict.errors import BadInputError

    found = tmp_path / "center.db"
    if content is None:
        sqlite3.connect(found).close()
    else:
        found.write_bytes(content)
    with pytest.raises(BadInputError) as refused:
        _read_partition(f"sqlite:///{found}", [("app", "system")])
    assert str(refused.value) == (
        f"a dask worker on {socket.gethostname()} cannot open the store at "
        f"sqlite:///{found}: {why}; the workers must reach it as this train does: a "
        "PostgreSQL server, or a SQLite file on a file system they share, at the same path")


def test_workers_that_see_another_store_at_its_path_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite path whose file on the workers' nodes is another store (a stale copy on
    node-local disk): train fitted the predictor on the copy's runs and saved it into
    this store, exit 0."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict import distributed as perfpredict_distributed
    from perfpredict.errors import BadInputError
    from perfpredict.store import open_store

    here, on_the_nodes = tmp_path / "center.db", tmp_path / "stale.db"
    for path, names in ((here, ["relearn", "lulesh_thicket"]), (on_the_nodes, ["relearn"])):
        store = open_store(f"sqlite:///{path}")
        datasets.ingest(store, names)
        store.dispose()
    read_on_a_node = perfpredict_distributed._read_partition
    monkeypatch.setattr(perfpredict_distributed, "_read_partition",
                        lambda _url, pairs: read_on_a_node(f"sqlite:///{on_the_nodes}", pairs))
    with (distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client,
          pytest.raises(BadInputError) as refused):
        perfpredict_distributed.read_series(client, f"sqlite:///{here}")
    assert str(refused.value).startswith(
        f"the dask workers read 244 runs from the store at sqlite:///{here}, which holds "
        "249 of them here: they see another store at that path")


@pytest.mark.slow
def test_workers_in_another_directory_read_a_relative_sqlite_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--db center.db`` with a cluster started in another directory: each worker opened
    center.db in its own working directory."""
    distributed = pytest.importorskip("dask.distributed")
    from perfpredict.distributed import read_series
    from perfpredict.store import open_store

    workers_dir, store_dir = tmp_path / "workers", tmp_path / "store"
    workers_dir.mkdir()
    store_dir.mkdir()
    with open_store(store_dir / "center.db") as store:
        datasets.ingest(store, ["lulesh_thicket"])
    monkeypatch.chdir(workers_dir)  # the worker processes start, and stay, here
    with (distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        monkeypatch.chdir(store_dir)
        series, n_runs = read_series(client, "sqlite:///center.db")
    assert (len(series), n_runs) == (1, 5)
    assert list(workers_dir.iterdir()) == []


#: ``train --dask local`` stopped by Ctrl-C at the terminal, which signals the whole
#: process group: the workers too.
_INTERRUPTED_ON_LOCAL_CLUSTER = """
import os, signal, time

from perfpredict.distributed import dask_training

if __name__ == "__main__":
    with dask_training("local") as client:
        running = client.submit(time.sleep, 60)
        time.sleep(2)
        try:
            os.killpg(0, signal.SIGINT)
            running.result()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_on_the_local_cluster_prints_no_worker_tracebacks(tmp_path: Path) -> None:
    """Each worker process printed a KeyboardInterrupt traceback, and on closing logged
    the connections cut mid-transfer, around train's one "Interrupted" line."""
    pytest.importorskip("dask.distributed")
    import subprocess
    import sys

    script = tmp_path / "interrupted.py"
    script.write_text(_INTERRUPTED_ON_LOCAL_CLUSTER)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, start_new_session=True)
    assert done.stdout == "interrupted\n", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr

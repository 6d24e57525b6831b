"""Shared fixtures: an isolated user directory per test, real stores on SQLite and (when
CI provides one) PostgreSQL, and the real logs and data sets from ../shared."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PERFPREDICT_SHARED", REPO.parent / "shared"))
PG_URL_ENV = "PERFPREDICT_TEST_PG_URL"

# Speed is measured by the benchmarks, as ratios; a property test on a loaded, shared
# machine (or beside another test worker) is not failed for taking long. The examples
# are the same on every run, so a fresh clone's test command passes or fails as CI's
# did; HYPOTHESIS_PROFILE=explore draws new ones, to look for what they have not found.
settings.register_profile("perfpredict", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "perfpredict"))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` runs the benchmarks in one process: each reports a ratio against a
    reference measured in the same run, and a second worker beside it would be measured
    too. Anything else gets pytest-xdist's own count (None: the next implementation)."""
    marks = config.getoption("markexpr") or ""
    return 0 if "bench" in marks and "not bench" not in marks else None


def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker, OpenMP threads wait for work passively.

    The workers share the machine's cores, and OpenMP threads that spin while they wait
    (libgomp's default) took the other worker's core: the walltime advisor's two-thread
    XGBoost fits ran ten times slower beside another worker (30 s instead of 3 s), and
    the fast group took 3:40 instead of 2:05 on 2 cores. Waiting passively changes no
    result, but alone on idle cores it doubles that fit's time (1.65 s to 3.37 s), so the
    benchmarks, which run without workers, keep the default. Set before any test module
    loads an OpenMP runtime; the subprocesses tests start inherit it."""
    if hasattr(config, "workerinput"):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], None]) -> Path:
    """The file ``name`` that ``build`` writes, built once for the whole run: a trained
    store is tens of seconds of training, and pytest-xdist's workers each built their
    own, one per worker of the session (each worker's temporary root sits beside the
    others', under the run's). The first worker builds it under a lock while the others
    wait, to a temporary name renamed when whole; the tests read it or copy it."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    path = root / name
    with FileLock(f"{path}.lock"):
        if not path.exists():
            partial = path.with_name(f"{path.name}.partial")
            build(partial)
            partial.rename(path)
    return path


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own PERFPREDICT_HOME, so nothing touches $HOME."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("PERFPREDICT_HOME", str(home))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    return home


#: set to 1 where ../shared must be present (CI): a test that needs it then fails
#: instead of skipping, so the checks on real data cannot silently stop running
REQUIRE_SHARED_ENV = "PERFPREDICT_REQUIRE_SHARED"


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test when it is absent (a user's fresh clone),
    or failing it when ``PERFPREDICT_REQUIRE_SHARED=1``."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        reason = (f"{path} is not here: the shared logs and data sets sit beside the "
                  "repository only in the development workspace and CI")
        if os.environ.get(REQUIRE_SHARED_ENV) == "1":
            pytest.fail(f"{reason}, and {REQUIRE_SHARED_ENV}=1 says they must", pytrace=False)
        pytest.skip(reason)
    return path


def on_a_terminal(argv: list[str], env: dict[str, str]) -> bytes:
    """What ``argv`` writes to a terminal (a pseudo-terminal as its stdout and stderr),
    byte for byte, escape codes included: a spinner draws only on a terminal."""
    import pty
    import subprocess

    controller, terminal = pty.openpty()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                             env={**os.environ, "TERM": "xterm", **env})
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert child.wait(timeout=60) == 0, shown
    return shown


def nasa_jobs(folder: Path, n_jobs: int) -> Path:
    """The first ``n_jobs`` jobs of the NASA iPSC/860 log (SWF, 1993), with its header, as
    a file in ``folder``: real scheduler jobs, few enough to ingest and train on in
    seconds."""
    lines = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf").read_text().splitlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = [line for line in lines if line.strip() and not line.startswith(";")][:n_jobs]
    swf = folder / "nasa.swf"
    swf.write_text("\n".join([*header, *jobs]) + "\n")
    return swf


def bundled_doc_as_trained() -> dict[str, Any]:
    """The shipped predictor's document, unsealed, with its series entries as one list:
    the layout of a predictor trained in memory (and of every stored document before
    schema revision 0003), where the shipped file holds them as texts by application."""
    from perfpredict import artifact
    from perfpredict.estimate import bundled_artifact_path

    doc = artifact.read_file(bundled_artifact_path())
    body = {k: v for k, v in doc.items() if k not in (artifact.SERIES_TEXTS, "sha256")}
    return {**body, artifact.SERIES: artifact.series_entries(doc)}


@pytest.fixture
def shared() -> type:
    class _Shared:
        path = staticmethod(shared_path)

    return _Shared


def _postgres_url() -> Iterator[str]:
    base = os.environ.get(PG_URL_ENV)
    if not base:
        pytest.skip(f"{PG_URL_ENV} is not set; .ci/run starts a PostgreSQL server and sets it")
    from sqlalchemy import create_engine, make_url, text

    name = f"pp_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    # the server's URL with the test's database in place of its own, its query kept: a
    # cut at the last '/' dropped ?sslmode=, and cut a socket's ?host=/tmp in two
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to a fresh, empty store on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        yield from _postgres_url()


@pytest.fixture
def store(db_url: str):  # type: ignore[no-untyped-def]
    from perfpredict.store import open_store

    opened = open_store(db_url)
    yield opened
    opened.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


def _cli_on(url: str):  # type: ignore[no-untyped-def]
    """The CLI against the store at ``url``, created empty (as ``db init`` does)."""
    from perfpredict.cli.app import app
    from perfpredict.store import open_store

    open_store(url).dispose()
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(app, ["--db", url, *args], input=input)

    return invoke


@pytest.fixture
def cli(db_url: str):  # type: ignore[no-untyped-def]
    """Run the CLI against the test's store on each backend: ``cli("runs", "stats")`` ->
    Result."""
    return _cli_on(db_url)


@pytest.fixture
def sqlite_cli(sqlite_url: str):  # type: ignore[no-untyped-def]
    """:func:`cli` on SQLite alone, for a test of what training makes of the runs: the
    backend's part (reading the runs, saving the predictor) is the other tests', and a
    training on the bundled data sets takes 15-45 s on each backend."""
    return _cli_on(sqlite_url)


@pytest.fixture
def timed_runs_csv(tmp_path: Path) -> Path:
    """An ``ingest csv`` file of six strong-scaling series with submission times, the way
    a group scales up: 1, 2, 4 nodes first, reruns, then 8 and 16 nodes; runtimes follow
    Amdahl's law with a few percent of noise."""
    import numpy as np

    rng = np.random.default_rng(7)
    order = [1, 2, 4, 1, 2, 4, 8, 16, 8, 16]  # nodes, in submission order
    lines = ["app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,"
             "submit_time"]
    for i in range(6):
        serial, t1_s = 0.02 + 0.03 * i, 2000.0 * (1 + i)
        for day, nodes in enumerate(order):
            runtime_s = t1_s * (serial + (1 - serial) / nodes) * rng.uniform(0.97, 1.03)
            lines.append(f"solver{i},Perlmutter-CPU,large,{nodes},128,1,{runtime_s:.2f},"
                         f"2024-03-{1 + 2 * day:02d}T{8 + i:02d}:00:00Z")
    path = tmp_path / "timed_runs.csv"
    path.write_text("\n".join(lines) + "\n")
    return path

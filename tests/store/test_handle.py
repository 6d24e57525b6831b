"""Every public function that takes a store takes it open, by URL or by a SQLite file's
path, as ``--db`` names it: a notebook holds whichever it has. Before, ``train(url)``
and ``ingest_file(url, ...)`` failed with an AttributeError and ``estimate(store, ...)``
told the caller to pass a URL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from perfpredict import datasets
from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.catalog import get_system, list_systems
from perfpredict.errors import BadInputError, NotFoundError, NotTrainedError
from perfpredict.estimate import Query, estimate
from perfpredict.evaluate import evaluate
from perfpredict.ingest import ingest_file, ingest_paths
from perfpredict.store import Store, open_store
from perfpredict.store.queries import export_runs, iter_runs, run_stats, runs_frame
from perfpredict.train import train

BERT = {"app": "bert", "system": "dgxa100_ngc22.04_pytorch (NVIDIA)"}

#: Each public call on a store, and what of its answer must not depend on how the store
#: was given (an estimate and advice from the bundled predictor: the store has none).
CALLS: dict[str, Callable[[Any], Any]] = {
    "runs_frame": lambda store: len(runs_frame(store)),
    "iter_runs": lambda store: [run["id"] for run in iter_runs(store, limit=5)],
    "run_stats": lambda store: run_stats(store)["n_runs"],
    "export_runs": lambda store: len(list(export_runs(store).rows)),
    "list_systems": lambda store: len(list_systems(store)),
    "get_system": lambda store: get_system(store, "frontier").name,
    "estimate": lambda store: estimate(store, Query(**BERT, nodes=64)).predicted_runtime_s,
    "advise_plan": lambda store: advise_plan(store, PlanRequest(**BERT)).recommended.nodes,
    "evaluate": lambda store: len(evaluate(store, "extrapolate", app=["solver0"],
                                           borrow_bundled=False)),
    # an AttributeError for a store named ("'str' object has no attribute 'engine'")
    "datasets.describe": lambda store: [row["in_store"] for row in datasets.describe(store)],
}


@pytest.fixture
def stored(tmp_path: Path, timed_runs_csv: Path) -> Path:
    """A store of six strong-scaling series (the ``timed_runs_csv`` runs)."""
    with open_store(tmp_path / "store.db") as store:
        ingest_file(store, "csv", timed_runs_csv)
    return tmp_path / "store.db"


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_store_is_taken_open_by_url_or_by_path_alike(stored: Path, call: str) -> None:
    with open_store(stored) as store:
        given_open = CALLS[call](store)
        assert not store.engine.pool.checkedout()  # the caller's store, left as it was
    assert CALLS[call](f"sqlite:///{stored}") == given_open
    assert CALLS[call](stored) == given_open


#: The calls of CALLS given their store by name, as ``help()`` shows each signature.
BY_KEYWORD: dict[str, Callable[[Any], Any]] = {
    "runs_frame": lambda store: len(runs_frame(store=store)),
    "iter_runs": lambda store: [run["id"] for run in iter_runs(store=store, limit=5)],
    "get_system": lambda store: get_system(store=store, name="frontier").name,
    "estimate": lambda store: estimate(store=store,
                                       query=Query(**BERT, nodes=64)).predicted_runtime_s,
    "advise_plan": lambda store: advise_plan(store=store,
                                             request=PlanRequest(**BERT)).recommended.nodes,
    "evaluate": lambda store: len(evaluate(store=store, split="extrapolate", app=["solver0"],
                                           borrow_bundled=False)),
}


@pytest.mark.parametrize("call", sorted(BY_KEYWORD))
def test_a_store_given_by_its_parameters_name_is_taken(stored: Path, call: str) -> None:
    """``advise_plan(store=s, request=r)``, as ``help(advise_plan)`` names them, was
    "missing 1 required positional argument: 'store'", the store given; ``estimate``
    and ``load_predictor`` called theirs ``db_url`` where every other call says
    ``store`` (``db_url=`` still works, with a DeprecationWarning)."""
    with open_store(stored) as store:
        assert BY_KEYWORD[call](store) == CALLS[call](store)


def test_the_old_name_of_an_estimates_store_still_works_with_a_warning(stored: Path) -> None:
    from perfpredict.estimate import estimate_batch, load_predictor

    queries = stored.parent / "queries.csv"
    queries.write_text("app,system,nodes\nbert,dgxa100_ngc22.04_pytorch (NVIDIA),64\n")
    expected = estimate(stored, Query(**BERT, nodes=64)).predicted_runtime_s
    with pytest.warns(DeprecationWarning, match=r"estimate\(db_url=\.\.\.\) is deprecated "
                      r"and goes in the next release; write store=\.\.\."):
        assert estimate(db_url=stored, query=Query(**BERT, nodes=64)).predicted_runtime_s \
            == expected
    with pytest.warns(DeprecationWarning, match=r"^load_predictor\(db_url="):
        assert load_predictor(db_url=stored).origin.startswith("the bundled predictor")
    with pytest.warns(DeprecationWarning, match=r"^estimate_batch\(db_url="):
        [row] = estimate_batch(db_url=stored, path=queries).records()
    assert row["predicted_runtime_s"] == expected


def test_a_call_without_its_store_says_what_a_store_is() -> None:
    with pytest.raises(TypeError, match=r"^advise_plan\(\) missing its first argument, "
                       r"'store': a store open \(perfpredict\.store\.open_store\), its URL "
                       r"or a SQLite file's path$"):
        advise_plan(request=PlanRequest(**BERT))  # type: ignore[call-arg]


def test_train_takes_a_store_open_by_url_or_by_path(tmp_path: Path) -> None:
    """Trained on one run: nothing to train on, said of the store it was given."""
    path = tmp_path / "one.csv"
    path.write_text("app,system,nodes,runtime_s\nx,Frontier,2,10\n")
    with open_store(tmp_path / "store.db") as store:
        ingest_file(store, "csv", path)
        for given in (store, store.url, tmp_path / "store.db"):
            with pytest.raises(NotTrainedError, match="the store holds 1 runs"):
                train(given)


def test_ingest_takes_a_url_and_the_store_it_opens_is_closed_after(tmp_path: Path,
                                                                   timed_runs_csv: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert ingest_file(url, "csv", timed_runs_csv).n_stored == 60
    assert ingest_paths(tmp_path / "store.db", "csv", [timed_runs_csv])[0].already_ingested
    assert [r.n_stored for r in datasets.ingest(url, ["lulesh_thicket"])] == [5]
    with open_store(url) as store:
        assert run_stats(store)["n_runs"] == 65


def test_a_generator_keeps_the_store_it_opened_until_it_is_done(stored: Path) -> None:
    runs = iter_runs(stored, batch_rows=2)
    first = next(runs)
    assert [first["id"], *[run["id"] for run in runs]] == list(range(1, 61))


@pytest.mark.parametrize("given", [object(), 5, None])
@pytest.mark.parametrize("call", ["runs_frame", "train", "advise_plan", "ingest_file"])
def test_anything_else_is_one_line_naming_what_a_store_is(call: str, given: object,
                                                          timed_runs_csv: Path) -> None:
    calls: dict[str, Callable[[Any], Any]] = {
        "runs_frame": runs_frame, "train": train,
        "advise_plan": lambda store: advise_plan(store, PlanRequest(**BERT)),
        "ingest_file": lambda store: ingest_file(store, "csv", timed_runs_csv)}
    with pytest.raises(BadInputError, match=r"^a store is named by its URL or a SQLite "
                       rf"file's path, not a {type(given).__name__}; the functions that take "
                       "a store take one opened with perfpredict.store.open_store as well$"):
        calls[call](given)


def test_store_is_importable_without_sqlalchemy() -> None:
    """``Store`` lives where an estimate can tell it from a URL without paying for
    SQLAlchemy's import."""
    import subprocess
    import sys

    code = ("import sys; from perfpredict.store.handle import Store, store_url_of; "
            "print('sqlalchemy' in sys.modules, store_url_of('a.db'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "sqlite:///a.db"]
    assert Store.__module__ == "perfpredict.store.opened"


@pytest.mark.parametrize(("sqlstate", "lost"), [
    (None, True),        # the client lost the server
    ("08006", True),     # connection_failure
    ("57P01", True),     # admin_shutdown: a restart, a killed backend
    ("40P01", False),    # deadlock_detected: an OperationalError, no lost connection
    ("53100", False),    # disk_full: running again would not fix it
])
def test_only_a_connection_the_server_lost_is_said_to_be_lost(sqlstate: str | None,
                                                               lost: bool) -> None:
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from sqlalchemy import create_engine
    from sqlalchemy.exc import OperationalError

    from perfpredict.store.lost import lost_connection
    from perfpredict.store.opened import Store

    class ServerError(Exception):
        """What psycopg raises: the message and the SQLSTATE it carries."""

    orig = ServerError("the server said so")
    orig.sqlstate = sqlstate  # type: ignore[attr-defined]
    engine = create_engine("postgresql+psycopg://u@127.0.0.1:1/db")
    error = lost_connection(Store(engine, "postgresql+psycopg://u@127.0.0.1:1/db"),
                            OperationalError("INSERT ...", {}, orig))
    assert (error is not None) is lost
    if lost:
        assert str(error).startswith("lost the connection to the store at ")


def test_ingest_paths_takes_one_path_as_one_file(tmp_path: Path, timed_runs_csv: Path) -> None:
    """``ingest_paths(store, "csv", "runs.csv")`` read the text as paths of its letters
    ("/: is a directory, not a file"), and a Path was a TypeError."""
    store = tmp_path / "store.db"
    assert [r.n_stored for r in ingest_paths(store, "csv", str(timed_runs_csv))] == [60]
    assert [r.already_ingested for r in ingest_paths(store, "csv", timed_runs_csv)] == [True]


def test_a_store_a_library_caller_names_is_refused_in_the_libraries_terms(
        tmp_path: Path) -> None:
    """A notebook that passed the URL was told "check --db and PERFPREDICT_DB" and, for
    a store not there, to run "perfpredict --db ... db init": options it never gave and
    a command it is not running. It is told the URL it passed and the calls to make."""
    pytest.importorskip("psycopg")
    url = "postgresql+psycopg://u@127.0.0.1:1/db"
    with pytest.raises(BadInputError) as refused:
        open_store(url)
    assert str(refused.value).startswith(f"cannot open the store at {url}: OperationalError: ")
    assert str(refused.value).endswith("; check that the server is running")
    missing = tmp_path / "runs.dbb"
    with pytest.raises(NotFoundError) as not_there:
        runs_frame(missing)
    assert str(not_there.value) == (
        f"no store at {missing}; create it with perfpredict.store.open_store('{missing}') or "
        f"by ingesting into it (perfpredict.ingest.ingest_file('{missing}', FORMAT, FILE))")
    with pytest.raises(BadInputError) as foreign:
        open_store("mysql://u@dbhost/db")
    for error in (refused, not_there, foreign):
        assert "--db" not in str(error.value) and "PERFPREDICT_DB" not in str(error.value)


def test_the_common_mistakes_name_the_call_to_make_beside_the_command(tmp_path: Path) -> None:
    """An empty store, an application it does not know: the messages named only the
    command to run ("run 'perfpredict train'", "'perfpredict datasets load'") to a
    notebook, whose fix is a call; they name both."""
    from perfpredict.remedies import LOAD_DATASETS, TRAIN

    store = open_store(tmp_path / "empty.db")
    with pytest.raises(NotTrainedError, match="^nothing to train on: the store holds no runs"
                       ) as empty:
        train(store)
    assert str(empty.value).endswith(f"or the bundled data sets ({LOAD_DATASETS})")
    assert "perfpredict.ingest.ingest_file(store, FORMAT, FILE)" in str(empty.value)
    with pytest.raises(NotFoundError) as no_runs:
        runs_frame(store, app="bert")
    assert str(no_runs.value).endswith(f"ingest runs first (e.g. {LOAD_DATASETS})")
    with pytest.raises(NotFoundError) as unknown:
        estimate(store, Query(app="nosuch", nodes=4))
    assert str(unknown.value).endswith(f"(ingest its runs and run {TRAIN})")
    for error in (empty, no_runs, unknown):
        assert "from Python, perfpredict." in str(error.value)
    store.dispose()


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_store_named_that_is_not_there_is_not_created(tmp_path: Path, call: str) -> None:
    """A mistyped path: ``runs_frame("runs.dbb")`` created an empty store and returned no
    runs (``train`` and ``evaluate`` said the store held none), where ``estimate`` said
    there was no such store, as every command but ``ingest`` and ``db init`` does."""
    missing = tmp_path / "runs.dbb"
    for given in (missing, f"sqlite:///{missing}"):
        with pytest.raises(NotFoundError, match=f"^no store at {missing}; create it"):
            CALLS[call](given)
    with pytest.raises(NotFoundError, match="^no store at "):
        train(missing)
    assert not missing.exists()


def test_the_ingest_calls_create_the_store_they_are_named(tmp_path: Path,
                                                         timed_runs_csv: Path) -> None:
    """As ``perfpredict ingest`` and ``datasets load`` create the store ``--db`` names."""
    assert ingest_file(tmp_path / "a.db", "csv", timed_runs_csv).n_stored == 60
    assert ingest_paths(tmp_path / "b.db", "csv", timed_runs_csv)[0].n_stored == 60
    assert datasets.ingest(tmp_path / "c.db", "lulesh_thicket")[0].n_stored == 5
    assert run_stats(tmp_path / "a.db")["n_runs"] == 60


def test_a_dataframe_of_runs_is_refused_saying_how_to_ingest_it(tmp_path: Path,
                                                                timed_runs_csv: Path) -> None:
    """A notebook's frame of runs was a TypeError from ``ingest_file``, and
    ``ingest_paths`` read its column names as files ("app: no such file")."""
    import pandas as pd

    frame = pd.read_csv(timed_runs_csv)
    with open_store(tmp_path / "store.db") as store:
        for ingest in (ingest_file, ingest_paths):
            with pytest.raises(BadInputError, match=r"^a file to ingest is named by its path, "
                               r"not a DataFrame; write runs held in Python to a CSV file "
                               r"first \(frame\.to_csv\('runs\.csv', index=False\)\)"):
                ingest(store, "csv", frame)
        assert run_stats(store)["n_runs"] == 0
        frame.to_csv(tmp_path / "runs.csv", index=False)
        assert ingest_file(store, "csv", tmp_path / "runs.csv").n_stored == 60


def test_ingest_options_that_no_option_could_be_are_refused(tmp_path: Path,
                                                            timed_runs_csv: Path) -> None:
    """``on_error="skp"`` was read as "skip" (only "fail" was looked for), and a dict
    of options an AttributeError ("'dict' object has no attribute 'system'"); nothing
    is stored from either."""
    from perfpredict.ingest.records import IngestOptions

    with open_store(tmp_path / "store.db") as store:
        for ingest in (ingest_file, ingest_paths):
            with pytest.raises(BadInputError, match=r"^on_error must be one of: fail, skip, "
                               r"not 'skp'$"):
                ingest(store, "csv", timed_runs_csv, IngestOptions(on_error="skp"))  # type: ignore[arg-type]
            with pytest.raises(BadInputError, match=r"^expected an IngestOptions, as "
                               r"perfpredict\.ingest\.records\.IngestOptions\(on_error='skip'\), "
                               r"not a dict; IngestOptions\(\*\*fields\) makes one of a dict$"):
                ingest(store, "csv", timed_runs_csv, {"on_error": "skip"})  # type: ignore[arg-type]
        with pytest.raises(BadInputError, match=r"^system must be a machine's name, as text, "
                           r"not 5$"):
            ingest_file(store, "csv", timed_runs_csv, IngestOptions(system=5))  # type: ignore[arg-type]
        # a TypeError from inside zoneinfo where the format reads local times (sacct),
        # and ignored where it does not
        with pytest.raises(BadInputError, match=r"^timezone must be an IANA zone's name, as "
                           r"text \('UTC', 'Europe/Berlin'\), not 5$"):
            ingest_file(store, "csv", timed_runs_csv, IngestOptions(timezone=5))  # type: ignore[arg-type]
        # one thing that is no path, as ingest_file refuses it ('int' is not iterable)
        with pytest.raises(BadInputError, match=r"^a file to ingest is named by its path, "
                           r"not a int"):
            ingest_paths(store, "csv", 5)  # type: ignore[arg-type]
        assert run_stats(store)["n_runs"] == 0
        assert ingest_file(store, "csv", timed_runs_csv,
                           IngestOptions(on_error="skip")).n_stored == 60


@pytest.mark.parametrize(("system", "kind"), [("", "empty"), ("  ", "blank")])
def test_ingest_options_with_a_blank_system_say_the_name_is_missing(
        tmp_path: Path, timed_runs_csv: Path, system: str, kind: str) -> None:
    """The options' own message named ingest's option as what was blank ("--system is
    blank"), to a caller who had written ``system=``: it says the system name is, and
    the fix as the pipeline asks for a system its format does not name."""
    from perfpredict.ingest.records import IngestOptions

    says = (rf"^the system name is {kind}; pass --system NAME, the machine the jobs ran "
            r"on \('perfpredict systems list' shows the catalog's\)$")
    with pytest.raises(BadInputError, match=says):
        IngestOptions(system=system).validate()
    with open_store(tmp_path / "store.db") as store:
        with pytest.raises(BadInputError, match=says):
            ingest_file(store, "csv", timed_runs_csv, IngestOptions(system=system))
        assert run_stats(store)["n_runs"] == 0


def test_a_system_or_a_dask_address_that_is_no_text_is_bad_input(tmp_path: Path) -> None:
    """``get_system(store, 5)`` and ``train(store, dask=5)`` were AttributeErrors from
    inside ("'int' object has no attribute 'casefold'", "... 'partition'")."""
    with open_store(tmp_path / "store.db") as store:
        with pytest.raises(BadInputError, match=r"^a system is named by text, not 5$"):
            get_system(store, 5)  # type: ignore[arg-type]
        with pytest.raises(BadInputError, match=r"^dask must be a scheduler's address or "
                           r"'local', as text \('tcp://host:8786', 'local:4'\), not 5$"):
            train(store, dask=5)  # type: ignore[arg-type]


def test_a_limit_of_rows_is_a_count_as_limit_takes_it(tmp_path: Path) -> None:
    """``iter_runs(store, limit=-1)`` gave every run on SQLite (and is an error on
    PostgreSQL), and ``limit="3"`` was taken as a number; 0 is no rows, as ``--limit 0``."""
    from perfpredict.store.queries import iter_rejects

    with open_store(tmp_path / "store.db") as store:
        datasets.ingest(store, "lulesh_thicket")
        assert [len(list(iter_runs(store, limit=n))) for n in (0, 2, None)] == [0, 2, 5]
        for ask in (iter_runs, iter_rejects):
            for wrong in (-1, "3", 2.5):
                with pytest.raises(BadInputError, match=r"^limit must be a whole number "
                                   r"from 0 to \d+, got "):
                    list(ask(store, limit=wrong))  # type: ignore[operator]


def test_a_file_of_rejects_that_is_no_path_is_bad_input(tmp_path: Path) -> None:
    """``iter_rejects(store, path=5)`` was a TypeError from inside pathlib."""
    from perfpredict.store.queries import iter_rejects

    with open_store(tmp_path / "store.db") as store:
        with pytest.raises(BadInputError, match=r"^the file whose rejects to list is named "
                           r"by its path, a text or a Path, not an int$"):
            list(iter_rejects(store, path=5))  # type: ignore[arg-type]

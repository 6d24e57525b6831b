"""Reading runs back: ``runs_frame``'s selection of (application, system) pairs, which
the dask workers read the store by (:func:`perfpredict.distributed.read_series`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfpredict.errors import BadInputError, NotFoundError, NotTrainedError
from perfpredict.ingest import ingest_file
from perfpredict.store import queries
from perfpredict.store.queries import runs_frame


@pytest.fixture
def three_pairs(store, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A store of two runs of each of (a, x), (b, x), (a, y), interleaved in id order."""
    path = tmp_path / "runs.csv"
    path.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"{app},{system},{nodes},{10 / nodes}\n"
        for nodes in (1, 2) for app, system in (("a", "x"), ("b", "x"), ("a", "y"))))
    ingest_file(store, "csv", path)
    return store


def test_many_pairs_are_read_in_several_queries(three_pairs,  # type: ignore[no-untyped-def]
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A partition of a center's store names thousands of pairs: PostgreSQL ran out of
    stack on 17,000 in one statement (a raw OperationalError). Read a few at a time, the
    runs come back as one query gives them, in id order, each once."""
    import pandas as pd

    everything = runs_frame(three_pairs)
    wanted = [("a", "y"), ("a", "x"), ("a", "y")]
    monkeypatch.setattr(queries, "PAIRS_PER_QUERY", 1)
    frame = runs_frame(three_pairs, app_systems=wanted)
    pd.testing.assert_frame_equal(frame, everything[everything.app == "a"]
                                  .reset_index(drop=True))
    absent = [(f"app{i}", f"system{i}") for i in range(20_000)]
    monkeypatch.undo()
    assert runs_frame(three_pairs, app_systems=[*absent, ("b", "x")]).id.tolist() == [2, 5]


def test_no_pairs_is_no_runs_with_the_columns_of_some(three_pairs) -> None:  # type: ignore[no-untyped-def]
    frame = runs_frame(three_pairs, app_systems=[])
    assert frame.empty and list(frame.columns) == list(runs_frame(three_pairs).columns)


@pytest.mark.parametrize("app_systems", [
    ("a", "x"), "ax", ["ax"], [("a",)], [("a", "x", "z")], [(1, 2)], [(None, "x")], 5,
])
def test_what_is_not_pairs_of_names_is_one_line(three_pairs,  # type: ignore[no-untyped-def]
                                                app_systems: object) -> None:
    """Each failed in the database (SQLite's "sub-select returns 1 columns", PostgreSQL's
    "operator does not exist: character varying = smallint"), or, a text, was read as
    pairs of its letters."""
    with pytest.raises(BadInputError, match=r"^app_systems must be \(application, system\) "
                       r"pairs of names, as \[\('LULESH', 'Quartz'\)\]; got "):
        runs_frame(three_pairs, app_systems=app_systems)  # type: ignore[arg-type]


def test_one_application_by_name_is_that_application_not_its_letters(three_pairs) -> None:  # type: ignore[no-untyped-def]
    """``runs_frame(store, app="a")`` and ``iter_runs``: a name, as ``evaluate`` and
    ``train`` take one; as a sequence of letters "ab" asked for the runs of a and b."""
    assert set(runs_frame(three_pairs, app="a").app) == {"a"}
    with pytest.raises(NotFoundError, match="^the store holds no runs of application 'ab'"):
        runs_frame(three_pairs, app="ab")
    assert {run["app"] for run in queries.iter_runs(three_pairs, app="b")} == {"b"}
    assert runs_frame(three_pairs, app=["a", "b"]).shape[0] == 6


def test_applications_named_by_a_numpy_array_or_a_pandas_series(three_pairs) -> None:  # type: ignore[no-untyped-def]
    """A notebook names them from a frame (``runs.app.unique()``, a column): a numpy
    array of two names or any Series was "The truth value of an array (a Series) is
    ambiguous", a ValueError out of ``runs_frame``, ``train`` and ``evaluate``."""
    import numpy as np
    import pandas as pd

    from perfpredict.train import train

    assert runs_frame(three_pairs, app=np.array(["a", "b"])).shape[0] == 6
    assert set(runs_frame(three_pairs, app=pd.Series(["b"])).app) == {"b"}
    assert {run["app"] for run in queries.iter_runs(three_pairs, app=pd.Series(["b"]))} == {"b"}
    # the store's two-scale series are too few to train on: past the names, to the store
    with pytest.raises(NotTrainedError, match="nothing to train on: the store holds 4 runs"):
        train(three_pairs, app=pd.Series(["a"]))


@pytest.mark.parametrize("app", [5, [5], ["a", None], [("a", "x")]])
def test_what_is_not_application_names_is_one_line(three_pairs, app: object) -> None:  # type: ignore[no-untyped-def]
    """``app=5`` was a TypeError ("'int' object is not iterable"); ``app=[5]`` read as
    no runs, as if the store held none of it."""
    from perfpredict.evaluate import evaluate
    from perfpredict.train import train

    said = r"^app must be an application's name or a list of names, as \['LULESH'\], got "
    with pytest.raises(BadInputError, match=said):
        runs_frame(three_pairs, app=app)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=said):
        train(three_pairs, app=app)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=said):
        evaluate(three_pairs, app=app)  # type: ignore[arg-type]


def test_the_walltime_advisor_reads_one_application_by_name(store) -> None:  # type: ignore[no-untyped-def]
    """``fit_walltime_advisor(store, app="bert")``, as ``train`` and ``evaluate`` take
    ``app``, was SQLAlchemy's "IN expression list ... expected, got 'bert'" (an
    ArgumentError); it reads that application's jobs of a real sacct log."""
    from perfpredict.advise.walltime.service import jobs_frame
    from tests.conftest import shared_path

    ingest_file(store, "sacct", shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv"))
    assert jobs_frame(store, "1AbC-2-3").app.tolist() == ["1AbC-2-3"]
    assert sorted(jobs_frame(store, ["1AbC-2-3", "anonjobname"]).app) == ["1AbC-2-3", "anonjobname"]


def test_each_column_has_one_dtype_whatever_the_store(store) -> None:  # type: ignore[no-untyped-def]
    """pandas inferred the dtypes from the values read: on an empty store every column
    was object, and a number with gaps (``io_bytes``, ``requested_walltime_s``, ``gpus``,
    ``submit_epoch_s``) object or float64 as the runs had it, or int64 where none was
    missing, so ``df.io_bytes.mean()``, ``describe()`` and plots failed or skipped
    them. Now each has the dtype its schema type gives, on SQLite and PostgreSQL alike."""
    import numpy as np
    import pandas as pd

    from perfpredict import datasets
    from tests.conftest import shared_path

    text = pd.Series(["text"]).dtype
    expected = {"id": np.int64, "app": text, "system": text, "job_id": text,
                "nodes": np.float64, "gpus": np.float64, "exit_code": np.float64,
                "io_bytes": np.float64, "requested_walltime_s": np.float64,
                "runtime_s": np.float64, "submit_epoch_s": np.float64,
                "censored": np.bool_, "extra": object, "source_format": text,
                "source": text}
    empty = runs_frame(store, with_source=True)
    datasets.ingest(store, ["castro_scaling"])
    ingest_file(store, "sacct", shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv"))
    full = runs_frame(store, with_source=True)
    # Castro's runs: every node count and no scheduler field (object or int64 before)
    castro = runs_frame(store, app=sorted(a for a in set(full.app) if a.startswith("Castro")))
    for frame in (empty, full, castro):
        dtypes = frame.dtypes.to_dict()
        assert {name: dtypes[name] for name in expected if name in dtypes} == {
            name: np.dtype(dtype) if dtype is not text else text
            for name, dtype in expected.items() if name in dtypes}
    assert empty.dtypes.to_dict() == full.dtypes.to_dict()
    assert castro.dtypes.to_dict() == runs_frame(store).dtypes.to_dict()
    assert castro.nodes.notna().all() and castro.requested_walltime_s.isna().all()
    jobs = full[full.source_format == "sacct"]
    assert jobs.requested_walltime_s.mean() > 0 and not jobs.submit_epoch_s.isna().any()
    assert {"io_bytes", "requested_walltime_s", "gpus", "nodes"} <= set(full.describe().columns)


def test_every_public_function_names_applications_app(three_pairs) -> None:  # type: ignore[no-untyped-def]
    """``train`` and ``fit_walltime_advisor`` took ``apps=`` where ``evaluate``,
    ``runs_frame`` and the CLI's ``--app`` say ``app``: one spelling now, the old one
    still taken by those that had it, with a DeprecationWarning, for one release."""
    import inspect

    from perfpredict import distributed, evaluate, train
    from perfpredict.advise import walltime

    modules = (train, evaluate, queries, walltime, distributed)
    for module in modules:
        for name, function in vars(module).items():
            if (inspect.isfunction(function) and not name.startswith("_")
                    and function.__module__.startswith("perfpredict")):
                assert "apps" not in inspect.signature(function).parameters, name
    with pytest.warns(DeprecationWarning, match=r"^train\(apps=\.\.\.\) is deprecated and "
                      r"goes in the next release; write app=\.\.\.$"):
        with pytest.raises(NotTrainedError, match="the store holds 4 runs"):
            train.train(three_pairs, apps=["a"])  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match=r"^jobs_frame\(apps="):
        assert walltime.jobs_frame(three_pairs, apps="a").empty  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"takes app= alone, not also apps="):
        walltime.fit_walltime_advisor(three_pairs, app="a", apps="a")  # type: ignore[call-arg]


def test_train_refuses_an_empty_collection_of_applications(three_pairs) -> None:  # type: ignore[no-untyped-def]
    """``train(store, app=runs.app[mask].unique())`` with a mask that kept nothing trained
    every application and replaced the store's predictor: an empty collection names no
    application, and None (the default) is how every application is asked for."""
    import numpy as np

    from perfpredict.errors import BadInputError
    from perfpredict.store.artifacts import trained_applications
    from perfpredict.train import train

    for empty in ([], (), np.array([], dtype=object)):
        with pytest.raises(BadInputError, match=r"^app names no application \(an empty "
                           r"collection\); leave it out \(None\) to train on every"):
            train(three_pairs, app=empty)
    assert trained_applications(three_pairs.url) == []  # nothing trained, nothing replaced


def test_every_function_taking_an_application_finds_it_as_the_commands_do(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """``runs_frame(store, app="lulesh 2.0.3")`` was an empty frame and ``train``'s,
    ``evaluate``'s and ``iter_runs``' "no runs of application", where an estimate found
    the store's ``LULESH 2.0.3``: every function taking ``app=`` now finds it as
    :func:`~perfpredict.names.resolve_name` does, on SQLite and PostgreSQL alike."""
    from perfpredict import datasets
    from perfpredict.advise.walltime.service import jobs_frame
    from perfpredict.names import ResolvedName

    datasets.ingest(store, ["lulesh_thicket"])
    assert queries.resolve_apps(store, [" lulesh 2.0.3", "LULESH 2.0.3"]) == [
        ResolvedName(" lulesh 2.0.3", "LULESH 2.0.3", "application"),
        ResolvedName("LULESH 2.0.3", "LULESH 2.0.3", "application")]
    assert queries.resolve_apps(store, "lulesh 2.0.3")[0].note == (
        "application 'lulesh 2.0.3' is stored as 'LULESH 2.0.3'; using 'LULESH 2.0.3'")
    assert queries.resolve_apps(store, "LULESH 2.0.3")[0].note is None
    assert runs_frame(store, app="lulesh 2.0.3").shape[0] == 5
    assert len(list(queries.iter_runs(store, app="Lulesh 2.0.3 "))) == 5
    assert queries.app_system_sizes(store, app="LULESH 2.0.3 ") == [("LULESH 2.0.3", "opal", 5)]
    assert queries.count_submitted_jobs(store, app="lulesh 2.0.3") == 0
    assert jobs_frame(store, "lulesh 2.0.3").empty  # benchmark rows: no submit times
    with pytest.raises(NotFoundError, match="^the store holds no runs of application "
                       "'lulesh'; did you mean LULESH 2.0.3[?]$"):
        runs_frame(store, app="lulesh")
    # a second spelling of the name: the exact one is found, any other names both
    twin = tmp_path / "twin.csv"
    twin.write_text("app,system,nodes,ranks_per_node,runtime_s\nLulesh 2.0.3,opal,1,27,47.2\n")
    ingest_file(store, "csv", twin)
    assert set(runs_frame(store, app="Lulesh 2.0.3").app) == {"Lulesh 2.0.3"}
    both = ("^application 'lulesh 2.0.3' matches 'LULESH 2.0.3', 'Lulesh 2.0.3', which "
            "differ only in letter case or spacing; give one of them exactly$")
    for read in (lambda: runs_frame(store, app="lulesh 2.0.3"),
                 lambda: list(queries.iter_runs(store, app="lulesh 2.0.3")),
                 lambda: queries.export_runs(store, app="lulesh 2.0.3"),
                 lambda: jobs_frame(store, "lulesh 2.0.3")):
        with pytest.raises(BadInputError, match=both):
            read()


def test_a_store_moved_by_export_keeps_its_scheduler_jobs_apart(cli, db_url: str,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    """Moving a SQLite store to PostgreSQL by ``runs export`` and ``ingest csv`` made
    every sacct, PBS and SWF job a benchmark row of the new store, and ``train`` fitted
    421 series there where the SQLite store fitted 241. The export names the format
    each run was read from, and the store it is ingested into reads its runs as that."""
    from collections import Counter

    from perfpredict.model.series import unstudied_jobs
    from perfpredict.store import open_store
    from tests.conftest import _cli_on, shared_path

    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    source = _cli_on(source_url)
    assert source("datasets", "load", "lulesh_thicket").exit_code == 0
    for fmt, log in (("sacct", ("slurm", "xdmod-sacct-accounting-logs.psv")),
                     ("pbs", ("pbs", "xdmod-accounting-logs.log"))):
        assert source("ingest", fmt, str(shared_path("logs", *log)),
                      "--system", fmt).exit_code == 0
    exported = source("runs", "export", "--format", "csv")
    assert exported.exit_code == 0 and "source_format" in exported.stdout.splitlines()[0]
    moved = tmp_path / "moved.csv"
    moved.write_text(exported.stdout)
    assert cli("ingest", "csv", str(moved)).exit_code == 0
    assert cli("runs", "export", "--format", "csv").stdout == exported.stdout

    def formats(url: str) -> tuple[Counter[tuple[str, str]], tuple[int, list[str]]]:
        opened = open_store(url)
        try:
            frame = runs_frame(opened)
        finally:
            opened.dispose()
        return Counter(zip(frame.app, frame.source_format, strict=True)), unstudied_jobs(frame)

    before = formats(source_url)
    assert before[1][1] == ["pbs", "sacct"]
    assert formats(db_url) == before


def test_a_users_own_source_format_column_is_an_extra_field(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Only an ingest format other than csv marks a CSV row as another store's job: a
    benchmark table's own ``source_format`` column leaves its rows benchmark rows."""
    path = tmp_path / "runs.csv"
    path.write_text("app,system,nodes,runtime_s,source_format\n"
                    "a,x,1,10,benchmark\na,x,2,5,CSV\n")
    ingest_file(store, "csv", path)
    frame = runs_frame(store)
    assert list(frame.source_format) == ["csv", "csv"]
    assert [run["source_format"] for run in frame.extra] == ["benchmark", "CSV"]

"""``perfpredict.estimate`` as a notebook calls it: the store named by its URL, queries
checked as the CLI checks them, each mistake one of the package's own errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.estimate import Query, estimate, load_predictor
from perfpredict.figures import format_value, significant
from perfpredict.store import open_store

BERT = {"app": "bert", "system": "dgxa100_ngc22.04_pytorch (NVIDIA)"}


def test_a_store_url_that_names_no_store_is_refused(tmp_path: Path) -> None:
    """A typo in the URL must not answer from the bundled predictor without a word."""
    missing = tmp_path / "typo.db"
    with pytest.raises(NotFoundError, match=f"no store at {missing}"):
        estimate(f"sqlite:///{missing}", Query(**BERT, nodes=64))
    assert not missing.exists()  # nor create one


def test_none_is_the_bundled_predictor() -> None:
    assert load_predictor(None).origin.startswith("the bundled predictor")
    assert estimate(None, Query(**BERT, nodes=64)).predicted_runtime_s > 0


def test_something_else_than_a_store_is_one_clear_error() -> None:
    with pytest.raises(BadInputError, match=r"a store is named by its URL or a SQLite "
                       r"file's path, not a object; the functions that take a store take "
                       r"one opened with perfpredict.store.open_store as well"):
        estimate(object(), Query(**BERT, nodes=64))  # type: ignore[arg-type]


def test_an_open_store_is_taken_as_its_url_is(tmp_path: Path) -> None:
    """A notebook holding the Store it ingested into estimates from it; before, it was
    told to pass the Store's .url instead."""
    from perfpredict.store import open_store

    with open_store(tmp_path / "a.db") as store:
        assert load_predictor(store).db_url == store.url
        assert estimate(store, Query(**BERT, nodes=64)).predicted_runtime_s > 0


def test_a_store_is_named_by_a_sqlite_files_path_as_the_cli_names_it(tmp_path: Path) -> None:
    """``--db /tmp/x/a.db`` works; the library said a path was "not a SQLite file or a
    PostgreSQL database"."""
    from perfpredict.store import open_store

    path = tmp_path / "a.db"
    open_store(path).dispose()
    for named in (path, str(path)):
        assert load_predictor(named).db_url == f"sqlite:///{path}"
        assert estimate(named, Query(**BERT, nodes=64)).predicted_runtime_s > 0


@pytest.mark.parametrize(("nodes", "message"), [
    (1.5, "nodes must be a whole number, got 1.5"),
    ("64", "nodes must be a number, got '64'"),
    (True, "nodes must be a number, got True"),
    (0, "nodes must be a positive number, got 0"),
])
def test_node_counts_are_checked_as_the_cli_checks_them(nodes: object, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        estimate(None, Query(**BERT, nodes=nodes))  # type: ignore[arg-type]


@pytest.mark.parametrize(("layout", "message"), [
    ({"threads_per_rank": 1.5}, "^threads_per_rank must be a whole number, got 1.5"),
    ({"nodes": 3, "ranks_per_node": 0.5}, "^ranks_per_node 0.5 on 3 nodes is 1.5 ranks"),
])
def test_a_layout_of_part_threads_or_ranks_is_refused(layout: dict[str, float], message: str) -> None:
    """As ingest refuses it: an estimate answered for 1.5 threads per rank."""
    with pytest.raises(BadInputError, match=message):
        estimate(None, Query(**{**BERT, "nodes": 64, **layout}))  # type: ignore[arg-type]


def test_a_library_query_names_its_fields_as_keywords_the_command_line_as_options(
        sqlite_cli, sqlite_url: str) -> None:  # type: ignore[no-untyped-def]
    """``estimate(store, Query(nodes=0))`` said "--nodes must be a positive number" to
    a caller who wrote ``nodes=``, and its notes "give one of those in --system"; the
    command line still names its options, and ``advise``, whose request names its own
    fields by their options, too."""
    from perfpredict.advise.plan import PlanRequest, advise_plan

    with pytest.raises(BadInputError, match=r"^threads_per_rank must be a positive number, "
                       r"got 0$"):
        estimate(None, Query(**BERT, nodes=64, threads_per_rank=0))
    with pytest.raises(NotFoundError, match=r"\(give one of those, or part of one, in "
                       r"system\)$"):
        estimate(None, Query(app="bert", system="Frontir", nodes=64))
    with pytest.raises(BadInputError, match=r"^--threads-per-rank must be a positive "
                       r"number, got 0$"):
        advise_plan(sqlite_url, PlanRequest(app="bert", system=BERT["system"],
                                            threads_per_rank=0))
    result = sqlite_cli("estimate", "--app", "bert", "--system", "Frontir", "--nodes", "64")
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("(give one of those, or part of one, in --system)")
    result = sqlite_cli("estimate", "--app", "bert", "--nodes", "64", "--threads-per-rank",
                        "0")
    assert (result.exit_code, result.stderr) == (
        2, "Error: --threads-per-rank must be a positive number, got 0\n")


def test_a_mean_of_ranks_per_node_that_makes_whole_ranks_is_a_layout() -> None:
    """Looked up as any layout is (BERT ran 8 ranks per node), not refused as input."""
    with pytest.raises(NotFoundError, match="bert has no runs with 0.5 ranks per node"):
        estimate(None, Query(**BERT, nodes=64, ranks_per_node=0.5))


def test_numpy_counts_are_numbers() -> None:
    as_int = estimate(None, Query(**BERT, nodes=64)).predicted_runtime_s
    assert estimate(None, Query(**BERT, nodes=np.int64(64))).predicted_runtime_s == as_int  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "text"), [
    (6440.2, "6,440"), (999.6, "1,000"), (0.01234, "0.0123"), (1.5, "1.5"), (375.0, "375"),
    (100.0, "100"), (2.0e7, "20,000,000"), (1e-5, "1e-05"),
])
def test_table_numbers_never_read_in_exponent_notation(value: float, text: str) -> None:
    assert significant(value) == text
    if abs(value) < 999.5:
        assert format_value(value) == text


def test_a_breakdown_with_data_staging_adds_up_to_the_estimate() -> None:
    """The staging share of the runtime came on top of the law's parts, which already
    added up to it: deepcam's 371.9 s split into 57.3 + 314.6 + 175.7 s."""
    from perfpredict.estimate.breakdown import law_breakdown

    parts = law_breakdown({"serial_s": 50.0, "parallel_s": 8000.0}, "amdahl", 32.0,
                          371.9, 0.4724)
    assert sum(parts.values()) == pytest.approx(371.9)
    assert parts["io_staging_s"] == pytest.approx(371.9 * 0.4724)
    assert parts["serial_s"] / parts["parallel_s"] == pytest.approx(50.0 / 250.0)


def test_library_requests_of_the_wrong_type_are_bad_input() -> None:
    """A TypeError, an OverflowError or an 'artifact layout' message escaped for these."""
    from perfpredict.advise.plan import PlanRequest

    for query, said in ((Query(app=5, nodes=64), "app must be text, got 5"),  # type: ignore[arg-type]
                        (Query(**BERT, nodes=None), "nodes must be a number, got None"),  # type: ignore[arg-type]
                        (Query(**BERT, nodes=10**400), "nodes must be at most")):
        with pytest.raises(BadInputError, match=said):
            estimate(None, query)
    for fields, said in (({"runs": 2.5}, "--runs must be a whole number from 1 to "
                                         "1000000, got 2.5"),
                         ({"runs": 10**400}, "--runs must be a whole number from 1 to "
                                             "1000000, got a number of 401 digits"),
                         ({"kill_risk": "0.1"}, "--kill-risk must be a finite number, got '0.1'"),
                         ({"kill_risk": float("inf")}, "--kill-risk must be a finite number, got inf"),
                         ({"max_nodes": float("nan")}, "--max-nodes must be a whole number"),
                         # an AttributeError ('int' object has no attribute 'strip') and
                         # a TypeError ('int' object is not iterable)
                         ({"period_label": 5}, "--period-label needs a label of printable "
                                               "text on one line, got 5"),
                         ({"run_classes": 5}, "--run-class 5 is not LABEL=NODESxRUNS"),
                         ({"run_classes": [5]}, "--run-class 5 is not LABEL=NODESxRUNS")):
        with pytest.raises(BadInputError, match=said):
            PlanRequest(app="bert", **fields).validate()  # type: ignore[arg-type]


def test_a_count_given_as_a_whole_float_is_refused_as_the_float_it_is() -> None:
    """``max_nodes=256.0`` (a frame's column holds floats) was refused as "got 256",
    which reads as if 256 itself were out of range."""
    from perfpredict.advise.plan import PlanRequest

    for fields, said in (({"max_nodes": 256.0}, "--max-nodes must be a whole number from 1 "
                                                "to 2147483647, got 256.0, a float; give it "
                                                "as an int, 256"),
                         ({"runs": np.float64(3)}, "--runs must be a whole number from 1 to "
                                                   "1000000, got 3.0, a float; give it as an "
                                                   "int, 3"),
                         ({"max_nodes": 0.0}, "--max-nodes must be a whole number from 1 to "
                                              "2147483647, got 0$")):
        with pytest.raises(BadInputError, match=said):
            PlanRequest(app="bert", **fields).validate()  # type: ignore[arg-type]


def test_an_estimate_of_a_numpy_node_count_writes_as_json() -> None:
    import json

    doc = estimate(None, Query(**BERT, nodes=np.int64(64))).as_dict()
    assert json.loads(json.dumps(doc))["nodes"] == 64


def test_a_confidence_that_is_not_a_number_is_bad_input() -> None:
    """``confidence="0.9"`` (a notebook widget's text) or None was a TypeError out of
    the comparison with 0; advise and evaluate already said it in one line."""
    for confidence in ("0.9", None, float("nan")):
        with pytest.raises(BadInputError, match=r"--confidence must be between 0 and 1 "
                           r"\(0.9 for 90% intervals\), got ('0.9'|None|nan)$"):
            estimate(None, Query(**BERT, nodes=64), confidence=confidence)  # type: ignore[arg-type]


def test_an_estimate_and_a_plan_of_numpy_numbers_write_as_json(tmp_path: Path) -> None:
    """A confidence of numpy's float32, or a plan's runs, periods or kill risk taken from
    a frame (numpy's int64, float32), made ``json.dumps`` of the answer's ``as_dict``
    fail ("Object of type float32 is not JSON serializable")."""
    import json

    from perfpredict.advise.plan import PlanRequest, advise_plan

    doc = estimate(None, Query(**BERT, nodes=64), confidence=np.float32(0.8)).as_dict()  # type: ignore[arg-type]
    assert json.loads(json.dumps(doc))["confidence"] == pytest.approx(0.8)
    request = PlanRequest(**BERT, runs=np.int64(3), periods=np.int64(2),  # type: ignore[arg-type]
                          kill_risk=np.float32(0.1), confidence=np.float64(0.8),  # type: ignore[arg-type]
                          max_nodes=np.int64(64))  # type: ignore[arg-type]
    # an empty store: the advice of the bundled predictor, which it falls back to
    open_store(tmp_path / "empty.db").dispose()
    advice = json.loads(json.dumps(advise_plan(tmp_path / "empty.db", request).as_dict()))
    assert (advice["runs"], advice["resource_totals"]["periods"]) == (3, 2)
    assert advice["kill_risk"] == pytest.approx(0.1)


def test_a_query_file_is_named_by_a_text_as_ingest_names_one(tmp_path: Path) -> None:
    """``estimate_batch(store, "queries.csv")`` was an AttributeError ("'str' object has
    no attribute 'open'"), for a file there or not, and so was a DataFrame of queries."""
    import pandas as pd

    from perfpredict.estimate import estimate_batch, read_queries

    queries = tmp_path / "queries.csv"
    queries.write_text("app,system,nodes\nbert,dgxa100_ngc22.04_pytorch (NVIDIA),64\n")
    batch = estimate_batch(None, str(queries))
    assert batch.records()[0]["predicted_runtime_s"] == pytest.approx(
        estimate(None, Query(**BERT, nodes=64)).predicted_runtime_s)
    assert read_queries(str(queries))[2] == batch.queries
    with pytest.raises(BadInputError, match=r"nope\.csv: no such file; check the path$"):
        estimate_batch(None, str(tmp_path / "nope.csv"))
    with pytest.raises(BadInputError, match=r"^a query file is named by its path, not a "
                       r"DataFrame; for queries held in Python, call load_predictor"):
        estimate_batch(None, pd.DataFrame({"app": ["bert"], "nodes": [64]}))  # type: ignore[arg-type]


def test_a_dict_for_a_query_or_a_plan_request_says_how_to_make_one(tmp_path: Path) -> None:
    """``estimate(store, {"app": ..., "nodes": ...})``, the likeliest stand-in for a
    Query in a notebook, was an AttributeError ("'dict' object has no attribute
    'validate'"), and so was a dict for advise's and next-runs' PlanRequest."""
    from perfpredict.advise.next_runs import plan_next_runs
    from perfpredict.advise.plan import advise_plan

    fields = {**BERT, "nodes": 64}
    for ask in (lambda: estimate(None, fields), lambda: load_predictor(None).estimate_many([fields])):
        with pytest.raises(BadInputError, match=r"^expected a Query, as perfpredict\.estimate"
                           r"\.Query\(app='bert', nodes=64\), not a dict; Query\(\*\*fields\) "
                           r"makes one of a dict$"):
            ask()  # type: ignore[no-untyped-call]
    store = tmp_path / "empty.db"
    open_store(store).dispose()
    for advise in (advise_plan, plan_next_runs):
        with pytest.raises(BadInputError, match=r"^expected a PlanRequest, as perfpredict\."
                           r"advise\.plan\.PlanRequest\(app='bert'\), not a dict;"):
            advise(store, BERT)  # type: ignore[operator]
    with pytest.raises(BadInputError, match=r"^expected a Query, .* not a str$"):
        estimate(None, "bert")  # type: ignore[arg-type]


def test_an_estimate_shows_its_answer_in_one_line() -> None:
    """A notebook showed ``estimate(...)`` as the dataclass's repr: every field, the law's
    formula, the breakdown and the notes in full (about 2,000 characters, the runtime
    somewhere in the middle); now the answer and its interval, and how many notes
    ``as_dict()`` and ``notes`` hold."""
    est = estimate(None, Query(app="bert", nodes=64))
    shown = repr(est)
    assert shown == (
        f"Estimate(series={est.series!r}, nodes=64, predicted_runtime_s="
        f"{est.predicted_runtime_s:.4g}, lower_runtime_s={est.lower_runtime_s:.4g}, "
        f"upper_runtime_s={est.upper_runtime_s:.4g}, confidence=0.9, "
        f"extrapolation_doublings=1, n_notes={len(est.notes)})")
    assert len(shown) < 300 and est.notes and est.notes[0] not in shown
    assert est.as_dict()["notes"] == est.notes  # the fields are all still there


def test_a_loaded_predictor_shows_where_it_came_from_its_size_and_age() -> None:
    """A notebook showed ``load_predictor(store)`` as ``<...LoadedPredictor object at
    0x7f...>``: now its origin, the store (its password hidden), how many series and
    applications it answers for, and when it was trained."""
    import re

    from perfpredict.estimate.estimates import LoadedPredictor
    from perfpredict.estimate.lookup import load_artifact
    from perfpredict.store.artifacts import StoredSeries
    from perfpredict.utc import utc_text

    bundled = load_predictor(None)
    doc = load_artifact(None)[0]
    assert re.fullmatch(
        r"LoadedPredictor\(origin='the bundled predictor \(.+\.json\)', n_series=\d+, "
        r"n_applications=\d+, trained='\d{4}-\d\d-\d\d \d\d:\d\d UTC'\)", repr(bundled))
    assert f"n_series={doc['training']['n_series']}," in repr(bundled)
    assert f"trained='{utc_text(doc['created_epoch_s'])}'" in repr(bundled)
    assert f"n_applications={len({a.casefold() for a in bundled.entries.apps()})}," \
        in repr(bundled)
    url = "postgresql+psycopg://alice:s3cret@db.example.org/perfpredict"
    stored = LoadedPredictor(doc, "the store", StoredSeries(url, 1, {"bert": "", "lulesh": ""}),
                             url)
    assert "s3cret" not in repr(stored)
    assert repr(stored).startswith(
        "LoadedPredictor(origin='the store', store='postgresql+psycopg://alice:***@"
        f"db.example.org/perfpredict', n_series={doc['training']['n_series']}, "
        "n_applications=2, trained=")


@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(), st.none(),
                 st.text(max_size=3), st.integers(-2**31, 2**31).map(np.int64),
                 st.floats(width=32).map(np.float32), st.floats().map(np.float64),
                 st.booleans().map(np.bool_), st.fractions()),
       st.booleans())
def test_a_number_is_told_as_the_abstract_classes_tell_it(value: object, whole: bool) -> None:
    """``is_number`` reads Python's int and float by their type first (a batch estimate
    asks it of every field of 100k queries): the answer must stay the numeric tower's."""
    import numbers

    from perfpredict.counts import is_number

    expected = (isinstance(value, numbers.Integral if whole else numbers.Real)
                and not isinstance(value, bool))
    assert is_number(value, whole=whole) == expected


#: Queries of a batch whose rows must note what ``perfpredict estimate`` of each notes:
#: (CSV row, the Query of it).
NOTED_QUERIES = [
    # beyond the measured range (5 doublings), of the 3 series on the system named
    ("bert,XE8545x4A100-SXM-40GB (Dell),,1024,",
     Query(app="bert", system="XE8545x4A100-SXM-40GB (Dell)", nodes=1024)),
    # no system named: answered from the best-measured of 31 series on several systems
    ("bert,,,1024,", Query(app="bert", nodes=1024)),
    # a system matched by part of its name, with a peer series weighed in
    ("bert,Dell,,64,", Query(app="bert", system="Dell", nodes=64)),
    # inside the measured range: no note
    ("maskrcnn,XE8545x4A100-SXM-40GB (Dell),,16,",
     Query(app="maskrcnn", system="XE8545x4A100-SXM-40GB (Dell)", nodes=16)),
    # below the measured range, of an application trained alone, one run per scale
    ("LULESH 2.0.3,,1,1,", Query(app="LULESH 2.0.3", nodes=1, ranks_per_node=1)),
    # weak scaling beyond its range, at the widest calibrated error at 99%
    ("RELeARN,,32,64,", Query(app="RELeARN", nodes=64, ranks_per_node=32)),
    # an I/O volume on a system the shipped catalog lacks
    ("bert,dgxa100_ngc22.04_pytorch (NVIDIA),,4096,1e12",
     Query(app="bert", system="dgxa100_ngc22.04_pytorch (NVIDIA)", nodes=4096,
           io_bytes=1e12)),
]


def test_a_batch_row_notes_what_the_estimate_of_its_query_notes(tmp_path: Path) -> None:
    """``estimate --input`` answered each row without a word of what the estimate of
    the row's query notes: a row answered from another system's series, or five
    doublings beyond the measured runs, read as any other. Each row now carries the
    same notes, made by the same function, in ``columns()`` and the batch's CSV and JSON.
    Each query twice, apart: rows alike share their notes, and must not share them
    across series or matches (the query without a system was grouped with the one
    naming it, and noted as it). A note naming a field names it as the row does (it
    said "--io-bytes" and "narrow with --system" of a file's columns)."""
    import dataclasses

    from perfpredict.estimate import estimate_batch
    from perfpredict.estimate.lookup import column_name

    queries = tmp_path / "queries.csv"
    rows = [row for row, _ in NOTED_QUERIES]
    queries.write_text("app,system,ranks_per_node,nodes,io_bytes\n"
                       + "\n".join(rows + rows) + "\n")
    batch = estimate_batch(None, queries, confidence=0.99)
    as_rows = [dataclasses.replace(query, field_name=column_name) for _, query in NOTED_QUERIES]
    expected = [estimate(None, query, confidence=0.99).notes for query in as_rows] * 2
    assert [list(notes) for notes in batch.notes] == expected
    assert [record["notes"] for record in batch.records()] == expected
    notes_at = batch.columns.index("notes")
    assert [row[notes_at] for row in batch.rows] == ["; ".join(n) for n in expected]
    # each kind of note is in the test: the choice, beyond, below, peers, the widest
    # error, the noise floor, a new application, the roofline
    said = "\n".join(n for notes in expected for n in notes)
    for kind in ("31 series match", "extrapolating 5 doublings beyond",
                 "doublings below the smallest", "other series of bert on this input",
                 "as wide as the widest error", "run-to-run noise",
                 "no other series of LULESH 2.0.3", "in neither the shipped catalog"):
        assert kind in said
    assert expected[3] == []
    catalog = ("dgxa100_ngc22.04_pytorch (NVIDIA) is in neither the shipped catalog nor the "
               "store's, so {} could not be turned into time (describe the machine with "
               "'perfpredict systems add FILE.toml')")
    assert catalog.format("column 'io_bytes'") in expected[6]
    assert catalog.format("io_bytes") in estimate(None, NOTED_QUERIES[6][1], 0.99).notes
    narrow = "(narrow with {} / {} / {})"
    assert narrow.format("column 'system'", "column 'problem_size'",
                         "column 'variant'") in expected[1][0]
    assert narrow.format("system", "problem_size", "variant") in estimate(
        None, NOTED_QUERIES[1][1], 0.99).notes[0]
    predicted = load_predictor(None).columns(as_rows + [q for _, q in NOTED_QUERIES], 0.99)
    n_queries = len(NOTED_QUERIES)
    assert [list(n) for n in predicted["notes"][:n_queries]] == expected[:n_queries]
    # one list of queries named both ways: each row's notes name the field its way
    assert list(predicted["notes"][-1]) == estimate(None, NOTED_QUERIES[-1][1], 0.99).notes


def test_a_batch_validates_each_query_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the file validated each query to name a bad one's line, and estimating
    validated it again: about 0.3 s of a 100k-query batch's 1.8 s. Once now (the CLI's
    test holds the line a bad one is named by)."""
    from perfpredict.estimate import estimate_batch, read_queries

    validated: list[Query] = []
    validate = Query.validate
    monkeypatch.setattr(Query, "validate", lambda self: (validated.append(self), validate(self)))
    queries = tmp_path / "queries.csv"
    queries.write_text("app,nodes\nresnet,64\nbert,16\nresnet,2\n")
    assert len(estimate_batch(None, queries).rows) == 3
    assert len(validated) == 3
    queries.write_text("app,nodes,io_bytes\nresnet,64,\nresnet,8,-1\n")
    with pytest.raises(BadInputError, match=r"queries\.csv:3: column 'io_bytes' must be zero"):
        read_queries(queries)  # the library's reader validates what it hands out


def test_a_batch_of_estimates_shows_its_size_in_a_notebook_not_every_row(
        tmp_path: Path) -> None:
    """``estimate_batch(...)`` as a notebook cell's value wrote every row, query and
    note: 1.6 MB of text for 1,000 queries."""
    import pandas as pd

    from perfpredict.estimate import estimate_batch

    queries = tmp_path / "queries.csv"
    queries.write_text("app,nodes\n" + "".join(f"bert,{n}\n" for n in range(1, 201)))
    batch = estimate_batch(None, queries)
    assert repr(batch) == f"BatchEstimates(n_rows=200, columns={batch.columns!r})"
    assert list(pd.DataFrame(batch.records())["nodes"]) == list(range(1, 201))


def test_estimate_many_takes_any_iterable_of_queries_and_refuses_one_query() -> None:
    """A sweep written as a generator, the way a notebook writes one, and a tuple are
    answered as the list is; one Query, or a string, was a TypeError from inside
    ("object of type 'Query' has no len()")."""
    predictor = load_predictor(None)
    nodes = (16, 32)
    as_list = predictor.estimate_many([Query(**BERT, nodes=n) for n in nodes])
    swept = predictor.estimate_many(Query(**BERT, nodes=n) for n in nodes)
    assert [e.predicted_runtime_s for e in swept] == [e.predicted_runtime_s for e in as_list]
    columns = predictor.columns(Query(**BERT, nodes=n) for n in nodes)
    assert list(columns["predicted_runtime_s"]) == [e.predicted_runtime_s for e in as_list]
    one = Query(**BERT, nodes=16)
    for ask in (predictor.estimate_many, predictor.columns):
        with pytest.raises(BadInputError, match=r"^expected queries, as a list of Query, not "
                           r"one Query; pass \[query\], or call estimate\(query\) for one$"):
            ask(one)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=r"^expected queries, as a list of Query "
                       r"\(\[perfpredict\.estimate\.Query\(app='bert', nodes=64\), \.\.\.\]\), "
                       r"not a str$"):
        predictor.estimate_many("bert")  # type: ignore[arg-type]


@pytest.mark.parametrize("part", ["problem_size", "variant"])
def test_a_blank_label_is_refused_by_its_keyword_not_read_as_every_series(part: str) -> None:
    """``Query(variant="")`` selected every series (the empty text is part of each
    label), as no variant would; a notebook's caller is told by the keyword, and a
    batch by the query's index. A label given is read as before."""
    with pytest.raises(BadInputError, match=rf"^{part} is blank; give a .*, or leave "
                       rf"{part} out$"):
        estimate(None, Query(**BERT, nodes=64, **{part: " "}))
    with pytest.raises(BadInputError, match=rf"^the query at index 1 of the 2: {part} is "
                       r"empty; "):
        load_predictor(None).estimate_many([Query(**BERT, nodes=64),
                                            Query(**BERT, nodes=64, **{part: ""})])
    with pytest.raises(BadInputError, match=r"^app is blank; give the application's name$"):
        estimate(None, Query(app="\t", nodes=64))
    assert estimate(None, Query(**BERT, nodes=64, problem_size="v2.0")).predicted_runtime_s > 0


@pytest.mark.parametrize("empty", ["nan", "pd.NA"])
def test_a_text_field_of_a_frames_empty_cell_says_to_leave_it_out(empty: str) -> None:
    """``Query(**row)`` of a frame's row with no system is ``system=nan`` (pandas' NA
    in a text column): "--system must be text, got nan" did not say it was read as a
    missing value, nor how to leave it out."""
    import pandas as pd

    value = float("nan") if empty == "nan" else pd.NA
    with pytest.raises(BadInputError, match=r"^system must be text, got (nan|<NA>), a "
                       r"missing value \(a frame's empty cell\): give None to leave it "
                       r"out, as Query\(\*\*row\.dropna\(\)\) does$"):
        estimate(None, Query(app="bert", system=value, nodes=16))
    with pytest.raises(BadInputError, match=r"^system must be text, got 5$"):
        estimate(None, Query(app="bert", system=5, nodes=16))  # type: ignore[arg-type]


@pytest.mark.parametrize("empty", ["nan", "pd.NA"])
def test_a_number_field_of_a_frames_empty_cell_says_so_and_which_query(
        empty: str, sqlite_cli) -> None:  # type: ignore[no-untyped-def]
    """``Query(**row)`` of a frame's row with an empty number cell is NaN (pandas' NA in
    a nullable column): "--ranks-per-node must be a positive number, got nan" said
    neither that it was a missing value, nor what to do, nor which of the queries
    given to ``estimate_many`` held it. The command line's ``--io-bytes nan`` is no
    frame's cell, and is not told of frames."""
    import pandas as pd

    value = float("nan") if empty == "nan" else pd.NA
    fix = (r", a missing value \(a frame's empty cell\): give None to leave it out, as "
           r"Query\(\*\*row\.dropna\(\)\) does$")
    for part in ("ranks_per_node", "io_bytes"):
        with pytest.raises(BadInputError, match=rf"^{part} must be .*, got (nan|<NA>){fix}"):
            estimate(None, Query(**BERT, nodes=16, **{part: value}))
    with pytest.raises(BadInputError, match=r"^nodes must be .*, got (nan|<NA>), a missing "
                       r"value \(a frame's empty cell\): give the node count to predict, or "
                       r"leave out the rows without one "
                       r"\(frame\.dropna\(subset=\['nodes'\]\)\)$"):
        estimate(None, Query(**BERT, nodes=value))
    with pytest.raises(BadInputError, match=r"^ranks_per_node must be a positive number, "
                       r"got 0$"):  # a value given, not missing: nothing added
        estimate(None, Query(**BERT, nodes=16, ranks_per_node=0))
    frame = pd.DataFrame({"nodes": [16, 32, 64], "ranks_per_node": pd.array(
        [8, value, 8], dtype="float64" if empty == "nan" else "Float64")})
    with pytest.raises(BadInputError, match=r"^the query at index 1 of the 3: "
                       rf"ranks_per_node must be .*, got (nan|<NA>){fix}"):
        load_predictor(None).estimate_many(Query(**BERT, nodes=row.nodes,
                                                 ranks_per_node=row.ranks_per_node)
                                           for row in frame.itertuples())
    result = sqlite_cli("estimate", "--app", "bert", "--nodes", "16", "--io-bytes", "nan")
    assert (result.exit_code, result.stderr) == (
        2, "Error: --io-bytes must be finite, got nan\n")


def test_a_frame_of_queries_is_refused_saying_how_to_make_its_rows_queries() -> None:
    """A DataFrame of queries iterates as its column names: refused as "not a str",
    which said nothing of the frame given. The recipe the message gives answers its
    rows, an empty cell (NaN) left out."""
    import pandas as pd

    predictor = load_predictor(None)
    frame = pd.DataFrame({"app": ["bert", "bert"], "nodes": [16, 32],
                          "system": [BERT["system"], None]})
    for ask in (predictor.estimate_many, predictor.columns):
        with pytest.raises(BadInputError, match=r"^expected queries, as a list of Query, "
                           r"not a DataFrame; make one Query per row, its empty cells left "
                           r"out: \[Query\(\*\*row\.dropna\(\)\) for _, row in "
                           r"frame\.iterrows\(\)\]$"):
            ask(frame)  # type: ignore[arg-type]
    answers = predictor.estimate_many([Query(**row.dropna()) for _, row in frame.iterrows()])
    assert [e.nodes for e in answers] == [16, 32]
    assert answers[0].system == BERT["system"]


@pytest.mark.parametrize("runtime_s", [-5.0, 0, float("nan"), "600", None])
def test_exceedance_of_a_runtime_that_is_no_runtime_is_bad_input(runtime_s: object) -> None:
    """A negative runtime or NaN was an IndexError from inside the interval model, and
    text was read as a number where a Query's fields refuse it."""
    predictor = load_predictor(None)
    query = Query(**BERT, nodes=64)
    assert 0 < predictor.exceedance(query, 60.0) < 1
    with pytest.raises(BadInputError, match=r"^runtime_s must be a positive number of "
                       r"seconds, got "):
        predictor.exceedance(query, runtime_s)  # type: ignore[arg-type]


def test_what_the_library_returns_says_what_it_holds() -> None:
    """``help(Estimate)`` and ``help(TrainReport)`` in a notebook showed only the
    generated signature of 28 and 24 fields; each type a library call returns has a
    written docstring, and the estimate's example prints what it says."""
    import doctest

    from perfpredict.advise.plan import Plan, PlanRequest
    from perfpredict.estimate import BatchEstimates, Estimate, LoadedPredictor
    from perfpredict.store.writer import BatchReport
    from perfpredict.train import TrainReport

    for kind in (Estimate, TrainReport, Plan, PlanRequest, BatchReport, BatchEstimates,
                 LoadedPredictor, Query):
        assert kind.__doc__ and not kind.__doc__.startswith(f"{kind.__name__}("), kind
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder(recurse=False).find(
            Estimate, globs={"estimate": estimate, "Query": Query}):
        runner.run(test)
    assert runner.summarize(verbose=False) == (0, 2)

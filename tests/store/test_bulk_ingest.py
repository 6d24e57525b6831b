"""How a file's runs reach the store in bulk: on PostgreSQL by COPY into a staging table
and one INSERT ... ON CONFLICT per chunk (in rounds where a key repeats), with the next
chunk parsed in a thread meanwhile. What each backend stores must be what storing the
rows one after another stores, and a failed file must leave no run and no thread."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, select
from sqlalchemy.engine import Engine

from perfpredict.store import open_store
from perfpredict.store.dialect import insert_rows_ignoring_duplicates
from perfpredict.store.schema import ingest_batches, runs
from perfpredict.store.writer import LATER_INCARNATION, SAME_RUN
from tests.conftest import REPO, _postgres_url

HEADER = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
#: More rows than the pipeline puts in a chunk (5,000), so that a file is several chunks.
N_ROWS = 12_000
COLUMNS = ["natural_key", "batch_id", "app", "system", "job_id", "start_epoch_s",
           "end_epoch_s", "io_bytes", "max_rss_bytes", "runtime_s", "censored"]


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Engine]]:
    """A SQLite store and a PostgreSQL one, each with two ingest batches to insert into."""
    urls = [f"sqlite:///{tmp_path_factory.mktemp('bulk') / 'store.db'}"]
    postgres = _postgres_url()
    urls.append(next(postgres))
    engines = []
    for url in urls:
        open_store(url).dispose()
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(ingest_batches.insert(), [
                {"id": i, "path": f"f{i}", "sha256": str(i), "format": "sacct",
                 "started_epoch_s": 0.0} for i in (1, 2)])
        engines.append(engine)
    yield engines
    for engine in engines:
        engine.dispose()
    next(postgres, None)  # drops the database


_ROW = st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from([1, 2]),
                 st.sampled_from([None, 10.0, 20.0]), st.sampled_from([None, 30.0]),
                 st.sampled_from([None, 5.0]), st.sampled_from([None, 7.0, 8.0]))


def _stored(engine: Engine, chunks: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """The runs ``engine``'s store holds after the chunks are inserted as the writer does
    (later incarnations replace, I/O bytes stay with the same run, a record of the same
    run fills in what it lacks), and how many stored runs were filled; rolled back
    after."""
    n_filled = 0
    with engine.connect() as conn:
        for chunk in chunks:
            n_filled += insert_rows_ignoring_duplicates(
                conn, runs, COLUMNS, chunk, "natural_key", replace_where=LATER_INCARNATION,
                kept=("io_bytes",), kept_where=SAME_RUN, filled_where=SAME_RUN).n_filled
        stored = conn.execute(select(*(runs.c[c] for c in COLUMNS))
                              .order_by(runs.c.natural_key)).all()
        conn.rollback()
    return [*(tuple(row) for row in stored), ("filled", n_filled)]


@pytest.mark.postgres
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=12), cuts=st.sets(st.integers(1, 11)))
def test_postgres_stores_what_one_row_after_another_stores(
        two_stores: list[Engine], rows: list[tuple[Any, ...]], cuts: set[int]) -> None:
    """A job met several times (a requeued job's incarnations, a record of the same run
    with fields the stored one lacks, in one chunk or across chunks, from one file or
    two) ends as the rows inserted one at a time leave it, with as many runs filled, on
    both backends: PostgreSQL refuses an ``ON CONFLICT DO UPDATE`` that meets one key
    twice, and SQLite replays a chunk statement by statement, so both go in rounds."""
    values = [(f"s|{job}", batch, "app", "s", job, start, end, io_bytes, rss, float(i), False)
              for i, (job, batch, start, end, io_bytes, rss) in enumerate(rows)]
    bounds = [0, *sorted(c for c in cuts if c < len(values)), len(values)]
    chunks = [values[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    sqlite, postgres = two_stores
    one_at_a_time = _stored(sqlite, [[row] for row in values])
    assert _stored(sqlite, chunks) == one_at_a_time
    assert _stored(postgres, chunks) == one_at_a_time


def _parse_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "perfpredict-parse"]


def _rows(n_rows: int, bad_line: int | None = None) -> str:
    lines = [HEADER] + [f"app{i % 7},sys,s{i % 3},{1 + i % 8},8,1,{10 + i % 13}.5\n"
                        for i in range(n_rows)]
    if bad_line is not None:
        lines[bad_line - 1] = "app,sys,s,two,8,1,10.5\n"
    return "".join(lines)


def _n_runs(cli: Any) -> int:
    return int(json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"])


def test_a_stream_damaged_after_chunks_were_stored_stores_nothing(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """The parser fails after the writer has stored two chunks (on PostgreSQL, in the
    thread that parses ahead): one line with the file and line, none of the file's
    runs kept, the parser's thread gone."""
    path = tmp_path / "runs.csv.gz"
    whole = gzip.compress(_rows(N_ROWS).encode(), compresslevel=1)
    path.write_bytes(whole[:len(whole) * 9 // 10])
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:"), line
    assert "the compressed stream is damaged" in line
    assert int(line.split(":")[2]) > 10_000  # past the first two chunks
    assert _n_runs(cli) == 0
    assert not _parse_threads()


def test_a_bad_line_after_chunks_were_stored_stores_nothing(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """The writer refuses a line of the third chunk while the parser has read on: the
    file is refused at that line, the two chunks stored before it are not kept, and the
    parser, waiting to hand over its next chunk, is stopped."""
    path = tmp_path / "runs.csv"
    path.write_text(_rows(3 * N_ROWS, bad_line=N_ROWS + 2))
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:{N_ROWS + 2}: "), line
    assert _n_runs(cli) == 0
    assert not _parse_threads()
    assert cli("ingest", "csv", str(path), "--on-error", "skip").exit_code == 0
    assert _n_runs(cli) == 3 * N_ROWS - 1


def test_a_file_s_rejects_are_stored_together_in_their_order(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A real table (MLPerf Training's results, three chunks) with every third row's node
    count damaged, read with --on-error skip: each reject is stored with its line and
    the line as written, in the file's order. A statement each made 200,000 bad lines take
    15-20 s on SQLite and 37-39 s on PostgreSQL; SQLite now takes one a chunk (PostgreSQL
    copies them, out of SQLAlchemy's sight)."""
    import csv
    import io

    from sqlalchemy import event

    from perfpredict.ingest import IngestOptions, ingest_file
    from perfpredict.store.schema import rejects

    text = gzip.decompress((REPO / "datasets" / "mlperf_training" / "runs.csv.gz")
                           .read_bytes()).decode()
    rows = list(csv.reader(io.StringIO(text)))
    nodes = rows[0].index("nodes")
    damaged = set(range(2, len(rows) + 1, 3))  # 1-based lines, the header is line 1
    for line_no in damaged:
        rows[line_no - 1][nodes] = f"n{line_no}"
    path = tmp_path / "runs.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))

    report = ingest_file(store, "csv", path, IngestOptions(on_error="skip"))
    assert report.n_rejected == len(damaged) > 4_000
    with store.engine.connect() as conn:
        stored = conn.execute(select(rejects.c.line_no, rejects.c.reason, rejects.c.raw)
                              .order_by(rejects.c.id)).all()
    lines = path.read_text().splitlines()
    assert [(row.line_no, row.raw) for row in stored] == [  # the line as written
        (line_no, lines[line_no - 1]) for line_no in sorted(damaged)]
    assert stored[-1].reason == f"column 'nodes' must be a number, got 'n{max(damaged)}'"
    if store.engine.dialect.name == "sqlite":
        assert sum("INTO rejects" in s for s in statements) == -(-(len(rows) - 1) // 5_000)

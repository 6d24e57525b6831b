"""``estimate --input`` answered a chunk of queries at a time (``estimate_batches``): 1M
queries answered at once peaked at 1.3 GiB. The rows must not depend on the chunk size,
and a bad row must still be named by its line, wherever its chunk is."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.estimate_benchmark import write_queries
from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.estimate import estimate_batch, estimate_batches


def _answered(path: Path, chunk_queries: int) -> tuple[list[str], list[tuple[object, ...]],
                                                       list[dict[str, object]]]:
    """The columns, rows and records of the batch of ``path``, in chunks of
    ``chunk_queries``."""
    streamed = estimate_batches(None, path, 0.8, chunk_queries)
    chunks = list(streamed.chunks)
    return (streamed.columns, [row for chunk in chunks for row in chunk.rows],
            [record for chunk in chunks for record in chunk.records()])


def test_chunks_of_any_size_answer_as_one_batch(tmp_path: Path) -> None:
    """Queries over every series of the bundled predictor, with I/O volumes (the roofline's
    notes), answered in chunks of 1, 7 and 64 queries and all at once: the same rows,
    records and notes, in the file's order."""
    queries = tmp_path / "queries.csv"
    write_queries(queries, 150, seed=3, io_bytes=True)
    whole = estimate_batch(None, queries, 0.8)
    assert len(whole.rows) == 150
    for chunk_queries in (1, 7, 64, 10**6):
        columns, rows, records = _answered(queries, chunk_queries)
        assert columns == whole.columns
        assert rows == whole.rows
        assert records == whole.records()


def test_a_bad_row_in_a_later_chunk_is_named_by_its_line(tmp_path: Path) -> None:
    """Line numbers count the lines of the file, blank ones too, across chunks."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,ranks_per_node\nresnet,64,\nresnet,8,\n\n"
                       "bert,4,\nresnet,16,-4\nbert,4,\n")
    for chunk_queries in (1, 2, 3, 100):
        streamed = estimate_batches(None, queries, chunk_queries=chunk_queries)
        with pytest.raises(BadInputError, match=rf"^{queries}:6: column 'ranks_per_node' "
                           "must be a positive number, got -4$"):
            list(streamed.rows())
    queries.write_text("app,nodes\nresnet,64\nresnet,8\nbert,4\nno-such-app,8\n")
    streamed = estimate_batches(None, queries, chunk_queries=3)
    assert len(next(streamed.chunks).rows) == 3  # the chunk before it is answered
    with pytest.raises(NotFoundError, match=rf"^{queries}:5: no trained series for "
                       "application 'no-such-app'"):
        next(streamed.chunks)


def test_within_a_chunk_a_row_the_reader_refuses_is_named_first(tmp_path: Path) -> None:
    """As the whole file was: a node count that is no number, after a query the predictor
    refuses in the same chunk, is the one named."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes\nno-such-app,8\nresnet,8\nresnet,many\n")
    with pytest.raises(BadInputError, match=rf"^{queries}:4: column 'nodes'"):
        list(estimate_batches(None, queries, chunk_queries=3).rows())


def test_a_file_without_rows_is_one_empty_chunk_checked_as_a_batch(tmp_path: Path) -> None:
    """The header alone: no rows, the columns all the same, and a confidence out of range
    refused as a batch of rows would refuse it."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,note\n")
    streamed = estimate_batches(None, queries, chunk_queries=1)
    assert streamed.columns[:3] == ["app", "nodes", "note"]
    assert [chunk.rows for chunk in streamed.chunks] == [[]]
    with pytest.raises(BadInputError, match="confidence"):
        list(estimate_batches(None, queries, confidence=1.5).rows())
    with pytest.raises(BadInputError, match="chunk_queries must be 1 or more, got 0"):
        estimate_batches(None, queries, chunk_queries=0)

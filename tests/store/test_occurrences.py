"""The occurrence of each benchmark row's content in its file is part of the row's key,
so counting it in bounded memory must give the very counts a Counter of every digest
gave, across the writer's batches and the sorted arrays the digests move to."""

from __future__ import annotations

import hashlib
import sqlite3
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.store import occurrences
from perfpredict.store.occurrences import Occurrences

#: Digests that differ only in their last bytes, zero ones among them: numpy's fixed-width
#: bytes must not take b"...\x00" for b"..." nor merge them.
DIGESTS = st.sampled_from([bytes(19) + bytes([b]) for b in (0, 1, 255)]
                          + [b"\xff" * 20, bytes(20), b"\x00" * 19 + b"\x01"]
                          + [hashlib.sha1(str(i).encode()).digest() for i in range(6)]
                          ).map(bytes.hex)


@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.lists(DIGESTS, max_size=8), max_size=12))
def test_counts_are_a_counter_s_across_batches_and_flushes(batches: list[list[str]]) -> None:
    seen, expected = Occurrences(), Counter[str]()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(occurrences, "RECENT_DIGESTS", 2)  # arrays merged every few rows
        for batch in batches:
            want = []
            for digest in batch:
                expected[digest] += 1
                want.append(expected[digest])
            assert seen.count(batch) == want


def test_a_distinct_row_costs_a_few_dozen_bytes_not_a_counter_entry() -> None:
    """A Counter of hex digests held about 157 bytes a distinct row: 0.5 GiB of a 3M-row
    CSV ingest's peak (docs/performance.md, Memory at scale)."""
    n_rows, per_batch = 200_000, 5_000

    def digests(start: int, stop: int) -> list[str]:  # made afresh, as the writer's are
        return [hashlib.sha1(str(i).encode()).hexdigest() for i in range(start, stop)]

    tracemalloc.start()
    try:
        seen = Occurrences()
        for start in range(0, n_rows, per_batch):
            assert seen.count(digests(start, start + per_batch)) == [1] * per_batch
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / n_rows < 45, held / n_rows
    assert seen.count(digests(0, 2) + digests(n_rows - 1, n_rows)) == [2, 2, 2]


def test_repeated_rows_far_apart_in_a_file_are_each_stored_and_the_file_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeats met after their first copy moved to the sorted arrays are repeats still:
    stored with their own keys (#2, #3), and a second ingest stores nothing."""
    monkeypatch.setattr(occurrences, "RECENT_DIGESTS", 16)
    header = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    rows = [f"lulesh,frontier,s{i},8,8,7,{100 + i}.5\n" for i in range(200)]
    results = tmp_path / "results.csv"
    results.write_text(header + "".join(rows + rows[:50] + rows[:10]))
    from perfpredict.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    report = ingest_file(store, "csv", results, IngestOptions())
    assert (report.n_records, report.n_stored, report.n_duplicates) == (260, 260, 0)
    again = ingest_file(store, "csv", results, IngestOptions(reread=True))
    assert (again.n_records, again.n_stored, again.n_duplicates) == (260, 0, 260)
    with sqlite3.connect(tmp_path / "store.db") as con:
        occurrence = Counter(key.rpartition("#")[2] for (key,) in
                             con.execute("SELECT natural_key FROM runs"))
    assert occurrence == {"1": 200, "2": 50, "3": 10}

"""The content key of benchmark rows must stay what stored runs carry.

Runs without an identity of their own are keyed by SHA-1 of ``repr`` of the list of
their field values; ``content_digests`` computes it column-wise with a ``%r`` template,
which must give the same digest for every kind of value, or a re-ingest into an
existing store would store the same runs twice.
"""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest.pipeline import _HASHED_FIELDS, content_digests
from perfpredict.ingest.records import RunBatch

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.text(), st.text(alphabet="%'\"\\\n\x00é\ud800"),
    st.tuples(st.integers(), st.text()),
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.floats(), st.text(),
                                                  st.lists(st.text(), max_size=3))),
)


def reference_digest(values: list[object]) -> str:
    """The definition the stored keys were made with."""
    return hashlib.sha1(repr(values).encode("utf-8", "replace")).hexdigest()


@settings(max_examples=200, deadline=None)
@given(present=st.sets(st.sampled_from(_HASHED_FIELDS)),
       rows=st.lists(st.fixed_dictionaries({name: VALUES for name in _HASHED_FIELDS}),
                     min_size=1, max_size=5),
       chosen=st.data())
def test_column_digests_equal_the_repr_of_each_row(
        present: set[str], rows: list[dict[str, object]], chosen: st.DataObject) -> None:
    batch = RunBatch({name: [row[name] for row in rows] for name in present}
                     | {"line_no": list(range(len(rows)))})
    subset = sorted(chosen.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1)))
    expected = [reference_digest([row[name] if name in present else None
                                  for name in _HASHED_FIELDS]) for row in rows]
    assert content_digests(batch, list(range(len(rows)))) == expected
    assert content_digests(batch, subset) == [expected[i] for i in subset]


def test_a_variant_joins_the_digest_only_where_given() -> None:
    """Rows stored before variants existed keep their keys; rows told apart only by their
    variant get keys of their own, so a second file with another build is not a duplicate."""
    batch = RunBatch({"app": ["vasp"] * 3, "runtime_s": [5.0] * 3,
                      "variant": [None, "NCORE=4", "NCORE=8"], "line_no": [1, 2, 3]})
    values = [{"app": "vasp", "runtime_s": 5.0}.get(name) for name in _HASHED_FIELDS]
    assert content_digests(batch, [0, 1, 2]) == [
        reference_digest(values), reference_digest([*values, "NCORE=4"]),
        reference_digest([*values, "NCORE=8"])]
    assert content_digests(batch, [2]) == [reference_digest([*values, "NCORE=8"])]

"""The occurrence of each benchmark row's content within its file, in bounded memory.

A row without a job id is keyed by its content digest, its file's checksum and the
how-manieth time that content occurs in the file
(:func:`perfpredict.store.writer._content_key`), so the writer must know, for every row,
how often its digest came before. A ``Counter`` of the hex digests did that at about
157 bytes a row, the largest part of a CSV ingest's peak (259 MiB for 1M rows, 572 MiB
for 3M; docs/performance.md, Memory at scale). Here each distinct digest costs its 20
bytes in sorted numpy arrays; only the digests met more than once, which a results file
seldom holds, are counted in a dict.
"""

from __future__ import annotations

import numpy as np

#: Digests met once kept in a set before they join the sorted arrays: lookups of a few
#: rows at a time (a file whose bad lines split its records into small batches) stay
#: in Python, and the arrays are merged at most once per that many rows.
RECENT_DIGESTS = 1 << 14
_DIGEST = np.dtype("S20")  # SHA-1, 20 bytes: every value has the full width, no padding


class Occurrences:
    """How many times each SHA-1 digest has been met so far, counting the one asked of.

    >>> seen = Occurrences()
    >>> seen.count(["aa" * 20, "bb" * 20, "aa" * 20])
    [1, 1, 2]
    >>> seen.count(["bb" * 20])
    [2]
    """

    def __init__(self) -> None:
        #: Digests met once, in sorted, disjoint arrays, each larger than the next (merged
        #: as a binary counter carries), so a lookup searches few of them.
        self._levels: list[np.ndarray] = []
        self._recent: set[bytes] = set()
        #: Digests met more than once, by how many times.
        self._repeated: dict[bytes, int] = {}

    def count(self, hex_digests: list[str]) -> list[int]:
        """The occurrence of each of ``hex_digests`` (40 hex digits each), in order: 1 the
        first time a digest is met, by this call or an earlier one, 2 the second..."""
        digests = [bytes.fromhex(d) for d in hex_digests]
        before = self._in_levels(digests)
        counts = []
        for digest, in_levels in zip(digests, before, strict=True):
            n = self._repeated.get(digest)
            if n is not None:
                n += 1
            elif in_levels or digest in self._recent:
                n = 2
            else:
                self._recent.add(digest)
                counts.append(1)
                continue
            self._repeated[digest] = n
            counts.append(n)
        if len(self._recent) >= RECENT_DIGESTS:
            self._flush()
        return counts

    def _in_levels(self, digests: list[bytes]) -> list[bool]:
        if not self._levels:
            return [False] * len(digests)
        wanted = np.array(digests, dtype=_DIGEST)
        order = np.argsort(wanted)  # searched in order: 4x faster than as they come
        wanted = wanted[order]
        found = np.zeros(len(wanted), dtype=bool)
        for level in self._levels:
            at = np.minimum(np.searchsorted(level, wanted), len(level) - 1)
            found |= level[at] == wanted
        in_order = np.empty_like(found)
        in_order[order] = found
        return in_order.tolist()

    def _flush(self) -> None:
        """The recent digests into the sorted arrays, merging each array no larger than
        what joins it."""
        merged = np.sort(np.array(list(self._recent), dtype=_DIGEST))
        self._recent.clear()
        while self._levels and len(self._levels[-1]) <= len(merged):
            # two sorted runs, which a stable sort (timsort) merges in one pass
            merged = np.sort(np.concatenate([self._levels.pop(), merged]), kind="stable")
        self._levels.append(merged)

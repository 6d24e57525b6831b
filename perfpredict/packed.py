"""Numeric arrays inside JSON artifacts, packed: an array's bytes as base64 text.

``json.loads`` spends about 0.2 us on every number of a list, so the predictor's
conformal quantiles (18k floats) and its trees' node arrays took an estimate about
10 ms to read as lists. Packed, they read in well under a millisecond, and bit for bit
on any machine: the dtype, byte order included, is stored beside the bytes.

Parts an artifact holds one of per application are read when asked for
(:class:`ReadByName`): an estimate answers for one application.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

import numpy as np


def pack(values: Any, dtype: str) -> dict[str, str]:
    """``values`` as ``{"dtype": dtype, "base64": ...}``; ``dtype`` names the byte order
    (``"<f8"``, ``"<i4"``, ``"|b1"``)."""
    data = np.ascontiguousarray(values, dtype=np.dtype(dtype)).tobytes()
    return {"dtype": dtype, "base64": base64.b64encode(data).decode("ascii")}


def unpack(packed: dict[str, str], dtype: str) -> np.ndarray:
    """The array :func:`pack` wrote with ``dtype`` (read-only); ValueError for another
    dtype or damaged text."""
    if packed["dtype"] != dtype:
        raise ValueError(f"a packed array of {packed['dtype']}, expected {dtype}")
    return np.frombuffer(base64.b64decode(packed["base64"], validate=True),
                         dtype=np.dtype(dtype))


Value = TypeVar("Value")


class ReadByName(Mapping[str, Value], Generic[Value]):
    """Parts of an artifact by name (an application's), each read from its stored form
    with ``read`` the first time it is asked for.

    An estimate answers for one application, while an artifact holds some parts for each:
    the bundled predictor a correction for seven applications (1.0 of its 1.8 MB; reading
    all took 2.2 ms of every estimate), a center's a noise floor for each application with
    repeated runs (400 in ``bench/train_benchmark.py``'s store: 6 ms to unpack them all)."""

    def __init__(self, stored: Mapping[str, Any], read: Callable[[Any], Value]) -> None:
        self._stored = dict(stored)
        self._read = read
        self._values: dict[str, Value] = {}

    def __getitem__(self, name: str) -> Value:
        if name not in self._values:
            self._values[name] = self._read(self._stored[name])
        return self._values[name]

    def __contains__(self, name: object) -> bool:  # without reading it, as Mapping's would
        return name in self._stored

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)

"""Arrays packed into artifacts (:mod:`perfpredict.packed`): read back bit for bit, and
parts held per application read only when an estimate asks for that application."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from perfpredict.packed import ReadByName, pack, unpack
from perfpredict.uncertainty.noise import NoiseFloor


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=50))
def test_a_packed_array_reads_back_bit_for_bit(values: list[float]) -> None:
    packed = json.loads(json.dumps(pack(values, "<f8")))
    assert unpack(packed, "<f8").tobytes() == np.asarray(values, dtype="<f8").tobytes()


def test_parts_by_name_are_read_once_each_and_only_when_asked_for() -> None:
    read: list[str] = []

    def reader(stored: dict[str, Any]) -> str:
        read.append(stored["name"])
        return stored["name"].upper()

    parts = ReadByName({"bert": {"name": "bert"}, "vasp": {"name": "vasp"}}, reader)
    assert sorted(parts) == ["bert", "vasp"] and len(parts) == 2 and read == []
    assert parts["bert"] == parts.get("bert") == "BERT"
    assert parts.get("cp2k") is None and "cp2k" not in parts and "vasp" in parts
    assert read == ["bert"]  # vasp's never read, bert's once


def test_a_noise_floor_read_back_unpacks_only_the_application_asked_for() -> None:
    """A center's predictor holds a floor for each application with repeats (400 in
    ``bench/train_benchmark.py``'s store); an estimate reads one of them."""
    rng = np.random.default_rng(0)
    floor = NoiseFloor(np.sort(rng.random(5)), 30,
                       {f"app{i}": np.sort(rng.random(5)) for i in range(400)},
                       np.linspace(0.0, 1.0, 5))
    again = NoiseFloor.from_dict(json.loads(json.dumps(floor.to_dict())))
    assert isinstance(again.by_app, ReadByName) and not again.by_app._values
    assert again.half_width_log(0.8, "app7") == floor.half_width_log(0.8, "app7")
    assert again.half_width_log(0.8, "new") == floor.half_width_log(0.8)
    assert list(again.by_app._values) == ["app7"]
    assert again.to_dict() == floor.to_dict()  # and writes back what it read

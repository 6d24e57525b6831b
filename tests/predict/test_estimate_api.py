"""``perfpredict.estimate`` as a notebook calls it: the store named by its URL, queries
checked as the CLI checks them, each mistake one of the package's own errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.estimate import Query, estimate, load_predictor
from perfpredict.report.tables import format_value, significant

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


def test_a_store_object_instead_of_its_url_is_one_clear_error() -> None:
    with pytest.raises(BadInputError, match="the store is given by its URL"):
        estimate(object(), Query(**BERT, nodes=64))  # type: ignore[arg-type]


@pytest.mark.parametrize(("nodes", "message"), [
    (1.5, "nodes must be a whole number, got 1.5"),
    ("64", "nodes must be a number, got '64'"),
    (True, "nodes must be a number, got True"),
    (0, "nodes must be a positive number, got 0"),
])
def test_node_counts_are_checked_as_the_cli_checks_them(nodes: object, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        estimate(None, Query(**BERT, nodes=nodes))  # type: ignore[arg-type]


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

"""What train's report advises, from what the store held."""

from __future__ import annotations

from dataclasses import replace

from perfpredict.train import TrainReport


def test_weak_scaling_learned_beside_few_strong_applications_alone_points_to_borrowing() -> None:
    """Weak scaling learned beside fewer than 8 strong-scaling applications, from the
    store alone, erred about three times as much as borrowing from the bundled data
    sets: the report says so only where weak-scaling series were learned from, the
    store held fewer than 8 strong-scaling applications and the bundled data sets were
    neither trained on nor borrowed from (borrowing, weak scaling learns its correction
    with them, beside strong scaling or alone)."""
    alone = TrainReport(n_runs=249, n_series_by_kind={"weak": 26, "strong": 0},
                        min_series_for_correction=8, n_strong_applications=0)
    assert alone.could_borrow_for_weak_scaling()
    beside_castro = replace(alone, n_series_by_kind={"weak": 26, "strong": 33},
                            n_strong_applications=2)
    assert beside_castro.could_borrow_for_weak_scaling()
    assert not replace(alone, bundled_datasets=["mlperf_training"]).could_borrow_for_weak_scaling()
    assert not replace(beside_castro, n_strong_applications=8).could_borrow_for_weak_scaling()
    assert not replace(beside_castro, n_series_by_kind={"strong": 33}).could_borrow_for_weak_scaling()
    borrowing = ["mlperf_training", "castro_scaling"]
    assert not replace(alone, borrowed_datasets=borrowing).could_borrow_for_weak_scaling()
    assert not replace(beside_castro, borrowed_datasets=borrowing).could_borrow_for_weak_scaling()


def test_a_store_of_many_codes_measured_once_or_twice_points_to_the_bundled_data() -> None:
    """Eight or more strong-scaling applications learn alone, but with two series of
    each or fewer on average an application has no own half of the correction and few
    peers; training with the bundled data sets did better in backtests of such stores:
    the report says so only where nothing bundled was trained on or borrowed."""
    center = TrainReport(n_runs=400, n_series_by_kind={"strong": 20, "weak": 2},
                         min_series_for_correction=8, n_strong_applications=11)
    assert center.could_learn_with_bundled()
    assert replace(center, n_series_by_kind={"strong": 22}).could_learn_with_bundled()
    assert not replace(center, n_series_by_kind={"strong": 23}).could_learn_with_bundled()
    assert not replace(center, bundled_datasets=["castro_scaling"]).could_learn_with_bundled()
    # fewer than 8 applications borrow already (could_borrow_applications speaks for them)
    few = replace(center, n_strong_applications=7, n_series_by_kind={"strong": 10})
    assert not few.could_learn_with_bundled()
    assert not replace(few, borrowed_datasets=["castro_scaling"]).could_learn_with_bundled()


def test_a_data_set_the_store_holds_from_an_export_is_not_named_as_borrowed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A store moved by 'runs export' and 'ingest csv' holds the bundled runs from its
    export, not from the data set's file: none of their series is borrowed again, and
    train said it borrowed that data set."""
    from perfpredict import datasets  # type: ignore[attr-defined]
    from perfpredict.store import open_store
    from perfpredict.train import _bundled_series

    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        stored = datasets.series(["relearn"])
        found, names = _bundled_series(store, stored)
    finally:
        store.dispose()
    assert "relearn" not in names and "castro_scaling" in names
    assert not {s.key for s in found} & {s.key for s in stored}


def test_the_first_line_says_what_was_trained() -> None:
    """A store of scheduler accounting alone trains the walltime advisor only: its first
    line said "Trained on 28476 runs." as if a runtime predictor had learned from them."""
    walltime_only = TrainReport(n_runs=28476, walltime_jobs=28476,
                                untrained_because="no series has 3+ scales")
    assert walltime_only.headline() == ("Read 28476 runs: trained the walltime advisor only, "
                                        "no runtime predictor.")
    trained = replace(walltime_only, artifact_sha256="0" * 64, untrained_because=None)
    assert trained.headline() == "Trained on 28476 runs."

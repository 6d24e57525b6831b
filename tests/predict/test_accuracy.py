"""Issue 13's acceptance of the hybrid predictor on real strong-scaling data (slow; CI runs
it): under the store-cut protocol, in the extrapolate and few-shot splits, on every data set
with at least five series of at least five distinct scales (MLPerf Training, RELeARN, VASP,
CP2K, Castro, PencilFFTs; LULESH has one series, is reported and counts in the pooled
figures), the hybrid's MAPE and median APE are below the best single baseline's (each
figure against its own best: Amdahl, Amdahl + log, Gustafson where weak, power law,
Extra-P, black-box XGBoost), its 90% intervals cover 85-95% of the test runs, and pooled
over the data sets its MAPE is at least 15% below the best baseline's.

The data sets are read from ../shared (VASP and CP2K are GPL and only ever read from
there), so every test skips with its reason where ../shared is absent, and fails instead
under ``PERFPREDICT_REQUIRE_SHARED=1`` (CI).

Margins (issue 14, item 8): each backtest pools ``REPEATS`` seeds (the hybrid's, the black
box's), and each figure is allowed its own seed-to-seed noise, so that a reseed (or another
machine's floating point) cannot flip a test. The noise was measured with
``python -m bench.accuracy_benchmark --seed-spread 5 --repeats 3``: five backtests of
three pooled seeds each, disjoint seeds 0-14, on the hybrid of this commit. Each margin is
three standard deviations of that figure over the five backtests, rounded up; they are per
split and data set because a data set of 7 series is noisier than one of 165, and one
split's coverage than the other's (RELeARN's: 0.091 in extrapolation, 0.029 in few-shot). Measured standard deviations (extrapolation / few-shot):

    data set              MAPE gap     median APE gap   coverage
    mlperf_training       0.42 / 0.25  1.1 / 0.94       0.013 / 0.0080
    relearn               1.9 / 0.44   1.9 / 0.18       0.091 / 0.029
    vasp_archer           0.091 / 0.069  0.29 / 0.20    0.011 / 0.032
    cp2k_readme           0.75 / 0.36  0.73 / 0.91      0 / 0.061
    castro_scaling        0.17 / 0.071  0.36 / 0.32     0.0084 / 0.0046
    pencilffts_jeanzay    0.39 / 0.25  0.67 / 0.61      0.0085 / 0.029
    all                   0.27 / 0.098  0.59 / 0.28     -

A margin is a tolerance for noise, not a target: the acceptance is the threshold. A cell
whose five-backtest mean misses the threshold is an expected failure (xfail, not strict),
named below with its measured mean; every other cell is asserted. When the predictor
changes, measure again with the same command and update the margins and the lists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bench.accuracy_benchmark import JUDGED, REPORTED, build_store, discover
from perfpredict.evaluate import evaluate
from perfpredict.evaluate.metrics import COVERAGE_RANGE, POOLED_MAPE_RATIO, acceptance
from tests.conftest import shared_path

pytestmark = pytest.mark.slow
SPLITS = ("extrapolate", "fewshot")
REPEATS = 3
# Per split and data set: three standard deviations of the seed-to-seed spread of a
# 3-seed backtest (see the module docstring): percentage points of MAPE and of median APE
# (the hybrid's minus the best baseline's), and of coverage.
MAPE_MARGIN_PCT = {
    "extrapolate": {
        "mlperf_training": 1.3,
        "relearn": 5.6,
        "vasp_archer": 0.3,
        "cp2k_readme": 2.3,
        "castro_scaling": 0.5,
        "pencilffts_jeanzay": 1.2,
        "all": 0.8,
    },
    "fewshot": {
        "mlperf_training": 0.8,
        "relearn": 1.4,
        "vasp_archer": 0.3,
        "cp2k_readme": 1.1,
        "castro_scaling": 0.3,
        "pencilffts_jeanzay": 0.8,
        "all": 0.3,
    },
}
MEDIAN_APE_MARGIN_PCT = {
    "extrapolate": {
        "mlperf_training": 3.4,
        "relearn": 5.8,
        "vasp_archer": 0.9,
        "cp2k_readme": 2.2,
        "castro_scaling": 1.1,
        "pencilffts_jeanzay": 2.1,
    },
    "fewshot": {
        "mlperf_training": 2.9,
        "relearn": 0.6,
        "vasp_archer": 0.7,
        "cp2k_readme": 2.8,
        "castro_scaling": 1.0,
        "pencilffts_jeanzay": 1.9,
    },
}
COVERAGE_MARGIN = {
    "extrapolate": {
        "mlperf_training": 0.04,
        "relearn": 0.28,
        "vasp_archer": 0.04,
        "cp2k_readme": 0.01,  # sd 0: every run inside in all five backtests
        "castro_scaling": 0.03,
        "pencilffts_jeanzay": 0.03,
    },
    "fewshot": {
        "mlperf_training": 0.03,
        "relearn": 0.09,
        "vasp_archer": 0.1,
        "cp2k_readme": 0.19,
        "castro_scaling": 0.02,
        "pencilffts_jeanzay": 0.09,
    },
}

Table = list[dict[str, Any]]

# Cells whose five-backtest mean misses issue 13's acceptance with the hybrid of this commit
# (the means: hybrid minus best baseline, MAPE / median APE points; or coverage). Expected
# failures until the predictor passes them; they are not a statement of what is acceptable.
_OPEN = "misses issue 13's acceptance under store-cut today (docs/accuracy.md)"
LOSES_TO_A_BASELINE = {
    ("extrapolate", "mlperf_training"),  # median APE +2.16
    ("fewshot", "vasp_archer"),          # median APE +0.6
}
COVERAGE_OUTSIDE = {
    ("extrapolate", "mlperf_training"),  # 0.955
    ("extrapolate", "cp2k_readme"),      # 1.000
    ("extrapolate", "castro_scaling"),   # 0.988
    ("fewshot", "mlperf_training"),      # 0.963
    ("fewshot", "castro_scaling"),       # 0.978
}
POOLED_FAILS: set[str] = set()


def _cases(expected_failures: set[tuple[str, str]]) -> list[Any]:
    return [pytest.param(split, name, id=f"{split}-{name}",
                         marks=[pytest.mark.xfail(strict=False, reason=_OPEN)]
                         if (split, name) in expected_failures else [])
            for split in SPLITS for name in JUDGED]


@pytest.fixture(scope="module")
def backtest_table(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Table]:
    """The store-cut backtest of a split on every judged data set at a confidence (issue
    13's 90% unless told), computed once per split and confidence."""
    shared_datasets = shared_path("datasets")
    store = build_store(f"sqlite:///{tmp_path_factory.mktemp('accuracy') / 'store.db'}",
                        shared_datasets=shared_datasets)
    tables: dict[tuple[str, float], Table] = {}

    def table(split: str, confidence: float = 0.9) -> Table:
        if (split, confidence) not in tables:
            tables[split, confidence] = evaluate(store, split, protocol="store-cut",
                                                 repeats=REPEATS, confidence=confidence)
        return tables[split, confidence]

    yield table
    store.dispose()


@pytest.mark.parametrize(("split", "data_set"), _cases(LOSES_TO_A_BASELINE))
def test_hybrid_beats_the_best_single_baseline(backtest_table, split: str,  # type: ignore[no-untyped-def]
                                               data_set: str) -> None:
    verdict = acceptance(backtest_table(split), data_set)
    assert (verdict["hybrid_mape_pct"]
            < verdict["best_mape_pct"] + MAPE_MARGIN_PCT[split][data_set]), verdict
    assert (verdict["hybrid_median_ape_pct"]
            < verdict["best_median_ape_pct"] + MEDIAN_APE_MARGIN_PCT[split][data_set]), verdict


@pytest.mark.parametrize(("split", "data_set"), _cases(COVERAGE_OUTSIDE))
def test_90pct_intervals_cover_85_to_95pct(backtest_table, split: str,  # type: ignore[no-untyped-def]
                                           data_set: str) -> None:
    coverage = acceptance(backtest_table(split), data_set)["coverage"]
    low, high = COVERAGE_RANGE
    margin = COVERAGE_MARGIN[split][data_set]
    assert low - margin <= coverage <= high + margin, (data_set, coverage)


@pytest.mark.parametrize("split", [
    pytest.param(split, marks=[pytest.mark.xfail(strict=False, reason=_OPEN)]
                 if split in POOLED_FAILS else []) for split in SPLITS])
def test_pooled_mape_is_15pct_below_the_best_baseline(backtest_table, split: str) -> None:  # type: ignore[no-untyped-def]
    verdict = acceptance(backtest_table(split), "all")
    assert (verdict["hybrid_mape_pct"]
            <= POOLED_MAPE_RATIO * verdict["best_mape_pct"] + MAPE_MARGIN_PCT[split]["all"]), verdict


#: What docs/accuracy.md tells a user who sets a walltime beyond every measured node count
#: ("The intervals at other confidences, and as walltime kill risks"): ask ``advise`` for
#: half the kill risk meant. The walltime at a kill risk of 2.5% is the upper bound of the
#: 95% interval; the share of test runs above it, pooled, was 2.5% (s.d. 1.0, at most
#: 4.2%) in extrapolation and 1.7% (0.1) in few-shot over five backtests of three seeds
#: (``perfpredict evaluate --split S --repeats 3 --seed K --confidence 0.95``, K = 0, 3,
#: 6, 9, 12), so the risk meant is 2.5 standard deviations above the worse split's mean.
HALF_KILL_RISK = 0.025


@pytest.mark.parametrize("split", SPLITS)
def test_a_walltime_at_half_the_kill_risk_holds_the_risk_pooled(  # type: ignore[no-untyped-def]
        backtest_table, split: str) -> None:
    hybrid = next(r for r in backtest_table(split, 1 - 2 * HALF_KILL_RISK)
                  if r["group"] == "all" and r["method"] == "hybrid")
    assert hybrid["above_pct"] <= 100 * 2 * HALF_KILL_RISK, hybrid


def test_issue_13s_rule_finds_the_data_sets_measured_here() -> None:
    """The benchmark backtests every data set in datasets/ and ../shared/datasets that
    issue 13's rule judges or reports (``discover``); the margins and expected failures
    above are those of the data sets measured here. A data set added beside them is
    backtested by ``python -m bench.accuracy_benchmark`` at once, and fails this test
    until it is measured here too."""
    found = discover(shared_path("datasets"))
    assert (found.judged, found.reported) == (JUDGED, REPORTED), (
        f"issue 13's rule judges {found.judged} and reports {found.reported}: measure "
        "the new ones (python -m bench.accuracy_benchmark --seed-spread 5 --repeats 3) "
        "and add them, with their margins, to JUDGED or REPORTED")
    # MLPerf HPC's series have too few scales to test; MLPerf Storage holds throughputs
    assert found.left_out["mlperf_hpc"] == "no series of 4 or more scales to test"
    assert found.left_out["mlperf_storage"].startswith(
        "cannot be ingested: the header needs at least the columns app and runtime_s")

"""An estimate explained step by step (:mod:`perfpredict.estimate.explain`): on the bundled
predictor's real series, its members' geometric mean times each step's factor is the
estimate itself, inside the measured range, beyond it, with peers and in weak scaling;
each number is one a reader can check against the runs it names."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from perfpredict.estimate import Query, load_predictor
from perfpredict.estimate.explain import STEP_NAMES, explain
from perfpredict.model.runtime import PEER_WEIGHT
from perfpredict.model.series import Series, SeriesKey
from perfpredict.overhead.features import fit_context

BERT = {"app": "bert", "system": "dgxa100_ngc22.04_pytorch (NVIDIA)"}  # 1-512 nodes
CASTRO = {"app": "Castro-flame_wave", "system": "Frontier", "problem_size": "He 25cm",
          "variant": "net=iso7|integ=VODE|campaign=2026"}  # 48-1024 nodes, ten peers
CASES = {
    "inside": Query(**BERT, nodes=64),  # between 8 and 128
    "measured": Query(**BERT, nodes=512),
    "beyond": Query(**BERT, nodes=2048),
    "peers": Query(**CASTRO, nodes=2048),
    "weak": Query(app="RELeARN", nodes=16, ranks_per_node=48),  # 768 ranks, 32-512
    "two scales": Query(app="cosmoflow", system="coriknl", nodes=4096),  # 512, 1024
    "below": Query(app="cosmoflow", system="coriknl", nodes=64),
}


@pytest.fixture(scope="module")
def predictor():  # type: ignore[no-untyped-def]
    return load_predictor(None)


@pytest.fixture(scope="module")
def explained(predictor):  # type: ignore[no-untyped-def]
    return {name: predictor.estimate(query, explain=True) for name, query in CASES.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_the_steps_multiply_out_to_the_estimate(explained, case: str) -> None:  # type: ignore[no-untyped-def]
    estimate = explained[case]
    x = estimate.explanation
    logs = [math.log(m.runtime_s) for m in x.members]
    assert math.exp(sum(logs) / len(logs)) == pytest.approx(x.base_runtime_s, rel=1e-12)
    assert [step.step for step in x.steps] == list(STEP_NAMES)
    runtime_s = x.base_runtime_s
    for step in x.steps:
        runtime_s *= step.factor
        assert step.runtime_s == pytest.approx(runtime_s, rel=1e-12)
    assert runtime_s == pytest.approx(estimate.predicted_runtime_s, rel=1e-12)
    assert x.predicted_runtime_s == estimate.predicted_runtime_s
    steps = {step.step: step for step in x.steps}
    # the correction step is the overhead coefficient the estimate reports
    assert steps["correction"].factor == pytest.approx(estimate.overhead_coefficient,
                                                       rel=1e-12)
    assert (x.lower_runtime_s, x.upper_runtime_s) == (estimate.lower_runtime_s,
                                                      estimate.upper_runtime_s)
    assert x.predicted_runtime_s * x.lower_factor == pytest.approx(x.lower_runtime_s)
    assert x.predicted_runtime_s * x.upper_factor == pytest.approx(x.upper_runtime_s)
    assert x.scale == estimate.scale


def test_explaining_changes_no_number(predictor) -> None:  # type: ignore[no-untyped-def]
    for query in CASES.values():
        plain = predictor.estimate(query).as_dict()
        explained = predictor.estimate(query, explain=True).as_dict()
        assert "explanation" not in plain  # the JSON of an estimate not explained as before
        del explained["explanation"]
        assert explained == plain


def test_an_explained_estimate_is_refused_as_one_csv_row(predictor, explained) -> None:  # type: ignore[no-untyped-def]
    """One CSV row has no cells for the chain of steps, which was left out unsaid; the
    refusal says so and where the chain is given. Without one, the row is the estimate's
    single values and its notes joined."""
    from perfpredict.errors import BadInputError

    with pytest.raises(BadInputError, match="a chain of steps that one CSV row cannot "
                                            "hold; ask for it in json"):
        explained["beyond"].as_csv_row()
    plain = predictor.estimate(CASES["beyond"])
    row = plain.as_csv_row()
    assert row["notes"] == "; ".join(plain.notes) and plain.notes
    assert "breakdown_s" not in row and row["predicted_runtime_s"] == plain.predicted_runtime_s


def test_inside_the_range_the_base_is_moved_onto_the_runs_and_nothing_else(explained) -> None:  # type: ignore[no-untyped-def]
    for case in ("inside", "measured"):
        x = explained[case].explanation
        steps = {step.step: step for step in x.steps}
        assert [m.law for m in x.members] == ["amdahl", "amdahl_log", "power"]
        assert steps["measured_move"].factor != 1.0
        assert all(steps[name].factor == 1.0 for name in ("correction", "peers",
                                                          "ideal_scaling"))
    steps = {step.step: step for step in explained["measured"].explanation.steps}
    assert steps["measured_move"].runtime_s == pytest.approx(12.507)  # the 512-node median
    assert steps["measured_move"].detail == ("onto the median of the runs measured at 512 "
                                              "nodes (12.51 s)")
    assert "8 and 128 nodes" in explained["inside"].explanation.steps[0].detail


def test_beyond_the_range_the_slope_drift_joins_and_the_correction_applies(explained) -> None:  # type: ignore[no-untyped-def]
    estimate = explained["beyond"]
    x = estimate.explanation
    assert [m.law for m in x.members] == ["amdahl", "amdahl_log", "power", "slope_drift"]
    assert "(-0.515, between 128 and 512 nodes)" in x.members[-1].formula
    steps = {step.step: step for step in x.steps}
    assert steps["correction"].factor != 1.0
    assert steps["correction"].detail.endswith("applied in full")  # two doublings out
    assert steps["peers"].detail.startswith("none: no other series of bert")
    assert steps["ideal_scaling"].detail.startswith("none: the runs time a target")
    assert x.peers == [] and x.peer_speedup is None and x.peer_weight == 0.0


def test_the_peers_are_named_with_the_speed_up_they_measured(predictor, explained) -> None:  # type: ignore[no-untyped-def]
    """Each peer's speed-up is read off its own measured medians (linear in log-log
    between its scales; at its largest where its runs end short of 2,048 nodes), and the
    step weighs their median as said."""
    estimate = explained["peers"]
    x = estimate.explanation
    assert len(x.peers) == estimate.peer_series == 10
    assert x.peer_weight == PEER_WEIGHT  # seven measured 2,048 nodes: some peer weighs in
    curves = {}
    for entry in predictor.entries.of_app("Castro-flame_wave"):
        series, ctx = predictor.series_context(entry)
        curves[series.name] = (np.log(ctx.scales), np.log(ctx.medians_s))
    for peer in x.peers:
        log_scale, log_runtime = curves[peer.series]
        at_1024, at_2048 = np.interp(np.log([1024.0, 2048.0]), log_scale, log_runtime)
        assert peer.speedup == pytest.approx(math.exp(at_1024 - at_2048), rel=1e-12)
        reaches = log_scale[-1] >= math.log(2048.0)
        assert peer.weight == 1.0 if reaches else 0 < peer.weight < 1
    assert sum(peer.weight == 1.0 for peer in x.peers) == 7
    speedups = [peer.speedup for peer in x.peers]
    assert min(speedups) <= x.peer_speedup <= max(speedups)
    steps = {step.step: step for step in x.steps}
    edge_s = math.exp(curves[estimate.series][1][-1])  # its median at 1,024 nodes
    hybrid_s = steps["correction"].runtime_s
    assert steps["peers"].factor == pytest.approx(
        (edge_s / x.peer_speedup / hybrid_s) ** x.peer_weight, rel=1e-12)
    assert "times 0.71, as 2 or more peers weigh in" in x.interval_detail


def test_weak_scaling_is_moved_until_its_correction_takes_over(explained) -> None:  # type: ignore[no-untyped-def]
    estimate = explained["weak"]
    x = estimate.explanation
    assert estimate.scaling == "weak"
    assert [m.law for m in x.members] == ["amdahl", "amdahl_log", "power"]  # no drift
    steps = {step.step: step for step in x.steps}
    assert 1.0 < steps["measured_move"].factor < 1.363  # part of its miss, 0.585 ramped
    assert "to the power one less the correction's ramp, 1 - 0.585" in (
        steps["measured_move"].detail)
    assert "applied as c^0.585" in steps["correction"].detail
    assert steps["peers"].detail == "none: peers take no part in weak scaling"
    assert x.interval_detail.startswith(  # the interval ramped alike
        "0.58 of the way, in log bounds, from the interval at 512 ranks to the one "
        "calibrated 1 doubling beyond it")


def test_a_law_the_series_cannot_determine_is_counted_as_the_one_standing_in(explained) -> None:  # type: ignore[no-untyped-def]
    """CosmoFlow on Cori, measured at two node counts, cannot determine Amdahl + log:
    Amdahl's stands in and counts twice in the mean, which the formula now says (it
    listed two laws, and their geometric mean is not the estimate's base)."""
    estimate = explained["two scales"]
    x = estimate.explanation
    amdahl, stand_in = x.members[:2]
    assert stand_in.law == "amdahl_log" and stand_in.runtime_s == amdahl.runtime_s
    assert "2 measured scales cannot determine Amdahl + log" in stand_in.formula
    assert ("again, in place of Amdahl + log (2 measured scales cannot determine it)"
            in estimate.formula)
    below = explained["below"].explanation.steps[0]
    assert below.detail.startswith("by the base's miss of the runs at the smallest "
                                   "measured scale, 512 nodes")


def test_fixed_work_above_ideal_scaling_says_which_runtime_is_the_ideal(predictor) -> None:  # type: ignore[no-untyped-def]
    """Above the bound the step read "above ideal scaling from the median at 1024 nodes
    (2.557 s)", where 2.557 s is ideal scaling at the node count asked and the median at
    1024 nodes, on the line above, 5.113 s: it is now worked out as where it binds."""
    slow = Series(SeriesKey("slow", "s", "", "", "", ""), "nodes", np.array([1.0, 2.0, 4.0]),
                  np.array([1000.0, 600.0, 400.0]), weak=False)
    ctx = fit_context(slow)
    model = predictor.predictor
    parts = model.point_parts(slow, np.array([16.0]), ctx)
    got = model.predict_columns(slow, np.array([16.0]), 0.9, ctx)
    x = explain(slow, ctx, parts, 0, 16.0, model.apply_correction["strong"], 0.9,
                float(got.lower_s[0]), float(got.upper_s[0]))
    (ideal,) = [step for step in x.steps if step.step == "ideal_scaling"]
    assert ideal.factor == 1.0
    assert ideal.detail == ("none: above ideal scaling from the median at 4 nodes, 400.0 s x "
                            "4 / 16 = 100.0 s, which fixed work does not beat")


def test_fixed_work_raised_to_ideal_scaling_is_a_step_of_its_own(predictor) -> None:  # type: ignore[no-untyped-def]
    """Runs that beat ideal scaling (1,000 s, 400 s, 150 s at 1, 2 and 4 nodes): beyond
    them the estimate is raised to ideal scaling from the median at 4 nodes, and the
    chain says by how much (no bundled series binds there)."""
    fast = Series(SeriesKey("super", "s", "", "", "", ""), "nodes", np.array([1.0, 2.0, 4.0]),
                  np.array([1000.0, 400.0, 150.0]), weak=False)
    ctx = fit_context(fast)
    model = predictor.predictor
    scale = 16.0
    parts = model.point_parts(fast, np.array([scale]), ctx)
    got = model.predict_columns(fast, np.array([scale]), 0.9, ctx)
    x = explain(fast, ctx, parts, 0, scale, model.apply_correction["strong"], 0.9,
                float(got.lower_s[0]), float(got.upper_s[0]))
    steps = {step.step: step for step in x.steps}
    assert steps["ideal_scaling"].factor > 1.0
    assert steps["ideal_scaling"].runtime_s == pytest.approx(150.0 * 4 / 16, rel=1e-12)
    assert steps["ideal_scaling"].detail.startswith("raised to ideal scaling from the "
                                                    "median at 4 nodes")
    assert x.predicted_runtime_s == pytest.approx(float(got.runtime_s[0]), rel=1e-12)
    to_target = dataclasses.replace(fast, fixed_work=False)
    parts = model.point_parts(to_target, np.array([scale]), ctx)
    assert parts.runtime_log[0] == parts.blended_log[0]  # time-to-train is not raised

"""Peer curves (:mod:`perfpredict.model.peers`): beyond a strong-scaling series' measured
range, the speed-up that other series of its application and input measured from its
largest scale to the scale asked for weighs in with the hybrid's own prediction. The
arithmetic on curves made up to show it; the weighing on the bundled predictor and Castro's
real runs on Frontier, whose variants (network, integrator, campaign) of one input reach
different node counts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from perfpredict.estimate import load_predictor
from perfpredict.model.peers import FADE_DOUBLINGS, PeerCurves, PeerSpeedup, _nan_median
from perfpredict.model.runtime import PEER_INTERVAL_MIN_PEERS, PEER_INTERVAL_SCALE, PEER_WEIGHT
from perfpredict.model.series import SeriesKey

APP = "Castro-flame_wave"
INPUT = "flame_wave 3D He 25cm (inputs.He.25cm.static.1000Hz)"
#: Measured on Frontier at 48-1024 nodes; other variants of the input reached 2048.
VARIANT = "net=iso7|integ=RKC|campaign=20260606"
CASTRO = ("--app", APP, "--system", "Frontier", "--problem-size", INPUT, "--variant", VARIANT)


def _key(variant: str, problem_size: str = "in") -> SeriesKey:
    return SeriesKey("app", "sys", problem_size, variant, "", "")


def _curve(variant: str, scales: list[float], speedup_per_doubling: float,
           problem_size: str = "in", unit: str = "nodes", weak: bool = False
           ) -> tuple[SeriesKey, str, bool, list[float], list[float]]:
    runtime = [100.0 / speedup_per_doubling ** np.log2(s) for s in scales]
    return _key(variant, problem_size), unit, weak, scales, runtime


def test_the_peer_speedup_is_the_median_over_the_peers_that_measured_both_scales() -> None:
    curves = PeerCurves.of([
        _curve("asked", [1, 2, 4], 2.0),  # the series asked about: never its own peer
        _curve("a", [1, 2, 4, 8, 16], 1.9),
        _curve("b", [2, 4, 8], 1.5),
        _curve("c", [4, 8, 16, 32], 1.2),
        _curve("d", [8, 16, 32, 64], 1.0),  # starts above 4: measured neither with 4
    ])
    said = curves.log_speedup(_key("asked"), "nodes", 4.0, np.array([8.0, 16.0, 32.0, 64.0]))
    # at 8: a, b and c measured 4 and 8; at 16: a and c; at 32: c alone; at 64: none
    # (b and a ended a doubling or more before 16 and 32: faded out)
    assert said.n_peers.tolist() == [3, 2, 1, 0]
    np.testing.assert_allclose(said.presence, [1, 1, 1, 0])
    np.testing.assert_allclose(said.log_speedup[:3],
                               [-np.log(1.5), -2 * np.log((1.9 * 1.2) ** 0.5), -3 * np.log(1.2)])
    assert np.isnan(said.log_speedup[3])


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(float, hnp.array_shapes(min_dims=2, max_dims=2, max_side=9),
                  elements=st.one_of(st.just(np.nan),
                                     st.floats(-50, 50, allow_nan=False))))
def test_the_median_over_peers_is_numpys_nanmedian(ratios: np.ndarray) -> None:
    some = np.isfinite(ratios).any(axis=0)
    expected = np.full(ratios.shape[1], np.nan)
    expected[some] = np.nanmedian(ratios[:, some], axis=0)
    median, count = _nan_median(ratios)
    np.testing.assert_allclose(median, expected, equal_nan=True)
    np.testing.assert_array_equal(count, np.sum(np.isfinite(ratios), axis=0))


def test_a_peer_is_read_between_its_measured_scales() -> None:
    curves = PeerCurves.of([_curve("a", [1, 4, 16], 2.0)])
    said = curves.log_speedup(_key("asked"), "nodes", 4.0, np.array([8.0]))
    assert said.n_peers.tolist() == [1]
    np.testing.assert_allclose(said.log_speedup, [-np.log(2.0)])  # linear in log-log


def test_a_peer_fades_over_the_doubling_beyond_its_largest_scale() -> None:
    """Beyond the largest scale it measured a peer reads as its runtime there, with a
    weight falling linearly to nought FADE_DOUBLINGS out; one ending where the series
    does says nothing beyond it."""
    curves = PeerCurves.of([_curve("a", [1, 2, 4, 8], 2.0), _curve("ends at 4", [1, 2, 4], 1.5)])
    past = np.array([0.25, 0.5, 1.0, 1.5]) * FADE_DOUBLINGS
    said = curves.log_speedup(_key("asked"), "nodes", 4.0, 8.0 * 2.0 ** past)
    np.testing.assert_allclose(said.presence, [0.75, 0.5, 0.0, 0.0])
    assert said.n_peers.tolist() == [1, 1, 0, 0]
    np.testing.assert_allclose(said.log_speedup[:2], -np.log(2.0))  # its runtime at 8


def _expected_median(values: list[float], weights: list[float], draws: int) -> float:
    """The median over the peers within a reach drawn uniformly, averaged over the
    draws that leave some peer in: what PeerSpeedup says, by brute force."""
    reach = (np.arange(draws) + 0.5) / draws
    w, v = np.array(weights), np.array(values)
    medians = [np.median(v[w > r]) for r in reach if (w > r).any()]
    return float(np.mean(medians))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(-3, 3), st.sampled_from([0.0, 0.125, 0.25, 0.5, 0.75, 1.0])),
                min_size=1, max_size=6).filter(lambda peers: any(w > 0 for _, w in peers)))
def test_the_peers_say_the_expected_median_over_their_reach(peers) -> None:  # type: ignore[no-untyped-def]
    values = np.array([[v if w > 0 else np.nan] for v, w in peers])
    weights = np.array([[w] for _, w in peers])
    said = PeerSpeedup.of(values, weights, tuple(_key(str(i)) for i in range(len(peers))))
    expected = _expected_median([v for v, _ in peers], [w for _, w in peers], draws=800)
    np.testing.assert_allclose(said.log_speedup, [expected], atol=1e-9)
    np.testing.assert_allclose(said.presence, [weights.max()])
    ranked = sorted((w for _, w in peers), reverse=True)
    np.testing.assert_allclose(said.at_least(2), [ranked[1] if len(ranked) > 1 else 0.0])


def test_estimates_do_not_step_where_a_peer_ends() -> None:
    """BERT on the XE8545 nodes (80 GB), measured up to a few nodes: every strong-scaling
    estimate of the bundled predictor goes on smoothly beyond its measured range, peers
    ending within it or not; before the fade, a peer leaving the median stepped 36 series
    by more than 2% between node counts 1/64 doubling apart, up to 18%."""
    predictor = load_predictor(None)
    model = predictor.predictor
    worst = 0.0
    for app in ("bert", "resnet", APP):
        for entry in predictor.entries.of_app(app):
            if entry.weak:
                continue
            series, ctx = predictor.series_context(entry)
            p = ctx.scale_max * 2.0 ** (np.arange(1, 3 * 64 + 1) / 64)
            got = model.predict_columns(series, p, 0.9, ctx, predictor.peers(series))
            alone = model.predict_columns(series, p, 0.9, ctx)
            steps = np.abs(np.diff(np.log(got.runtime_s)))
            worst = max(worst, steps.max() - np.abs(np.diff(np.log(alone.runtime_s))).max())
            # in log width (within the ramp the interval widens from the narrow one at
            # the edge, fast against its own width there): its steady growth is up to
            # 0.05 per 1/64 doubling for the widest, the peers' narrowing stepping in
            # or out 0.29 of the width, 0.3 for the median series a doubling out
            width = np.log(got.upper_s / got.lower_s)
            assert np.abs(np.diff(width)).max() < 0.1, entry.key
    assert worst < 0.01


@pytest.mark.parametrize(("other", "asked_input"), [
    (_curve("weak", [1, 2, 4, 8], 1.5, weak=True), "in"),  # flat by design
    (_curve("unknown", [1, 2, 4, 8], 1.5, problem_size=""), ""),  # may be any input
    (_curve("short", [4, 8], 1.5), "in"),  # fewer scales than a series trained on
    (_curve("ranks", [1, 2, 4, 8], 1.5, unit="ranks"), "in"),  # another unit of scale
    (_curve("other input", [1, 2, 4, 8], 1.5, problem_size="other"), "in"),
])
def test_series_that_cannot_be_peers_are_left_out(other, asked_input: str) -> None:  # type: ignore[no-untyped-def]
    curves = PeerCurves.of([other])
    said = curves.log_speedup(_key("asked", asked_input), "nodes", 4.0, np.array([8.0]))
    assert said.n_peers.tolist() == [0] and said.presence.tolist() == [0.0]


@pytest.fixture(scope="module")
def castro():  # type: ignore[no-untyped-def]
    """The bundled predictor, the Castro series asked about with its context, and its
    peers among the predictor's series entries."""
    predictor = load_predictor(None)
    entry = next(e for e in predictor.entries.of_app(APP)
                 if e.key.problem_size == INPUT and e.key.variant == VARIANT)
    series, ctx = predictor.series_context(entry)
    return predictor.predictor, series, ctx, predictor.peers(series), predictor.entries.of_app(APP)


def test_beyond_the_measured_range_the_peers_speedup_weighs_in(castro) -> None:  # type: ignore[no-untyped-def]
    """At 2048 nodes (1024 measured), the estimate is the log-space mean, with weight
    PEER_WEIGHT on the peers, of the hybrid's own prediction and this series' runtime at
    1024 times the median speed-up its peers measured from 1024 to 2048 (those whose
    range ends within a doubling below 2048 fading in as their weights say), worked out
    here from the raw entries; with two or more peers, the interval's log half-widths
    about the point are the hybrid's times PEER_INTERVAL_SCALE."""
    model, series, ctx, peers, entries = castro
    p = np.array([2048.0])
    alone = model.predict_columns(series, p, 0.9, ctx)
    with_peers = model.predict_columns(series, p, 0.9, ctx, peers)
    ratios, weights = [], []
    for e in entries:
        x, y = np.log(e.scales), np.log(e.medians_s)
        if (e.key != series.key and e.key.problem_size == INPUT and not e.weak
                and len(e.scales) >= 3 and e.scales[0] <= 1024 < e.scales[-1]):
            weight = min(1.0, 1.0 - np.log2(2048 / e.scales[-1]) / FADE_DOUBLINGS)
            if weight > 0:
                ratios.append(np.interp(np.log(2048), x, y) - np.interp(np.log(1024), x, y))
                weights.append(weight)
    assert weights.count(1.0) >= 2 and with_peers.peer_series.tolist() == [len(ratios)]
    peer_log = np.log(ctx.medians_s[-1]) + _expected_median(ratios, weights, draws=100_000)
    expected = np.exp((1 - PEER_WEIGHT) * np.log(alone.runtime_s) + PEER_WEIGHT * peer_log)
    np.testing.assert_allclose(with_peers.runtime_s, expected, rtol=1e-4)
    for bound in ("lower_s", "upper_s"):
        np.testing.assert_allclose(
            np.log(getattr(with_peers, bound) / with_peers.runtime_s),
            PEER_INTERVAL_SCALE * np.log(getattr(alone, bound) / alone.runtime_s))
    assert not with_peers.noise_floor.any()
    assert alone.peer_series.tolist() == [0]


def test_one_peer_moves_the_point_but_does_not_narrow_the_interval() -> None:
    """BERT on the XE8545 nodes, measured up to 32 nodes, at 64: one peer (NVIDIA's DGX
    A100 runs) measured the speed-up; one series' departures are not averaged out, so the
    interval keeps the hybrid's width relative to the point."""
    predictor = load_predictor(None)
    entry = next(e for e in predictor.entries.of_app("bert")
                 if e.key.system == "XE8545x4A100-SXM-40GB (Dell)")
    series, ctx = predictor.series_context(entry)
    model, p = predictor.predictor, np.array([64.0])
    alone = model.predict_columns(series, p, 0.9, ctx)
    with_peer = model.predict_columns(series, p, 0.9, ctx, predictor.peers(series))
    assert with_peer.peer_series.tolist() == [1]
    assert PEER_INTERVAL_MIN_PEERS > 1
    assert not np.allclose(with_peer.runtime_s, alone.runtime_s)
    np.testing.assert_allclose(with_peer.upper_s / with_peer.runtime_s,
                               alone.upper_s / alone.runtime_s)


def test_within_the_measured_range_peers_change_nothing(castro) -> None:  # type: ignore[no-untyped-def]
    model, series, ctx, peers, _ = castro
    p = np.array([48.0, 300.0, 1024.0])
    alone = model.predict_columns(series, p, 0.9, ctx)
    with_peers = model.predict_columns(series, p, 0.9, ctx, peers)
    np.testing.assert_array_equal(with_peers.runtime_s, alone.runtime_s)
    np.testing.assert_array_equal(with_peers.upper_s, alone.upper_s)
    assert with_peers.peer_series.tolist() == [0, 0, 0]


def test_a_walltime_at_the_narrowed_upper_bound_is_outrun_as_the_interval_says(castro) -> None:  # type: ignore[no-untyped-def]
    """The kill probability (``exceedance``, what ``advise walltime`` reads) and the
    interval agree where peers narrow it: a walltime at the upper bound of the 90%
    interval is outrun by 5% of runs, and one as far above the point as the hybrid's
    own upper bound is above its own point, by fewer."""
    model, series, ctx, peers, _ = castro
    p = np.array([2048.0])
    alone = model.predict_columns(series, p, 0.9, ctx)
    with_peers = model.predict_columns(series, p, 0.9, ctx, peers)
    assert with_peers.peer_series.tolist() != [0]
    np.testing.assert_allclose(model.exceedance(series, p, with_peers.upper_s, ctx, peers),
                               [0.05], atol=0.002)
    unnarrowed = with_peers.runtime_s * alone.upper_s / alone.runtime_s
    assert model.exceedance(series, p, unnarrowed, ctx, peers)[0] < 0.04


def test_the_estimate_says_how_many_peers_it_leans_on(cli) -> None:  # type: ignore[no-untyped-def]
    docs = {}
    for nodes in ("512", "2048"):
        result = cli("estimate", *CASTRO, "--nodes", nodes, "--format", "json")
        assert result.exit_code == 0, result.output
        docs[nodes] = json.loads(result.stdout)
    assert docs["512"]["peer_series"] == 0
    assert not any("speed-up" in note for note in docs["512"]["notes"])
    n_peers = docs["2048"]["peer_series"]
    assert n_peers >= 2
    assert any(note.startswith(f"{n_peers} other series of {APP} on this input measured "
                               "from 1024 toward 2048 nodes")
               for note in docs["2048"]["notes"])

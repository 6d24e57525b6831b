"""Backtests on the store: the hybrid against each law alone, Extra-P and a black box,
measured in one run on the same splits and the same training pools.

The splits and protocols are described in :mod:`perfpredict.evaluate.protocols`, the
baselines in :mod:`perfpredict.evaluate.baselines` and the figures in
:mod:`perfpredict.evaluate.metrics`.

``repeats`` runs a backtest again with other seeds (the hybrid's, the fold assignments of
``by-series`` and the draws of ``random``) and pools the predictions, so every figure is a
mean over the repetitions: one seed's figure says something about the seed, and the
spread between seeds is what a statistical test's margin must exceed.

``with_bundled`` adds the public data sets shipped with perfpredict to every training
pool, in full, as ``train --with-bundled`` does; a bundled data set the store already
holds (by its folder name) and a bundled series whose key is in the store are left out of
the addition, so a tested series is never seen beyond its cut. Without it,
``borrow_bundled`` does as ``train`` does by default: a store of too few
strong-scaling applications (:func:`perfpredict.model.fit.too_few_applications`) borrows
from the same bundled series (its intervals calibrated on them too, half its correction
learned with them: :meth:`perfpredict.model.fit.HybridPredictor.fit`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfpredict._listing import listing
from perfpredict.counts import check_count
from perfpredict.errors import BadInputError, NotTrainedError
from perfpredict.evaluate.baselines import BLACKBOX, blackbox, law_names, law_prediction
from perfpredict.evaluate.metrics import Outcomes, distance_bands, summarise
from perfpredict.evaluate.protocols import (
    LEAVE_OUT,
    PROTOCOLS,
    SCALE_SPLITS,
    SPLITS,
    Holdout,
    TrainingRound,
    plan_split,
    training_rounds,
)
from perfpredict.laws.base import FloatArray
from perfpredict.model.fit import HybridPredictor, too_few_applications
from perfpredict.model.series import (
    NO_RUNS,
    SERIES_KEY,
    Series,
    SeriesKey,
    build_series,
    key_part,
    usable_runs,
)
from perfpredict.store.handle import Store, takes_store
from perfpredict.uncertainty.conformal import check_confidence

__all__ = ["GROUP_BY", "LEAVE_OUT", "PROTOCOLS", "SCALE_SPLITS", "SPLITS", "Outcomes", "backtest",
           "bundled_series", "evaluate", "evaluate_frame", "frame_outcomes", "plan_split",
           "series_sources", "summarise", "training_rounds"]
__dir__ = listing(globals(), __all__)


#: The group of each test run of a series, from the series and the runs' distances in
#: doublings beyond its context's largest scale (0 or less: inside the measured range):
#: one label for them all, or one per run.
GroupOf = Callable[[Series, FloatArray], str | Sequence[str]]
#: What ``evaluate`` can group its rows by.
GROUP_BY = ("source", "app", "system", "distance")
#: Most ``repeats`` a backtest runs. Each is a whole backtest: a store-cut one of the
#: bundled data sets took 11 s of CPU (19 s on a shared two-core machine), a by-series one
#: 70 s, and a center's store takes longer; so 100 repeats are already half an hour to
#: two hours, printing nothing until done. More buy little: the seed-to-seed spread of a
#: pooled figure falls as 1/sqrt(repeats), at 100 a tenth of one seed's (accuracy.md's
#: tables pool 3 to 10). A larger count is a slip that would run for days.
MAX_REPEATS = 100


#: What each split keeps of a tested series, for the message of a cut too short to learn
#: from (:func:`_too_short`).
_KEPT_BY_SPLIT = {
    "extrapolate": "the lower half of its scales (two of four)",
    "fewshot": "its three smallest scales",
    "random": "its scales but the held-out ones",
    "time": "its runs submitted before the cut",
}


def _too_short(split: str, protocol: str) -> NotTrainedError:
    """The domain error of a backtest whose training pool, as ``split`` and
    ``protocol`` cut it, holds no series of three or more scales (a store of series of
    four scales, cut to two in extrapolation: "ingest more runs" said nothing of the
    cut), with the split and protocol that keep more where another would."""
    fixes = [*(["--split fewshot keeps three scales"] if split != "fewshot" else []),
             *(["--protocol by-series trains on the other series in full"]
               if protocol != "by-series" and split != "time" else []),
             "or ingest runs at more scales"]
    return NotTrainedError(
        "no series the backtest may train on has three or more distinct scales once each "
        f"tested series is cut to {_KEPT_BY_SPLIT[split]}; " + ", ".join(fixes))


def _fit_hybrid(pool: list[Series], random_state: int,
                borrowed_pool: list[Series]) -> HybridPredictor:
    """The hybrid trained on ``pool`` (borrowing from ``borrowed_pool``)."""
    return HybridPredictor(random_state=random_state).fit(
        pool, borrowed_series=borrowed_pool)


def backtest(series_list: list[Series], split: str, group_of: GroupOf,
             confidence: float = 0.9, protocol: str = "store-cut",
             leave_out_of: Callable[[Series], str] | None = None,
             extra_pool: list[Series] | None = None, n_folds: int = 5,
             random_state: int = 0, repeats: int = 1,
             borrowed_pool: Callable[[], list[Series]] | None = None) -> Outcomes:
    """Predict every tested run of ``split`` under ``protocol`` (or leaving out each
    group of ``leave_out_of`` in turn), grouped by ``group_of``, ``repeats`` times with the seeds
    ``random_state``, ``random_state + 1``, ..., pooled. ``extra_pool`` joins every
    training pool in full and is never tested; where a round's training pool has too few
    strong-scaling applications, as ``train`` decides on a store
    (:func:`too_few_applications`), the hybrid borrows the series ``borrowed_pool``
    gives (:meth:`HybridPredictor.fit`).

    Decided per round, on the pool as cut: a store that has never run its applications
    beyond the cut can hold too few series of three or more scales to learn from where
    the whole store holds enough (a series of four scales keeps two in extrapolation),
    and whether it borrows must not depend on runs beyond the cut."""
    outcomes = Outcomes(n_repeats=repeats)
    # read once, by the first round that borrows
    borrowed = None if borrowed_pool is None else functools.cache(borrowed_pool)

    def borrow(pool: list[Series]) -> list[Series]:
        return borrowed() if borrowed is not None and too_few_applications(pool) else []

    for seed in range(random_state, random_state + repeats):
        plan = plan_split(series_list, split, seed)
        leave_out_group = (None if leave_out_of is None
                           else lambda i: leave_out_of(series_list[i]))
        for training in training_rounds(plan, protocol, leave_out_group, n_folds, seed):
            # a cut can leave every series it trains on with two scales or fewer
            if not any(s.scales.size >= 3 for s in [*training.pool, *(extra_pool or [])]):
                raise _too_short(split, protocol)
            _predict_round(outcomes, series_list, plan.holdouts, training,
                           extra_pool or [], borrow, group_of, confidence, seed)
    return outcomes


def _predict_round(outcomes: Outcomes, series_list: list[Series],
                   holdouts: dict[int, Holdout], training: TrainingRound, extra_pool: list[Series],
                   borrow: Callable[[list[Series]], list[Series]], group_of: GroupOf,
                   confidence: float, seed: int) -> None:
    """Train the hybrid (borrowing what ``borrow`` gives for its pool) and the black box
    on one round's pool and add every method's predictions of the round's tested runs."""
    pool = training.pool + extra_pool
    hybrid = _fit_hybrid(pool, seed, borrow(pool))
    black_box = blackbox(pool, seed)
    for i in training.tested:
        series, context = series_list[i], holdouts[i].context
        test = holdouts[i].test
        p, true = series.scale[test], series.runtime_s[test]
        group, name = group_of(series, np.log2(p / context.scales.max())), series.name
        preds = hybrid.predict_columns(context, p, confidence)
        outcomes.add("hybrid", group, name, true, preds.runtime_s, preds.lower_s,
                     preds.upper_s)
        for law in law_names(series):
            outcomes.add(law, group, name, true, law_prediction(law, context, p))
        outcomes.add(BLACKBOX, group, name, true, black_box(context, p))


def evaluate_frame(frame, split: str = "extrapolate", group_by: str = "source",  # type: ignore[no-untyped-def]
                   confidence: float = 0.9, repeats: int = 1, protocol: str = "store-cut",
                   leave_out: str | None = None,
                   extra_pool: list[Series] | None = None,
                   random_state: int = 0,
                   borrowed_pool: Callable[[], list[Series]] | None = None,
                   ) -> list[dict[str, Any]]:
    """The evaluate table for a runs DataFrame (``runs_frame``): :func:`summarise` of
    :func:`frame_outcomes`."""
    return summarise(frame_outcomes(frame, split, group_by, confidence, repeats, protocol,
                                    leave_out, extra_pool, random_state, borrowed_pool))


def frame_outcomes(frame, split: str = "extrapolate", group_by: str = "source",  # type: ignore[no-untyped-def]
                   confidence: float = 0.9, repeats: int = 1, protocol: str = "store-cut",
                   leave_out: str | None = None,
                   extra_pool: list[Series] | None = None,
                   random_state: int = 0,
                   borrowed_pool: Callable[[], list[Series]] | None = None) -> Outcomes:
    """Every method's predictions of the tested runs of a runs DataFrame (``runs_frame``),
    which backtests of several stores pool before summarising; ``borrowed_pool`` gives
    the series the hybrid borrows from, asked for only where a round's training pool
    has too few strong-scaling applications (:func:`backtest`)."""
    if group_by not in GROUP_BY:
        raise BadInputError(f"--group-by must be one of: {', '.join(GROUP_BY)}, not "
                            f"{group_by!r}")
    check_confidence(confidence)
    if leave_out is not None and leave_out not in LEAVE_OUT:
        raise BadInputError(f"--leave-out must be one of: {', '.join(LEAVE_OUT)}, not "
                            f"{leave_out!r}")
    if leave_out is not None and protocol != "store-cut":
        raise BadInputError(f"--leave-out trains one predictor per {leave_out} left out (its "
                            f"series cut, the rest in full), a protocol of its own; drop "
                            f"--protocol {protocol}")
    if leave_out is not None and split == "time":
        # it ran the store cut and said nothing: the rest of the store "in full" would be
        # its runs after the cut, which the time split shows to nothing
        raise BadInputError(f"--leave-out {leave_out} with --split time: the time split "
                            "is one cut of the whole store, nothing submitted after it seen "
                            "by anything, so no group can be trained on in full; drop "
                            "--leave-out, or leave out with a scale split (extrapolate, "
                            "fewshot, random)")
    series_list = build_series(frame)
    if not series_list:
        raise NotTrainedError(f"nothing to backtest: {no_series_reason(frame)}")
    sources = series_sources(frame)
    store_keys = {s.key for s in series_list}
    extra = [s for s in extra_pool or [] if s.key not in store_keys]

    def label(by: str) -> Callable[[Series], str]:
        if by == "app":
            return lambda s: s.key.app
        if by == "system":
            return lambda s: s.key.system
        return lambda s: sources.get(s.key, "store")

    if leave_out is not None:
        groups = {label(leave_out)(s) for s in series_list}
        if len(groups) == 1:  # the one group left out is the store cut, not a transfer
            raise BadInputError(
                f"--leave-out {leave_out}: every series has the same {leave_out} "
                f"({groups.pop()}), so leaving it out is the store cut itself and measures "
                f"no transfer; drop --leave-out, or ingest runs of another {leave_out}")
    series_label = label(group_by)

    def group_of(series: Series, distance_log2: FloatArray) -> str | list[str]:
        if group_by == "distance":
            return distance_bands(distance_log2)
        return series_label(series)

    return backtest(series_list, split, group_of, confidence, protocol,
                    None if leave_out is None else label(leave_out), extra,
                    random_state=random_state, repeats=repeats,
                    borrowed_pool=None if borrowed_pool is None
                    else _leaving_out(borrowed_pool, store_keys))


def no_series_reason(frame) -> str:  # type: ignore[no-untyped-def]
    """Why a store's runs (a ``runs_frame``) hold no scaling series, for the message."""
    if frame.empty:
        return NO_RUNS
    usable = usable_runs(frame)
    if usable.empty:
        return (f"none of the store's {len(frame)} runs measured completed work (failed, "
                "cancelled, timed out, or no runtime)")
    return (f"the store's {len(usable)} completed runs are scheduler jobs with no "
            "problem size or variant, so nothing shows they ran one workload at several "
            "scales; ingest scaling runs as CSV with a problem_size column (and "
            "submit_time for the time split)")


def _leaving_out(pool: Callable[[], list[Series]],
                 keys: set[SeriesKey]) -> Callable[[], list[Series]]:
    """``pool`` without the series whose key is in ``keys``: a bundled copy of a stored
    series would be seen beyond its cut."""
    return lambda: [s for s in pool() if s.key not in keys]


def series_sources(frame) -> dict[SeriesKey, str]:  # type: ignore[no-untyped-def]
    """Series key -> the name of the data set (ingest file's folder or stem) it came from."""
    if "source" not in frame:
        return {}
    out: dict[SeriesKey, str] = {}
    for row in frame[[*SERIES_KEY, "source"]].itertuples(index=False):
        key = SeriesKey(*(key_part(v) for v in row[:-1]))
        path = Path(str(row[-1]))
        out.setdefault(key, path.parent.name if path.name.startswith("runs.csv") else path.stem)
    return out


def bundled_series(exclude: set[str] | frozenset[str] = frozenset()) -> list[Series]:
    """The series of every public data set shipped with perfpredict but those named in
    ``exclude``."""
    # installed from datasets/ through the package-dir mapping, which mypy does not follow
    from perfpredict import datasets  # type: ignore[attr-defined]

    return datasets.series([n for n in datasets.NAMES if n not in exclude])


def grouping(group_by: str | None, leave_out: str | None) -> str:
    """The rows' grouping: ``group_by`` where given, else the group ``leave_out`` names,
    else source. Per source, a store of one center left out system by system showed
    its transfer to each machine as one row.

    >>> grouping(None, "system"), grouping(None, None), grouping("app", "system")
    ('system', 'source', 'app')
    """
    if group_by is not None:
        return group_by
    return leave_out if leave_out in GROUP_BY else "source"


@takes_store
def evaluate(store: Store, split: str = "extrapolate", group_by: str | None = None,
             confidence: float = 0.9, app: str | list[str] | None = None, repeats: int = 1,
             protocol: str = "store-cut", leave_out: str | None = None,
             with_bundled: bool = False, random_state: int = 0,
             borrow_bundled: bool = True) -> list[dict[str, Any]]:
    """Backtest the store's runs (the splits, protocols and pools: the module docstring)
    and return the evaluate table, one dict per group and method
    (:func:`~perfpredict.evaluate.metrics.summarise`; ``pandas.DataFrame(rows)`` makes
    it a frame). Each dict holds ``group`` ("all" pools every group; ``group_by`` None:
    as :func:`grouping` says), ``method`` ("hybrid", each law alone, "extrap",
    "blackbox_xgboost"), ``n_series`` and ``n_runs`` tested, the errors in percent of
    the measured runtime (``mape_pct``, ``median_ape_pct``, ``trimmed_mape_pct``, and
    the signed median ``bias_pct``, above 0 where the method predicts too long),
    ``within_10pct_series`` (a share, 0-1), and for the methods with intervals (at
    ``confidence``, else None) the share of runs inside them, ``coverage``, with its
    bootstrap 95% interval (``coverage_ci_low``, ``coverage_ci_high``), the percent of
    runs below and above (``below_pct``, ``above_pct``) and ``median_rel_width``, the
    interval's width over the prediction (:mod:`perfpredict.evaluate.metrics`)."""
    from perfpredict.store.queries import runs_frame

    group_by = grouping(group_by, leave_out)

    if split not in SPLITS:
        raise BadInputError(f"--split must be one of: {', '.join(SPLITS)}, not {split!r}")
    check_count("--repeats", repeats, most=MAX_REPEATS)
    check_count("--seed", random_state, least=0)  # XGBoost takes no seed of 20 digits
    check_confidence(confidence)  # before the runs are read
    # each application found as every command finds it (BERT is the store's bert)
    frame = runs_frame(store, app=app, with_source=True)

    def bundled() -> list[Series]:
        # a bundled data set the store holds (its series perhaps keyed otherwise) stays out
        return bundled_series(exclude=set(series_sources(frame).values()))

    return evaluate_frame(frame, split, group_by, confidence, repeats, protocol, leave_out,
                          bundled() if with_bundled else None, random_state,
                          bundled if borrow_bundled and not with_bundled else None)


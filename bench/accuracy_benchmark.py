"""Issue 13's acceptance table: every judged data set in a fresh store, backtested.

Judged are the data sets with at least five series of at least five distinct scales
(MLPerf Training, RELeARN, VASP, CP2K, Castro, PencilFFTs); LULESH has one series and is
reported, not judged (it counts in the pooled figures). A data set is read from the
project's datasets/ where it is bundled, else from ../shared/datasets (GPL data such as
VASP and CP2K are read from there only, never copied).

A data set's ``variant`` column (build, NCORE/KPAR, transport scheme) is part of the
series key, so VASP's configurations do not mix into one curve no law fits. Each data set
is stored from its own ``<name>/runs.csv[.gz]``, so the evaluate table groups by its name.

Run:
    python -m bench.accuracy_benchmark                      # extrapolate + fewshot, store-cut
    python -m bench.accuracy_benchmark --protocol by-series
    python -m bench.accuracy_benchmark --leave-out source
    python -m bench.accuracy_benchmark --with-bundled --repeats 3
    python -m bench.accuracy_benchmark --dataset vasp_archer --dataset cp2k_readme --with-bundled
    python -m bench.accuracy_benchmark --small-stores 4 --repeats 6   # a code run a few times
    python -m bench.accuracy_benchmark --center-stores 1 --repeats 10 # many codes, run once each
    python -m bench.accuracy_benchmark --across-stores --repeats 3    # a change in every store

Each backtest prints, as Markdown, one row per data set and a pooled row: the hybrid's
MAPE and median APE beside the best single baseline's on each (Amdahl, Amdahl + log,
Gustafson where weak, power law, Extra-P, black-box XGBoost), its 90% coverage with the
series-bootstrap interval, and what fails the acceptance; then the hybrid's other figures
(trimmed MAPE, share of series within 10%, median signed bias, median relative width).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = Path(os.environ.get("PERFPREDICT_SHARED", REPO.parent / "shared")) / "datasets"
#: The data sets docs/accuracy.md and the acceptance tests' margins measured: those
#: :func:`discover` judges and reports among the data sets this repository and
#: ../shared hold today.
JUDGED = ("mlperf_training", "relearn", "vasp_archer", "cp2k_readme", "castro_scaling",
          "pencilffts_jeanzay")
REPORTED = ("lulesh_thicket",)
#: Issue 13's rule: a data set with this many series of this many distinct scales or
#: more is judged.
JUDGED_MIN_SERIES = 5
JUDGED_MIN_SCALES = 5
#: A series of this many distinct scales leaves runs to test in both splits (the three
#: smallest scales, or the lower half, below the cut); a data set with one such series,
#: and too few to be judged, is reported.
TESTED_MIN_SCALES = 4


class DataSets(NamedTuple):
    """What :func:`discover` found: the data sets judged and reported, and why each
    other was left out."""

    judged: tuple[str, ...]
    reported: tuple[str, ...]
    left_out: dict[str, str]


def dataset_file(name: str, shared_datasets: Path = SHARED_DATASETS) -> Path:
    """The bundled copy of data set ``name`` where there is one, else the shared one."""
    bundled = REPO / "datasets" / name / "runs.csv.gz"
    if bundled.exists():
        return bundled
    shared = shared_datasets / name / "runs.csv"
    if not shared.exists():
        raise FileNotFoundError(f"{name}: neither {bundled} nor {shared} exists")
    return shared


def discover(shared_datasets: Path = SHARED_DATASETS) -> DataSets:
    """Every data set in datasets/ and ``shared_datasets``, judged or reported by issue
    13's rule, so that a data set added to either is backtested with the others, as the
    acceptance asks ("every data set ... with at least 5 series of at least 5 distinct
    scales"). Each is stored alone to count its series as a store sees them (variants
    and layouts apart); one that cannot be ingested as runs (MLPerf Storage's throughputs)
    or has no series to test (MLPerf HPC's) is left out, with the reason."""
    from perfpredict.errors import BadInputError
    from perfpredict.ingest import ingest_file
    from perfpredict.model.series import build_series
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    measured = JUDGED + REPORTED  # in their order, any other after them
    names = sorted({path.parent.name for folder in (REPO / "datasets", shared_datasets)
                    for pattern in ("*/runs.csv", "*/runs.csv.gz")
                    for path in folder.glob(pattern)},
                   key=lambda name: (measured.index(name) if name in measured
                                     else len(measured), name))
    judged, reported, left_out = [], [], {}
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(f"sqlite:///{Path(tmp) / 'one.db'}")
            try:
                ingest_file(store, "csv", dataset_file(name, shared_datasets))
                scales = [s.scales.size for s in build_series(runs_frame(store))]
            except BadInputError as exc:
                left_out[name] = f"cannot be ingested: {exc.reason.split(';')[0]}"
                continue
            finally:
                store.dispose()
        if sum(n >= JUDGED_MIN_SCALES for n in scales) >= JUDGED_MIN_SERIES:
            judged.append(name)
        elif any(n >= TESTED_MIN_SCALES for n in scales):
            reported.append(name)
        else:
            left_out[name] = f"no series of {TESTED_MIN_SCALES} or more scales to test"
    return DataSets(tuple(judged), tuple(reported), left_out)


def build_store(url: str, names: tuple[str, ...] = JUDGED + REPORTED,
                shared_datasets: Path = SHARED_DATASETS):  # type: ignore[no-untyped-def]
    """A store at ``url`` holding the data sets ``names``, each its own ingest source."""
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store

    store = open_store(url)
    for name in names:
        ingest_file(store, "csv", dataset_file(name, shared_datasets))
    return store


def acceptance_table(table: list[dict[str, Any]], judged: tuple[str, ...] = JUDGED,
                     reported: tuple[str, ...] = REPORTED) -> list[dict[str, Any]]:
    """One verdict row per data set in the backtest's table, then the pooled one."""
    from perfpredict.evaluate.metrics import verdict_rows

    return verdict_rows(table, groups=(*judged, *reported), reported=reported,
                        label="data set")


def hybrid_rows(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hybrid's full row per data set (trimmed MAPE, bias, width, ...)."""
    keep = ("group", "n_series", "n_runs", "mape_pct", "median_ape_pct", "trimmed_mape_pct",
            "within_10pct_series", "bias_pct", "coverage", "below_pct", "above_pct",
            "median_rel_width")
    return [{k: r[k] for k in keep} for r in table if r["method"] == "hybrid"]


#: the verdict's figures whose seed-to-seed spread the acceptance tests' margins rest on
SPREAD_FIGURES = ("hybrid_mape_pct", "mape_gap_pct", "hybrid_median_ape_pct",
                  "median_ape_gap_pct", "coverage")


def seed_spread(store, split: str, n_seeds: int, first_seed: int = 0,  # type: ignore[no-untyped-def]
                **options: Any) -> list[dict[str, Any]]:
    """Per data set and figure: mean, standard deviation, minimum and maximum over
    ``n_seeds`` backtests that differ only in their seeds (the hybrid's, the black box's,
    the folds and draws). A backtest of ``repeats`` pools that many seeds; the backtests'
    seeds do not overlap (``first_seed``, ``first_seed + repeats``, ...), so their spread
    is that of independent runs. A gap is the hybrid's figure minus the best baseline's."""
    import numpy as np

    from perfpredict.evaluate import evaluate
    from perfpredict.evaluate.metrics import acceptance

    values: dict[tuple[str, str], list[float]] = {}
    step = options.get("repeats", 1)
    for seed in range(first_seed, first_seed + n_seeds * step, step):
        table = evaluate(store, split, random_state=seed, **options)
        for group in sorted({r["group"] for r in table}):
            verdict = acceptance(table, group)
            verdict["mape_gap_pct"] = verdict["hybrid_mape_pct"] - verdict["best_mape_pct"]
            verdict["median_ape_gap_pct"] = (verdict["hybrid_median_ape_pct"]
                                             - verdict["best_median_ape_pct"])
            for figure in SPREAD_FIGURES:
                values.setdefault((group, figure), []).append(verdict[figure])
    return [{"data set": group, "figure": figure, "mean": float(np.mean(v)),
             "sd": float(np.std(v, ddof=1)) if len(v) > 1 else 0.0,
             "min": float(np.min(v)), "max": float(np.max(v))}
            for (group, figure), v in sorted(values.items())]


class BenchStore(NamedTuple):
    """A store to backtest in: what to call it, the data sets it holds, and the options
    of :func:`perfpredict.evaluate.evaluate` it is backtested with; or, with
    ``per_application``, the stores shaped like a center's drawn from it
    (:func:`center_stores`, CENTER_DRAWS draws)."""

    label: str
    data_sets: tuple[str, ...]
    options: dict[str, Any]
    per_application: int | None = None


#: The splits the acceptance judges, and every mode's default.
ACCEPTANCE_SPLITS = ("extrapolate", "fewshot")
HPC_STRONG_SCALING = ("vasp_archer", "cp2k_readme", "castro_scaling", "pencilffts_jeanzay")
#: The stores a modelling change is judged across (:func:`across_stores`). A change to
#: the correction that lowered the acceptance store's pooled MAPE in both splits raised
#: it in extrapolation for the four HPC data sets alone and under --leave-out source
#: (docs/accuracy.md, the correction read as a rate as well as a level): one store's
#: figures do not say how a change generalises.
STORES = (
    BenchStore("every data set, store-cut", JUDGED + REPORTED, {}),
    BenchStore("the four HPC data sets alone, store-cut", HPC_STRONG_SCALING, {}),
    BenchStore("every data set, leave-out source", JUDGED + REPORTED, {"leave_out": "source"}),
    BenchStore("a center's: up to two series per application, store-cut",
               JUDGED + REPORTED, {}, per_application=2),
)
#: Stores drawn per split for a center's store in :func:`across_stores`, whatever its
#: ``repeats``: one draw is one store of a few series, whose figures move with the draw.
CENTER_DRAWS = 10


def across_stores(stores: tuple[BenchStore, ...] = STORES,
                  splits: tuple[str, ...] = ACCEPTANCE_SPLITS, repeats: int = 1,
                  seed: int = 0, shared_datasets: Path = SHARED_DATASETS,
                  ) -> list[dict[str, Any]]:
    """One row per store and split: the hybrid's pooled MAPE, median APE and 90%
    coverage beside the best single baseline's pooled MAPE, and each data set's hybrid
    MAPE with the best baseline's, so that a change is seen in every store at once."""
    from perfpredict.evaluate import evaluate
    from perfpredict.evaluate.metrics import acceptance

    rows = []
    for bench_store in stores:
        names = bench_store.data_sets
        with tempfile.TemporaryDirectory() as tmp:
            store = build_store(f"sqlite:///{Path(tmp) / 'store.db'}", names,
                                shared_datasets)
            try:
                for split in splits:
                    table = (center_stores(store, split, bench_store.per_application,
                                           CENTER_DRAWS, seed)
                             if bench_store.per_application else
                             evaluate(store, split, repeats=repeats, random_state=seed,
                                      **bench_store.options))
                    pooled = acceptance(table, "all")
                    per_data_set = [acceptance(table, name) for name in names
                                    if name in JUDGED and any(r["group"] == name
                                                              for r in table)]
                    n_beaten = sum(v["hybrid_mape_pct"] < v["best_mape_pct"]
                                   for v in per_data_set)
                    rows.append({
                        "store": bench_store.label, "split": split,
                        "hybrid MAPE": round(pooled["hybrid_mape_pct"], 1),
                        "best MAPE": round(pooled["best_mape_pct"], 1),
                        "hybrid median APE": round(pooled["hybrid_median_ape_pct"], 1),
                        "coverage": round(pooled["coverage"], 3),
                        "data sets beaten on MAPE": f"{n_beaten} of {len(per_data_set)}",
                        "hybrid MAPE per data set (best)": ", ".join(
                            f"{v['group']} {v['hybrid_mape_pct']:.1f} ({v['best_mape_pct']:.1f})"
                            for v in per_data_set)})
            finally:
                store.dispose()
    return rows


#: Fewest distinct scales of a series drawn into a small or a center's store
#: (:func:`small_stores`, :func:`center_stores`): as the judged data sets' series, so
#: that both splits leave it runs to test.
SMALL_STORE_MIN_SCALES = 5


class _Drawable(NamedTuple):
    """A store's runs and its series of SMALL_STORE_MIN_SCALES+ scales, from which
    stores are drawn."""

    frame: Any
    row_keys: Any  # each run's series key, joined
    series: list[tuple[str, str, str, bool]]  # (data set, application, key, weak), in store order


def _drawable(store) -> _Drawable:  # type: ignore[no-untyped-def]
    import numpy as np

    from perfpredict.evaluate import series_sources
    from perfpredict.model.series import SERIES_KEY, build_series, key_part
    from perfpredict.store.queries import runs_frame

    frame = runs_frame(store, with_source=True)
    sources = series_sources(frame)
    row_keys = np.array(["\0".join(key_part(v) for v in row)
                         for row in frame[list(SERIES_KEY)].itertuples(index=False)])
    series = [(sources[s.key], s.key.app, "\0".join(s.key), s.weak)
              for s in build_series(frame) if s.scales.size >= SMALL_STORE_MIN_SCALES]
    return _Drawable(frame, row_keys, series)


def _backtest_drawn(drawable: _Drawable, draws: list[tuple[list[str], set[str], int]],
                    n_repeats: int, split: str, with_bundled: bool, borrow_bundled: bool,
                    ) -> list[dict[str, Any]]:
    """The evaluate table of the drawn stores, their predictions pooled (``n_repeats``
    draws of each tested series' store): each draw the series keys it holds, the data
    sets they come from (whose bundled copies stay out of what it borrows or adds, as
    ``evaluate`` leaves out a data set the store holds) and its seed."""
    import numpy as np

    from perfpredict.evaluate import Outcomes, bundled_series, frame_outcomes, summarise

    outcomes = Outcomes(n_repeats=n_repeats)
    # read once per set of data sets left out, not once per draw
    bundled_without = functools.cache(lambda left_out: bundled_series(exclude=left_out))
    for picked, data_sets, draw in draws:
        others = bundled_without(frozenset(data_sets))
        part = drawable.frame[np.isin(drawable.row_keys, picked)]
        outcomes.rows.extend(frame_outcomes(
            part, split, extra_pool=others if with_bundled else None,
            random_state=draw,
            borrowed_pool=(lambda pool=others: pool)
            if borrow_bundled and not with_bundled
            else None).rows)
    return summarise(outcomes)


def small_stores(store, split: str, n_series: int, repeats: int, seed: int = 0,  # type: ignore[no-untyped-def]
                 with_bundled: bool = False,
                 borrow_bundled: bool = True) -> list[dict[str, Any]]:
    """The evaluate table of stores of ``n_series`` series, as a center that has run a
    code a few times holds: for each data set in ``store`` with more strong-scaling
    series of SMALL_STORE_MIN_SCALES+ scales than that, ``repeats`` draws of
    ``n_series`` of them (seeds ``seed``, ``seed + 1``, ...), each a store of its own
    backtested as ``evaluate`` does (the bundled data sets, that one left out, join as
    ``train`` would add them), the predictions of all draws pooled."""
    import numpy as np

    drawable = _drawable(store)
    eligible: dict[str, list[str]] = {}
    for name, _, key, weak in drawable.series:
        if not weak:
            eligible.setdefault(name, []).append(key)
    draws = []
    for name, keys in sorted(eligible.items()):
        if len(keys) <= n_series:
            continue
        for draw in range(seed, seed + repeats):
            picked = np.random.default_rng(draw).choice(keys, n_series, replace=False)
            draws.append((list(picked), {name}, draw))
    return _backtest_drawn(drawable, draws, repeats, split, with_bundled, borrow_bundled)


def center_stores(store, split: str, per_application: int, repeats: int, seed: int = 0,  # type: ignore[no-untyped-def]
                  with_bundled: bool = False,
                  borrow_bundled: bool = True) -> list[dict[str, Any]]:
    """The evaluate table of stores shaped like a center's: many applications, each run
    as a scaling series a few times (:func:`center_draws`), each store backtested as
    ``evaluate`` does, the predictions of all draws pooled.

    The acceptance store holds 165 series of VASP and 33 of Castro, and its hybrid
    learns from an application's other series (its own half of the correction, peer
    curves); a center's store holds a dozen codes measured once or twice each
    (docs/accuracy.md, "Stores shaped like a center's")."""
    drawable = _drawable(store)
    draws = center_draws(drawable.series, per_application, repeats, seed)
    return _backtest_drawn(drawable, draws, repeats, split, with_bundled, borrow_bundled)


def center_draws(series: list[tuple[str, str, str, bool]], per_application: int,
                 repeats: int, seed: int = 0) -> list[tuple[list[str], set[str], int]]:
    """``repeats`` stores (seeds ``seed``, ``seed + 1``, ...), each holding, of every
    application of every data set in ``series`` (data set, application, key, weak),
    ``per_application`` of its series drawn at random (all of them where it has no
    more), strong and weak scaling alike: each store's series keys, data sets and
    seed."""
    import numpy as np

    by_application: dict[tuple[str, str], list[str]] = {}
    for name, app, key, _ in series:
        by_application.setdefault((name, app), []).append(key)
    data_sets = {name for name, _ in by_application}
    draws = []
    for draw in range(seed, seed + repeats):
        rng = np.random.default_rng(draw)
        picked = [str(key) for _, keys in sorted(by_application.items())
                  for key in rng.choice(keys, min(per_application, len(keys)),
                                        replace=False)]
        draws.append((picked, data_sets, draw))
    return draws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", choices=["extrapolate", "fewshot", "random"],
                        help="repeatable; default: extrapolate and fewshot")
    parser.add_argument("--protocol", default="store-cut", choices=["store-cut", "by-series"])
    parser.add_argument("--leave-out", choices=["source", "system"])
    parser.add_argument("--with-bundled", action="store_true",
                        help="add the bundled data sets the store does not hold to training")
    parser.add_argument("--no-borrow-bundled", action="store_true",
                        help="a store of fewer than 8 strong-scaling applications learns "
                             "from its own series alone (its intervals calibrated by series)")
    parser.add_argument("--dataset", action="append",
                        help="repeatable; the data sets in the store (default: every one "
                             "issue 13's rule judges or reports, in datasets/ and "
                             "../shared/datasets)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--small-stores", type=int, metavar="K",
                        help="backtest stores of K series of one data set each, drawn "
                             "--repeats times per data set, pooled")
    parser.add_argument("--center-stores", type=int, metavar="K",
                        help="backtest stores of K series of every application, drawn "
                             "--repeats times, pooled")
    parser.add_argument("--seed-spread", type=int, metavar="N",
                        help="run each split with N seeds and print each figure's spread")
    parser.add_argument("--across-stores", action="store_true",
                        help="backtest four stores in one run (every data set store-cut, "
                             "the four HPC data sets alone store-cut, every data set "
                             "leaving each out, ten draws of a center's store of up to two "
                             "series per application) and print their pooled figures; "
                             "takes --split, --repeats and --seed only")
    args = parser.parse_args(argv)
    splits = tuple(args.split or ACCEPTANCE_SPLITS)
    if args.small_stores and args.center_stores:
        parser.error("--small-stores and --center-stores draw different stores; give one")
    if args.across_stores and (args.dataset or args.leave_out or args.small_stores
                               or args.center_stores
                               or args.seed_spread or args.with_bundled
                               or args.no_borrow_bundled
                               or args.protocol != "store-cut"):
        parser.error("--across-stores chooses its own stores and protocols; it takes "
                     "--split, --repeats and --seed only")

    from perfpredict.evaluate import evaluate
    from perfpredict.report.tables import markdown_table

    if args.across_stores:
        started = time.perf_counter()
        rows = across_stores(splits=splits, repeats=args.repeats, seed=args.seed)
        print(f"\n## across stores, repeats {args.repeats}, seed {args.seed} "
              f"({time.perf_counter() - started:.0f} s)\n")
        print(markdown_table(rows))
        return 0

    found = discover()
    print(f"data sets judged: {', '.join(found.judged)}; reported: "
          f"{', '.join(found.reported) or 'none'}; left out: "
          + ("; ".join(f"{name} ({why})" for name, why in found.left_out.items()) or "none"))
    if unknown := sorted(set(args.dataset or ()) - {*found.judged, *found.reported}):
        parser.error(f"no such data set to backtest: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{Path(tmp) / 'accuracy.db'}",
                            tuple(args.dataset or found.judged + found.reported))
        try:
            for split in splits:
                started = time.perf_counter()
                if args.seed_spread:
                    rows = seed_spread(store, split, args.seed_spread, args.seed,
                                       protocol=args.protocol, leave_out=args.leave_out,
                                       with_bundled=args.with_bundled, repeats=args.repeats,
                                       borrow_bundled=not args.no_borrow_bundled)
                    print(f"\n## {split}: spread over {args.seed_spread} seeds from "
                          f"{args.seed}, repeats {args.repeats} "
                          f"({time.perf_counter() - started:.0f} s)\n")
                    print(markdown_table(rows))
                    continue
                if args.small_stores:
                    table = small_stores(store, split, args.small_stores, args.repeats,
                                         args.seed, args.with_bundled,
                                         not args.no_borrow_bundled)
                elif args.center_stores:
                    table = center_stores(store, split, args.center_stores, args.repeats,
                                          args.seed, args.with_bundled,
                                          not args.no_borrow_bundled)
                else:
                    table = evaluate(store, split, protocol=args.protocol,
                                     leave_out=args.leave_out, with_bundled=args.with_bundled,
                                     repeats=args.repeats, random_state=args.seed,
                                     borrow_bundled=not args.no_borrow_bundled)
                took_s = time.perf_counter() - started
                label = (f"leave-out {args.leave_out}" if args.leave_out else args.protocol)
                if args.small_stores:
                    label += f", stores of {args.small_stores} series"
                if args.center_stores:
                    label += f", stores of {args.center_stores} series per application"
                if args.dataset:
                    label += f", store of {' + '.join(args.dataset)}"
                if args.no_borrow_bundled:
                    label += ", borrowing nothing"
                print(f"\n## {split}, {label}{', with bundled' if args.with_bundled else ''}"
                      f", repeats {args.repeats}, seed {args.seed} ({took_s:.0f} s)\n")
                for rows in (acceptance_table(table, found.judged, found.reported),
                             hybrid_rows(table)):
                    print(markdown_table(rows) + "\n")
                sys.stdout.flush()
        finally:
            store.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())

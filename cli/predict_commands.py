"""``perfpredict train``, ``evaluate`` and ``datasets``."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfpredict.cli.render import (
    SummaryFormat,
    TableFormat,
    TableFormatOption,
    print_json,
    print_rows,
    stored_app_names,
)
from perfpredict.counts import counted, first_names

if TYPE_CHECKING:  # imports numpy, which --help does not load
    from perfpredict.train import TrainReport


class Split(str, Enum):
    extrapolate = "extrapolate"
    fewshot = "fewshot"
    random = "random"
    time = "time"


class Protocol(str, Enum):
    store_cut = "store-cut"
    by_series = "by-series"


class LeaveOut(str, Enum):
    source = "source"
    system = "system"


class GroupBy(str, Enum):
    source = "source"
    app = "app"
    system = "system"
    distance = "distance"


class ReportFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


#: ``train`` and ``evaluate`` borrow alike, so that a backtest measures what training does.
NoBorrowBundled = Annotated[bool, typer.Option(
    "--no-borrow-bundled",
    help="Borrow nothing from the bundled data sets. By default a store of fewer than 8 "
         "strong-scaling applications borrows: its intervals are calibrated on their "
         "applications too and half of its correction is learned with them (all of it and "
         "the slope drift in a store of weak scaling alone; the laws, peers and estimates "
         "stay the store's own). Without borrowing, such intervals held too few runs in "
         "the store-cut backtests.")]


def train(
    ctx: typer.Context,
    app: Annotated[list[str] | None, typer.Option(
        "--app", help="Train only on these. The predictor trained replaces the store's, "
        "that of every application: those left out are fitted at each estimate.")] = None,
    fmt: Annotated[SummaryFormat, typer.Option(
        "--format", help="text: the summary for people; json: its figures as fields, "
        "for a script.")] = SummaryFormat.text,
    dask: Annotated[str | None, typer.Option(
        "--dask", metavar="SCHEDULER",
        help="Train on dask.distributed: a scheduler address, or 'local' for a cluster "
             "on this machine, one single-threaded worker per core ('local:N': N "
             "workers; the predictor depends on their number). Needs "
             "perfpredict\\[dask].")] = None,
    with_bundled: Annotated[bool, typer.Option(
        "--with-bundled",
        help="Train on the data sets shipped with perfpredict too ('perfpredict datasets "
             "list'), without storing them: a store with few runs of a code borrows how "
             "other HPC codes scaled. Those already loaded are not counted twice.")] = False,
    no_borrow_bundled: NoBorrowBundled = False,
) -> None:
    """Fit scaling laws, the overhead regressor and calibrated intervals on the store."""
    from perfpredict.cli.progress import elapsed_spinner
    from perfpredict.train import train as train_store

    store = ctx.obj.open_store(write=True)
    # not beside dask's workers, which write to this terminal past the spinner
    with elapsed_spinner(sys.stderr.isatty() and dask is None, "training"):
        report = train_store(store, stored_app_names(store, app) if app else None, dask,
                             with_bundled, not no_borrow_bundled)
    if fmt == SummaryFormat.json:
        print_json(report.as_dict())
        return
    typer.echo(report.headline())
    if report.bundled_datasets is not None:
        typer.echo(f"  of which {report.n_runs_bundled} from the bundled data sets, none "
                   f"counted twice beside the store's: "
                   f"{', '.join(report.bundled_datasets) or 'none'}")
    if report.base_law and report.apply_correction and report.calibrated_by and report.metrics:
        typer.echo(f"  runtime predictor: {report.n_series} series can be estimated, "
                   f"{report.n_series_learned_from} with 3+ scales taught the overhead "
                   "regressor")
        for kind, law in report.base_law.items():
            if not report.n_series_of(kind):
                continue  # no series of this kind: nothing was learned for it
            typer.echo(f"  {kind} scaling: base law {law}, learned correction "
                       f"{report.correction_state(kind)}, "
                       f"intervals calibrated by {report.calibrated_by[kind]}")
        typer.echo("  nested-extrapolation mean |log error|: law "
                   f"{report.metrics['nested_mean_abs_log_error_plain']:.3f}, hybrid "
                   f"{report.metrics['nested_mean_abs_log_error_hybrid']:.3f}")
        if report.dask_workers is not None:
            n = report.dask_workers
            typer.echo(f"  trained on {counted(n, 'dask worker')}: the trees "
                       "depend on their number, so the same number (--dask local:"
                       f"{report.dask_workers}, or a cluster of as many) trains this "
                       "predictor again")
        if report.own_correction_applications:
            typer.echo("  applications of 8 or more series learned half of their "
                       "correction from their own series alone: "
                       f"{', '.join(report.own_correction_applications)}")
        if report.borrowed_datasets is not None:
            typer.echo("  borrowed from the bundled data sets, the store having fewer than 8 "
                       f"strong-scaling applications (intervals calibrated on theirs too, "
                       f"{_learned_with_borrowed(report)}): "
                       f"{', '.join(report.borrowed_datasets) or 'none'}")
        if report.could_borrow_correction():
            typer.echo("  note: too few strong-scaling series to learn a correction, so "
                       "their estimates are the laws' mean, optimistic for codes that stop "
                       "scaling; train without --no-borrow-bundled learns half of one with "
                       "the bundled data sets, which did better in 19 of 20 backtests "
                       "of stores of four series (docs/accuracy.md)")
        if report.could_borrow_applications():
            typer.echo(f"  note: the correction was learned from {report.n_strong_applications} "
                       "strong-scaling applications, few to learn one that carries from "
                       "code to code; train --with-bundled learns it with the bundled "
                       "data sets' applications too, which in store-cut backtests "
                       "scored about the same on a store of four HPC codes and worse on "
                       "two other centers' benchmarks, CSC's and E3SM's (docs/accuracy.md); "
                       "compare the two on yours with perfpredict evaluate, with and without "
                       "--with-bundled")
        if report.could_learn_with_bundled():
            typer.echo(f"  note: {report.n_series_of('strong')} strong-scaling series of "
                       f"{report.n_strong_applications} applications, too few of each for "
                       "an application to learn its own correction or to weigh in with "
                       "other series of its input; in store-cut backtests of stores "
                       "like this train --with-bundled erred less with two series per "
                       "application and its intervals held with one (docs/accuracy.md); "
                       "compare the two on yours with perfpredict evaluate, with and "
                       "without --with-bundled")
        if report.could_borrow_for_weak_scaling():
            typer.echo("  note: weak scaling was learned beside fewer than 8 strong-scaling "
                       "applications from this store alone, where it errs most: in "
                       "store-cut backtests such a store's weak-scaling code erred about "
                       "three times as much as borrowing, and its intervals held 0.14-0.38 "
                       "of the runs instead of 0.99-1.0 (docs/accuracy.md); train without "
                       "--no-borrow-bundled learns its correction with the bundled data "
                       "sets")
        if report.strong_calibrated_by_series():
            typer.echo("  note: too few strong-scaling applications to calibrate their "
                       "intervals on applications left out, so they are calibrated by "
                       "series and may be too narrow beyond the measured range; "
                       "train without --no-borrow-bundled to calibrate them on the bundled "
                       "applications too (docs/accuracy.md)")
        if note := report.unstudied_note():
            typer.echo(f"  note: {note}")
        if replaced := report.replaced_applications:
            typer.echo(f"  note: this predictor replaced the store's, which had series of "
                       f"{counted(len(replaced), 'application')} --app left out "
                       f"({first_names(replaced)}): their series are fitted at each estimate "
                       "from now on, as runs ingested since training are; 'perfpredict "
                       "train' without --app trains every application")
    else:
        typer.echo(f"  runtime predictor: not trained: {report.untrained_because}")
    skipped = "".join(f"; {name} has too few jobs ({n})"
                      for name, n in report.walltime_skipped.items())
    if report.walltime_jobs:
        typer.echo(f"  walltime advisor: fitted on {report.walltime_jobs} scheduler jobs, "
                   f"one per system ({', '.join(report.walltime_systems)}){skipped}")
    elif skipped:
        typer.echo(f"  walltime advisor: not fitted{skipped}")


def _learned_with_borrowed(report: TrainReport) -> str:
    """What a store that borrows learned with the borrowed series
    (:meth:`perfpredict.model.fit.HybridPredictor._borrows_wholly`)."""
    if not report.n_strong_applications:
        return ("the correction and slope drift learned with them, as weak scaling learns "
                "from strong scaling")
    if report.n_series_of("weak"):
        return "half of strong scaling's correction and all of weak scaling's learned with them"
    return "half the correction learned with them"


def evaluate(
    ctx: typer.Context,
    split: Annotated[Split, typer.Option(
        help="extrapolate: lower half of each series' scales -> upper half; fewshot: 3 "
             "smallest -> rest; random: as many scales as extrapolate holds out, drawn "
             "at random (seeded) from all but the smallest; time: runs submitted up to "
             "the store's median submission time -> runs submitted after it (needs "
             "submit times).")
    ] = Split.extrapolate,
    protocol: Annotated[Protocol, typer.Option(
        help="store-cut: every tested series cut at once, one predictor trained on the "
             "cut store, nothing beyond a cut seen by anything (the use); by-series: "
             "cross-fitting, each fold predicted by a predictor trained on the other "
             "series in full (other applications already ran large). The time split "
             "is a store cut either way.")] = Protocol.store_cut,
    leave_out: Annotated[LeaveOut | None, typer.Option(
        help="Per data set (source) or system: train on that group cut and the rest "
             "of the store in full, then predict the group (transfer to a new center "
             "or machine). Replaces --protocol. Not with --split time, which cuts the "
             "whole store.")] = None,
    with_bundled: Annotated[bool, typer.Option(
        "--with-bundled",
        help="Add the bundled public data sets to every training pool, in full (never "
             "a series that is also in the store, so none is seen beyond its cut).")] = False,
    no_borrow_bundled: NoBorrowBundled = False,
    group_by: Annotated[GroupBy | None, typer.Option(
        help="Rows per ingested file (source), application, system, or band of distance "
             "beyond the largest scale each prediction knew (0-1, 1-2, 2-3, 3+ "
             "doublings; inside the measured range). Default: the --leave-out group, "
             "else source.", show_default=False)] = None,
    app: Annotated[list[str] | None, typer.Option(
        "--app", help="Backtest these applications alone (repeat for more): the rest of "
                      "the store is neither tested nor trained on.")] = None,
    confidence: Annotated[float, typer.Option(
        help="Confidence of the hybrid's intervals, whose coverage is measured; the "
             "verdict asks for a coverage within 0.05 of it.")] = 0.9,
    repeats: Annotated[int, typer.Option(
        help="Run the backtest N times with other seeds (the hybrid's, the folds, the "
             "random draws) and pool the predictions: one seed's figure says something "
             "about the seed. At most 100: each repeat is a whole backtest.")] = 1,
    seed: Annotated[int, typer.Option(help="The first seed.")] = 0,
    fmt: Annotated[ReportFormat, typer.Option(
        "--format", help="table: the verdicts, then every method; json, csv or "
        "markdown: every method's row per group, for a script or a report.")] = ReportFormat.table,
) -> None:
    """Backtest the hybrid against each law, Extra-P and black-box XGBoost on the store."""
    from perfpredict.evaluate import evaluate as run_evaluation
    from perfpredict.evaluate import grouping
    from perfpredict.evaluate.metrics import verdict_rows
    from perfpredict.figures import format_value
    from perfpredict.report.tables import markdown_table

    group = grouping(group_by.value if group_by else None,
                     leave_out.value if leave_out else None)
    store = ctx.obj.open_store()
    rows = run_evaluation(
        store, split.value, group_by=group, confidence=confidence,
        app=stored_app_names(store, app),
        repeats=repeats, protocol=protocol.value,
        leave_out=leave_out.value if leave_out else None, with_bundled=with_bundled,
        random_state=seed, borrow_bundled=not no_borrow_bundled)
    if fmt == ReportFormat.markdown:
        typer.echo(markdown_table(rows))
    elif fmt == ReportFormat.table:
        # what a reader looks for first, then every method's figures, to three digits;
        # a store of one source (or one application, system, band) has pooled figures
        # that repeat its own, which the verdicts keep for the pooled acceptance alone
        verdicts = verdict_rows(rows, label=group, confidence=confidence)
        one_group = len({r["group"] for r in rows} - {"all"}) == 1
        every_method = [r for r in rows if r["group"] != "all"] if one_group else rows
        for table, title in (
                (verdicts, f"The hybrid against the best single baseline, per "
                           f"{group} (%; coverage of the {confidence:.0%} "
                           f"intervals, series bootstrap)"),
                (every_method, "Every method")):
            print_rows([{k: format_value(v) for k, v in r.items()} for r in table], "table",
                       title=title)
    else:
        print_rows(rows, fmt.value)


datasets_app = typer.Typer(help="The real data sets shipped with perfpredict.",
                           no_args_is_help=True)


@datasets_app.command("list")
def datasets_list(
    ctx: typer.Context,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Name, description and file of each bundled data set, and whether the store holds
    it (an earlier release is replaced by 'datasets load')."""
    from perfpredict import datasets

    with ctx.obj.open_store() as store:
        print_rows(datasets.describe(store), fmt.value)


@datasets_app.command("load")
def datasets_load(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(
        metavar="[NAME]...", help="Data sets (default: all).")] = None,
) -> None:
    """Ingest bundled data sets into the store (idempotent). A data set corrected since
    the store loaded it replaces the runs of the earlier release."""
    from perfpredict import datasets

    store = ctx.obj.open_store(create=True, write=True)
    for r in datasets.ingest(store, names or list(datasets.NAMES)):
        state = "already loaded" if r.already_ingested else f"{r.n_stored} runs stored"
        if r.n_replaced:
            state += (f", replacing the {r.n_replaced} of an earlier release (retrain: "
                      "'perfpredict train')")
        typer.echo(f"{Path(r.path).parent.name}: {state}")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("evaluate")(evaluate)
    app.add_typer(datasets_app, name="datasets")

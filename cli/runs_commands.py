"""``perfpredict runs list|stats|rejects|export|batches|delete``"""

from __future__ import annotations

from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from perfpredict.cli.render import (
    TableFormat,
    TableFormatOption,
    print_json,
    print_rows,
    stored_app_names,
)
from perfpredict.counts import counted, first_names

if TYPE_CHECKING:
    from collections.abc import Iterator

    from perfpredict.store.batches import BatchesDeleted, Reread

runs_app = typer.Typer(help="List, summarise and export stored runs; take an ingested file "
                       "back out.", no_args_is_help=True)

#: The scale (nodes, or ranks where a benchmark table gives core counts) and the runtime
#: first, so that a table split at 80 columns keeps them with the run's name; the I/O
#: volume last, so that a Darshan log's ingest shows in the list what it gave its job.
LIST_COLUMNS = ["id", "app", "system", "problem_size", "nodes", "total_ranks", "runtime_s",
                "ranks_per_node", "threads_per_rank", "state", "job_id", "io_bytes"]

AppOption = Annotated[list[str] | None, typer.Option("--app", help="Only these applications.")]
BatchOption = Annotated[int | None, typer.Option(
    "--batch", metavar="ID", help="Only the runs this ingest batch stored ('perfpredict runs "
    "batches' lists them).")]


@runs_app.command("list")
def list_runs(
    ctx: typer.Context,
    app: AppOption = None,
    batch: BatchOption = None,
    limit: Annotated[int, typer.Option(min=0, help="At most this many runs.")] = 50,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Show stored runs in the order they were stored (by id: the order ingested, not
    when the jobs ran)."""
    from perfpredict.store.queries import iter_runs

    store = ctx.obj.open_store()
    _print_first(iter_runs(store, app=stored_app_names(store, app), limit=limit + 1,
                           batch=batch), limit,
                 fmt, LIST_COLUMNS, "run", "'perfpredict runs stats' counts them, "
                 "'perfpredict runs export' writes them all")


@runs_app.command("stats")
def stats(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(
        min=0, help="At most this many application and system rows in the table (csv and "
        "json give them all).")] = 50,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Counts of runs, applications, systems, ingest batches and rejects, per series."""
    from perfpredict.store.queries import run_stats

    summary = run_stats(ctx.obj.open_store())
    if fmt.value == "json":
        print_json(summary)
        return
    series = summary.pop("series")
    if fmt.value == "csv":
        print_rows(series, fmt.value)
        return
    # the bundled data sets alone make 1,032 rows (4,979 lines): the totals line scrolled away
    typer.echo(", ".join(f"{k[2:]}: {v}" for k, v in summary.items()))
    _print_first(iter(series), limit, fmt, list(series[0]) if series else [],
                 "application and system row", "--format csv lists them all")


@runs_app.command("rejects")
def list_rejects(
    ctx: typer.Context,
    file: Annotated[Path | None, typer.Option(
        "--file", help="Only the rejects of this ingested file.")] = None,
    limit: Annotated[int, typer.Option(min=0, help="At most this many rejects.")] = 50,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Show the records ingest kept as rejects (--on-error skip): file, line and reason."""
    from perfpredict.store.queries import REJECT_COLUMNS, iter_rejects

    _print_first(iter_rejects(ctx.obj.open_store(), path=file, limit=limit + 1),
                 limit, fmt, REJECT_COLUMNS, "reject", "'perfpredict runs stats' counts them")


@runs_app.command("export")
def export(
    ctx: typer.Context,
    app: AppOption = None,
    batch: BatchOption = None,
    fmt: TableFormatOption = TableFormat.csv,
) -> None:
    """Write every stored job to stdout: CSV (ingestable with 'ingest csv'), JSON or a table."""
    from perfpredict.store.queries import export_runs

    # one export for every format, so that JSON and the table carry the CSV's fields
    # (its run_key too, which JSON lacked); CSV and JSON stream the rows as read
    store = ctx.obj.open_store()
    export = export_runs(store, app=stored_app_names(store, app), batch=batch,
                         json_text=fmt != TableFormat.json)
    print_rows(export.rows, fmt.value, export.columns)


@runs_app.command("batches")
def batches(
    ctx: typer.Context,
    fmt: TableFormatOption = TableFormat.table,
    deleted: Annotated[bool, typer.Option(
        "--deleted", help="The batches deleted from the store instead: what each held, "
        "when it was ingested and deleted, and by whom.")] = False,
) -> None:
    """The ingested files, one ingest batch each: when and how each was read (its
    --system as system_option), how many of its runs and rejects the store holds, the
    systems its runs are in ('runs delete --batch ID' removes them) and the batches that
    stored those of its jobs an earlier file held (stored_from)."""
    if deleted:
        from perfpredict.store.batches import DELETED_COLUMNS, list_deleted_batches

        print_rows(list_deleted_batches(ctx.obj.open_store()), fmt.value, DELETED_COLUMNS)
        return
    from perfpredict.store.batches import BATCH_COLUMNS, list_batches

    print_rows(list_batches(ctx.obj.open_store()), fmt.value, BATCH_COLUMNS)


#: Files a delete names for ``ingest --reread``; more are counted.
REREADS_SHOWN = 3


@runs_app.command("delete")
def delete(
    ctx: typer.Context,
    batch: Annotated[list[int] | None, typer.Option(
        "--batch", min=1, metavar="ID", help="An ingest batch to delete (its id in "
        "'perfpredict runs batches'); repeat for several.")] = None,
    file: Annotated[list[Path] | None, typer.Option(
        "--file", metavar="PATH", help="Delete the batches that ingested this file, found "
        "by its content as ingest knows it (not by its name), with those of its earlier "
        "versions at its path that it grew from by lines appended or by lines they "
        "rejected fixed; repeat for several.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
) -> None:
    """Remove the runs and rejects an ingested file stored, and its record, so that it
    (or the right file) can be ingested again: a file read with the wrong --system, a
    table in the wrong unit. Asks first unless --yes."""
    from perfpredict.errors import BadInputError
    from perfpredict.store.batches import delete_batches

    store = ctx.obj.open_store(write=True)
    batches, files = batch or [], file or []
    if not yes:
        shown = delete_batches(store, batches, files=files, dry_run=True)
        _print_deleted(shown)
        try:
            confirmed = typer.confirm("Delete them?")
        except typer.Abort:  # no answer to read (a script's or cron's input at its end)
            typer.echo()  # ends the prompt's line, as an answer would have
            raise BadInputError("no answer to 'Delete them?' (the input ended); nothing "
                                "was deleted; pass --yes to delete without asking") from None
        if not confirmed:
            raise typer.Abort()
        # what was shown, even if a file changed meanwhile
        batches, files = [row["batch"] for row in shown.batches], []
    _print_deleted(delete_batches(store, batches, files=files))


def _print_deleted(deleted: BatchesDeleted) -> None:
    """What a delete removed (or would), then what the user may have to do about it."""
    verb = "would delete" if deleted.dry_run else "deleted"
    for row in deleted.batches:
        typer.echo(f"{verb} batch {row['batch']}: {row['file']} ({row['format']}, ingested "
                   f"{row['ingested']}): {counted(row['runs'], 'run')}, "
                   f"{counted(row['rejects'], 'reject')}")
    if deleted.systems:
        typer.echo(f"  {'would go' if deleted.dry_run else 'gone'} from the catalog too, as "
                   f"only these runs named them: {first_names(deleted.systems)}")
    deleted_file = "the deleted file" if len(deleted.batches) == 1 else "the deleted files"
    met = [reread for reread in deleted.rereads if reread.n_records is not None]
    if met:
        n_records = sum(reread.n_records or 0 for reread in met)
        _print_rereads(met, f"{counted(len(met), 'file')} held {counted(n_records, 'record')} "
                       f"of runs only {deleted_file} stored (a job two files hold is stored "
                       "once, from the first)")
    unrecorded = [reread for reread in deleted.rereads if reread.n_records is None]
    if unrecorded:
        _print_rereads(unrecorded, f"{counted(len(unrecorded), 'file')} ingested after "
                       f"{deleted_file} met runs already stored, which may be the deleted "
                       f"ones: named as {'it was' if len(unrecorded) == 1 else 'they were'} "
                       "ingested before the store recorded whose runs a file met")
    if deleted.trained_since_epoch_s is not None:
        from perfpredict.utc import utc_text

        typer.echo(f"  a predictor trained since ({utc_text(deleted.trained_since_epoch_s)}) "
                   "learned from these runs and answers with them until you run "
                   "'perfpredict train' again")
    if not deleted.dry_run:
        typer.echo(f"  {'the file' if len(deleted.batches) == 1 else 'the files'} can be "
                   "ingested again")


def _print_rereads(rereads: list[Reread], why: str) -> None:
    """The ``ingest --reread`` commands that store what ``rereads`` hold of the deleted
    runs, a few of many (``why``: how they met them)."""
    from perfpredict.ingest.records import reread_command

    commands = [reread_command(r.format, r.path, r.system) for r in rereads]
    typer.echo(f"  {why}; to store them from there: " + first_names(
        commands, shown=REREADS_SHOWN, sep="; ", where="'perfpredict runs batches' lists them"))


def _print_first(rows: Iterator[dict[str, Any]], limit: int, fmt: TableFormat,
                 columns: list[str], noun: str, elsewhere: str) -> None:
    """The first ``limit`` of ``rows`` (read one over, to tell), and under a table a note
    that there are more (``noun``: one row, singular; ``elsewhere``: what counts or writes
    them all): a table of the first 50 of 17,226 runs must not read as the whole store.
    CSV and JSON are written as the rows are read: held whole, ``--limit 1000000 --format
    csv`` peaked at 1.5 GB."""
    rows = chain(list(islice(rows, 1)), rows)  # its refusal (an unknown app) before output
    if fmt != TableFormat.table:
        print_rows(islice(rows, limit), fmt.value, columns)
        return
    listed = list(islice(rows, limit + 1))
    print_rows(listed[:limit], fmt.value, columns)
    if len(listed) > limit:
        typer.echo(f"the first {counted(limit, noun)}; --limit N shows more, {elsewhere}",
                   err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")

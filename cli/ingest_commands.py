"""``perfpredict ingest FORMAT PATH...``"""

from __future__ import annotations

import shlex
import sys
from contextlib import ExitStack
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from perfpredict.cli.render import SummaryFormat
from perfpredict.counts import counted, first_names
from perfpredict.ingest.registry import FORMATS

if TYPE_CHECKING:
    from perfpredict.ingest.pipeline import BatchReport

_FORMAT_HELP = f"Input format: {', '.join(FORMATS)}."
IngestFormat = Enum("IngestFormat", {name: name for name in FORMATS}, type=str)  # type: ignore[misc]


#: Options of the parsers that 'advise walltime' reads its jobs with too.
TimezoneOption = Annotated[str, typer.Option(
    help="Time zone of timestamps written without one (sacct, jobcomp, csv); sacct with "
    "TZ=UTC is best.")]
SwfExtraFieldsOption = Annotated[bool, typer.Option(
    "--swf-allow-extra-fields",
    help="swf: read rows with more than 18 fields (variants such as Alea's) using the "
    "first 18.")]


class OnError(str, Enum):
    fail = "fail"
    skip = "skip"


def ingest(
    ctx: typer.Context,
    fmt: Annotated[IngestFormat, typer.Argument(metavar="FORMAT", help=_FORMAT_HELP)],
    paths: Annotated[list[Path], typer.Argument(
        metavar="PATH...",
        help="Files to ingest (gzip is read as is); - (standard input) or a pipe is copied "
        "to a temporary file first.")],
    system: Annotated[str | None, typer.Option(help="System name for records without one.")] = None,
    on_error: Annotated[OnError, typer.Option(
        help="fail: refuse a file with a bad record, storing nothing from it. skip: store the "
        "good records, keep bad ones in the rejects table.")] = OnError.fail,
    timezone: TimezoneOption = "UTC",
    columns: Annotated[str | None, typer.Option(
        help="sacct without a header line: the --format field list it was made with, "
        "comma separated.")] = None,
    app_from: Annotated[str, typer.Option(
        help="Scheduler and Darshan logs: where the application name comes from: "
        "jobname, comment (sacct's Comment, sacct-json's comment.job; where a log has "
        "none, the job name) or regex:PATTERN (first group, applied to the job name, a "
        "Darshan log's executable).")] = "jobname",
    swf_allow_extra_fields: SwfExtraFieldsOption = False,
    reread: Annotated[bool, typer.Option(
        "--reread", help="Read files already ingested again, storing only what the store "
        "lacks: records an earlier perfpredict dropped or rejected.")] = False,
    output: Annotated[SummaryFormat, typer.Option(
        "--format", help="The summary's format. json: a list with an object per file "
        "stored, printed also when a later file is refused.")] = SummaryFormat.text,
) -> None:
    """Ingest benchmark results, scheduler accounting or Darshan logs into the store.

    Re-ingesting a file stores nothing twice, nor does one grown by lines appended (the
    same path, or piped in again) store its earlier rows again; identical rows without a
    job id in another file are repeated measurements and are kept. Jobs not finished yet
    (pending, running) are skipped and counted. A bad record refuses the whole file (exit
    2, file and line named) unless --on-error skip.
    """
    from perfpredict.cli.progress import record_counter
    from perfpredict.ingest import IngestOptions, ingest_paths

    options = IngestOptions(
        system=system, on_error=on_error.value, timezone=timezone,
        columns=[c.strip() for c in columns.split(",")] if columns else None,
        app_from=app_from, swf_allow_extra_fields=swf_allow_extra_fields, reread=reread,
    )
    store = ctx.obj.open_store(create=True, write=True)
    if output == SummaryFormat.json:
        from perfpredict.cli.render import print_json

        stored: list[dict[str, Any]] = []
        with ExitStack() as at_exit:
            # printed also when a later file is refused (exit 2): the files before it
            # are stored, and a script must be told which, as the text summary tells
            at_exit.callback(lambda: print_json(stored))
            ingest_paths(store, fmt.value, paths, options,
                         on_report=lambda report: stored.append(report.as_dict()))
        return
    with record_counter(enabled=sys.stderr.isatty()) as progress:
        ingest_paths(store, fmt.value, paths, options, progress,
                     on_report=progress.printing(_print_report) if progress else _print_report)


def _print_report(r: BatchReport) -> None:
    """One file's summary, printed as soon as it is stored: a later file's error must
    not hide what the earlier ones stored. Warnings go to stderr, which a nightly cron
    job mails, where its summaries are logged."""
    if r.already_ingested:
        again = (f", {r.n_rejected_earlier} rejected then); nothing stored; --reread reads "
                 "it again once what rejected them is fixed (an option such as --system, or "
                 "a newer perfpredict)." if r.n_rejected_earlier else "); nothing stored.")
        typer.echo(f"{r.path}: already ingested ({counted(r.n_duplicates, 'record')}{again}")
        for warning in r.warnings:  # the records the store lacks since a delete
            typer.echo(f"Warning: {r.path}: {warning}", err=True)
        return
    skipped = f", {counted(r.n_unfinished, 'non-terminal job')} skipped" if r.n_unfinished else ""
    joined = (f" ({r.n_joined_io} with the I/O of Darshan logs stored before them)"
              if r.n_joined_io else "")
    filled = (f" ({r.n_filled} of them given fields they lacked)" if r.n_filled else "")
    fixed = unchanged = ""
    if r.fixed_from_batch is not None:
        # what the rejection asked for (fix the line, ingest the file again) stores the
        # line fixed alone, and the user sees that it did
        lines = first_names([str(line_no) for line_no in r.fixed_lines])
        fixed = (f" ({'line' if len(r.fixed_lines) == 1 else 'lines'} {lines}, rejected by "
                 f"batch {r.fixed_from_batch})" if r.fixed_lines else "")
        unchanged = f" (unchanged since batch {r.fixed_from_batch})"
    typer.echo(
        f"{r.path}: {counted(r.n_records, 'record')}, {r.n_stored} stored{fixed}{joined}, "
        f"{r.n_duplicates} already in the store{unchanged}{filled}, {r.n_attached} attached "
        f"to stored jobs, {r.n_rejected} rejected{skipped}."
    )
    for warning in r.warnings:
        typer.echo(f"Warning: {r.path}: {warning}", err=True)
    for rej in r.first_rejects:
        where = f" line {rej['line_no']}" if rej["line_no"] is not None else ""
        typer.echo(f"  rejected{where}: {rej['reason']}")
    if r.n_rejected > len(r.first_rejects):
        typer.echo(f"  and {r.n_rejected - len(r.first_rejects)} more rejected; all of them: "
                   f"perfpredict runs rejects --file {shlex.quote(r.path)}")
    if r.n_rejected and r.n_records:  # a reject of the whole file names its own fix
        typer.echo(f"  fix the {'line' if r.n_rejected == 1 else 'lines'} and ingest the file "
                   "again: only what was rejected is stored then")
    if r.catalog_names:
        renamed = first_names([f"{given} as {stored}" for given, stored
                               in r.catalog_names.items()])
        typer.echo(f"  stored under the catalog's names for them: {renamed} ('perfpredict "
                   "systems show NAME' says what each is)")
    if r.new_systems:
        # an export of a store read into a fresh one names hundreds (MLPerf's 430), and
        # --format json gives the whole list
        named = first_names(r.new_systems, where="'perfpredict systems list' lists them, "
                            "origin ingest")
        typer.echo(f"  new systems (not in the catalog yet): {named}; "
                   "complete them with 'perfpredict systems add FILE.toml'")


def register(app: typer.Typer) -> None:
    app.command("ingest", no_args_is_help=True)(ingest)

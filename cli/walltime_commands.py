"""``perfpredict advise walltime``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from perfpredict.cli.ingest_commands import SwfExtraFieldsOption, TimezoneOption
from perfpredict.cli.render import TableFormat
from perfpredict.ingest.registry import JOB_FORMATS

COLUMNS = ("job_id", "walltime_s", "slurm_time", "predicted_runtime_s", "kill_risk",
           "kill_probability", "expected_runtime_over_walltime", "requested_walltime_s",
           "capped_at_request", "request_kill_probability", "request_likely_too_short",
           "queue_max_walltime_s", "capped_by_queue", "request_above_queue_limit",
           "time_min_kill_risk", "time_min_s", "time_min_slurm", "time_min_kill_probability",
           "no_queue_takes_nodes")


JobsFormat = Enum("JobsFormat", {name: name for name in JOB_FORMATS}, type=str)  # type: ignore[misc]


def walltime(
    ctx: typer.Context,
    input_path: Annotated[Path, typer.Option(
        "--input", help="Jobs about to be submitted (a log or a CSV; - reads standard "
        "input); read, not stored.")],
    input_format: Annotated[JobsFormat | None, typer.Option(
        metavar="FORMAT",
        help=f"Format of --input: {', '.join(JOB_FORMATS[:-1])} or {JOB_FORMATS[-1]}, read "
        "by the same parser as 'ingest' (default: told by the file's name, else its first "
        "record).")] = None,
    kill_risk: Annotated[float, typer.Option(
        help="Share of such jobs that may outrun the advised walltime.")] = 0.05,
    time_min_kill_risk: Annotated[float | None, typer.Option(
        help="Also advise each job a time-min (Slurm --time-min): the shortest limit the "
        "scheduler may cut its walltime to so that it starts sooner in a backfill hole, "
        "at which at most this share of such jobs would be killed (larger than "
        "--kill-risk, e.g. 0.25). Default: none.")] = None,
    allow_above_request: Annotated[bool, typer.Option(
        "--allow-above-request",
        help="Let the advice exceed a job's own request wherever a longer walltime is "
             "worth its kill risk at the price --kill-risk sets. Without it the advice "
             "never exceeds the request, not even where the request is likely too short "
             "(such a request is flagged).")
    ] = False,
    system: Annotated[str | None, typer.Option(
        help="System of the jobs when the file does not say (the name used at ingest).")
    ] = None,
    swf_allow_extra_fields: SwfExtraFieldsOption = False,
    timezone: TimezoneOption = "UTC",
    output: Annotated[TableFormat, typer.Option(
        "--format", metavar="FORMAT", help="table, json or csv.")] = TableFormat.table,
) -> None:
    """Walltime to request per job, so that at most --kill-risk of such jobs are killed.

    Uses only what is known at submission: the request, user, account, application and the
    store's earlier jobs. Never above the job's own request unless --allow-above-request,
    nor above the longest queue limit for the job's node count where the catalog lists
    the system's queues ('perfpredict systems add FILE.toml').
    Uses the advisor 'train' saved, or fits one from the store. The summary (on stderr for
    csv and json) gives the expected kill share and the allocation the advice frees.
    With --time-min-kill-risk, each job also gets a time-min, for backfill.
    """
    from perfpredict.advise.walltime import advise_walltime
    from perfpredict.cli.render import print_rows

    advice = advise_walltime(ctx.obj.open_store(), str(input_path),
                             input_format=input_format and input_format.value,
                             kill_risk=kill_risk, time_min_kill_risk=time_min_kill_risk,
                             system=system, allow_above_request=allow_above_request,
                             swf_allow_extra_fields=swf_allow_extra_fields,
                             timezone=timezone)
    if output is TableFormat.table:
        print_rows([_table_row(r) for r in advice.rows], "table",
                   _table_columns(time_min_kill_risk is not None),
                   title="Advised walltimes")
    else:
        print_rows(advice.rows, output.value, COLUMNS)
    typer.echo(summary_text(advice.summary), err=output is not TableFormat.table)
    for warning in advice.warnings:  # as ingest's, on stderr, naming the file
        typer.echo(f"Warning: {warning}", err=True)


#: The table a person reads, narrow enough for 80 columns; csv and json carry every field.
TABLE_COLUMNS = ("job", "--time", "kill %", "predicted", "request", "note")
#: Added with --time-min-kill-risk: the time-min and its kill probability.
TIME_MIN_TABLE_COLUMNS = ("--time-min", "min kill %")


def _table_columns(time_min: bool) -> tuple[str, ...]:
    """The table's columns; with a time-min, its two beside the walltime it shortens (a
    table wider than the terminal goes on below, and they were left there alone)."""
    if not time_min:
        return TABLE_COLUMNS
    after = TABLE_COLUMNS.index("kill %") + 1
    return TABLE_COLUMNS[:after] + TIME_MIN_TABLE_COLUMNS + TABLE_COLUMNS[after:]


def _table_row(row: dict[str, Any]) -> dict[str, Any]:
    from perfpredict.advise.walltime import slurm_time
    from perfpredict.durations import clock_text

    request = row["requested_walltime_s"]
    if row["no_queue_takes_nodes"]:
        note = "no queue takes it"
    elif row["request_above_queue_limit"]:
        note = "request over limit"
    elif row["capped_by_queue"]:
        note = "at queue limit"
    elif row["request_likely_too_short"]:
        note = f"request too short? {row['request_kill_probability']:.0%}"
    elif request is not None and row["walltime_s"] > request:
        note = "above request"
    elif row["capped_at_request"]:
        note = "at request"
    else:
        note = ""
    time_min_p = row["time_min_kill_probability"]
    return {"job": row["job_id"], "--time": row["slurm_time"],
            "kill %": f"{row['kill_probability']:.1%}",
            "predicted": clock_text(row["predicted_runtime_s"]),
            "request": "" if request is None else slurm_time(request), "note": note,
            "--time-min": row["time_min_slurm"],
            "min kill %": None if time_min_p is None else f"{time_min_p:.1%}"}


def _jobs(n: int) -> str:
    """``1 job``, ``3 jobs``."""
    return f"{n} job" if n == 1 else f"{n} jobs"


def summary_text(summary: dict[str, Any]) -> str:
    """The summary as sentences, wrapped for an 80-column terminal."""
    import textwrap

    lines = [
        f"{_jobs(summary['n_jobs'])} at --kill-risk {summary['kill_risk']:g}: expected kill "
        f"share {summary['expected_kill_share']:.1%}.",
    ]
    if summary["n_without_request"] == summary["n_jobs"]:
        # an SWF trace's -1 for every job (NASA-iPSC): the reservation and the counts
        # against requests had said nothing, or "kept at their request: 0", unexplained
        lines.append("No job gives a requested walltime, so the advice cannot be compared "
                     "with a request (neither the reservation it frees nor the jobs kept "
                     "at or advised above their request).")
    elif summary["requested_hours"]:
        # advised above the requests (--allow-above-request), "-3465% freed" said nothing
        share = (f"{summary['freed_share']:.0%} freed" if summary["freed_share"] >= 0 else
                 f"{summary['advised_hours'] / summary['requested_hours']:.3g} times as "
                 "much, advised above the requests")
        lines.append(
            f"Reserved {summary['advised_hours']:,.0f} {summary['reserved_unit']} against "
            f"the requests' {summary['requested_hours']:,.0f} ({share}).")
    if summary["n_without_request"] < summary["n_jobs"]:
        lines.append(_requests_text(summary))
    if summary["time_min_kill_risk"] is not None:
        lines.append(
            f"Time-min at --time-min-kill-risk {summary['time_min_kill_risk']:g} (Slurm "
            "--time-min: the shortest limit the scheduler may cut a walltime to, to start "
            f"the job sooner): below the walltime for {summary['n_time_min_shorter']} of "
            f"{_jobs(summary['n_jobs'])}; expected kill share if every job is cut to it: "
            f"{summary['time_min_expected_kill_share']:.1%}.")
    if summary["n_without_submit_time"]:
        lines.append(
            f"Without a submit time: {summary['n_without_submit_time']}, each advised as if "
            "submitted now, after every stored job; a replayed log's jobs need theirs (an "
            "SWF file's come from its UnixStartTime header line).")
    if summary["n_capped_by_queue"]:
        lines.append(
            f"warning: {_jobs(summary['n_capped_by_queue'])} capped at the longest queue "
            "limit for their node count (the catalog's), above which a job may pend "
            "forever; their kill probability is the one at that limit, not --kill-risk.")
    if summary["n_request_above_queue_limit"]:
        lines.append(
            f"warning: {_jobs(summary['n_request_above_queue_limit'])} with a request above "
            f"every queue limit for their node count (first: job "
            f"{summary['first_request_above_queue_limit']}): with their own request they "
            "may pend forever; the advice keeps within the limit.")
    if summary["n_nodes_no_queue_takes"]:
        lines.append(
            f"warning: {_jobs(summary['n_nodes_no_queue_takes'])} at a node count no queue "
            f"takes (first: job {summary['first_nodes_no_queue_takes']}): they may "
            "pend forever.")
    return "\n".join(textwrap.fill(line, 79) for line in lines)


def _requests_text(summary: dict[str, Any]) -> str:
    """How the advice stands to the jobs' requests: kept at them and why, likely too
    short, above them, and the jobs without one."""
    at_queue_limit = (f"{summary['n_kept_at_queue_limit']} because their queue's limit is "
                      "there, " if summary["n_kept_at_queue_limit"] else "")
    return (
        f"Kept at their request: {summary['n_kept_at_request']} "
        f"({summary['n_kept_request_likely_too_short']} because the request is likely too "
        f"short, {at_queue_limit}the rest because nothing shorter meets the risk); "
        "requests likely too "
        f"short: {summary['n_request_likely_too_short']}; advised above the request: "
        f"{summary['n_above_request']}; without a request: "
        f"{summary['n_without_request']}.")


def register(advise_app: typer.Typer) -> None:
    advise_app.command("walltime", no_args_is_help=True)(walltime)

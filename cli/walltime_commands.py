"""``perfpredict advise walltime``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from perfpredict.cli.render import TableFormat

COLUMNS = ("job_id", "walltime_s", "slurm_time", "predicted_runtime_s", "kill_risk",
           "kill_probability", "expected_runtime_over_walltime", "requested_walltime_s",
           "capped_at_request")


class JobsFormat(str, Enum):
    swf = "swf"
    sacct = "sacct"
    csv = "csv"


def walltime(
    ctx: typer.Context,
    input_path: Annotated[Path, typer.Option(
        "--input", help="Jobs about to be submitted (a log or a CSV); read, not stored.")],
    input_format: Annotated[JobsFormat | None, typer.Option(
        help="Format of --input, read by the same parser as 'ingest' (default: told by the "
        "file's name, else its first line).")] = None,
    kill_risk: Annotated[float, typer.Option(
        help="Share of such jobs that may outrun the advised walltime.")] = 0.05,
    system: Annotated[str | None, typer.Option(
        help="System of the jobs when the file does not say (the name used at ingest).")
    ] = None,
    output: Annotated[TableFormat, typer.Option("--format", help="Output format.")
                      ] = TableFormat.table,
) -> None:
    """Walltime to request per job, so that at most --kill-risk of such jobs are killed.

    Uses only what is known at submission: the request, user, account, application and the
    store's earlier jobs. Never above the job's own request. Uses the advisor 'train' saved,
    or fits one from the store.
    """
    from perfpredict.advise.walltime import advise_walltime
    from perfpredict.cli.render import print_rows

    rows = advise_walltime(ctx.obj.open_store(), str(input_path),
                           input_format=input_format and input_format.value,
                           kill_risk=kill_risk, system=system)
    print_rows(rows, output.value, COLUMNS, title="Advised walltimes")


def register(advise_app: typer.Typer) -> None:
    advise_app.command("walltime", no_args_is_help=True)(walltime)

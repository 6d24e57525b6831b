"""``perfpredict estimate``: in a module of its own, so that an estimate builds its own
command alone (``cli/app.py`` builds a command module's commands when one is invoked);
building ``train``'s, ``evaluate``'s and ``datasets``' beside it cost about 2.5 ms of
its start-up, against issue 5's budget of twice ``import numpy``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfpredict.cli.render import TableFormat, print_json, print_rows, whole_output
from perfpredict.counts import counted

if TYPE_CHECKING:
    from perfpredict.estimate.explain import Explanation


def estimate(
    ctx: typer.Context,
    app: Annotated[str | None, typer.Option(help="Application name.")] = None,
    nodes: Annotated[int | None, typer.Option(help="Node count to predict.")] = None,
    system: Annotated[str | None, typer.Option(help="System name.")] = None,
    problem_size: Annotated[str | None, typer.Option(help="Problem size label.")] = None,
    variant: Annotated[str | None, typer.Option(
        help="Configuration that tells series apart (build, input parameters).")] = None,
    ranks_per_node: Annotated[float | None, typer.Option(help="MPI ranks per node.")] = None,
    threads_per_rank: Annotated[float | None, typer.Option(help="Threads per rank.")] = None,
    io_bytes: Annotated[float | None, typer.Option(
        help="Bytes the run reads + writes: I/O time from the catalog's file-system "
        "bandwidth. Default: what the series' runs recorded (Darshan, disk counters), "
        "if any.")] = None,
    net_bytes: Annotated[float | None, typer.Option(
        help="Bytes the run sends over the network, all nodes together: network time "
        "from the catalog's injection bandwidth.")] = None,
    flops: Annotated[float | None, typer.Option(
        help="Floating-point operations of the run (FP64): a compute roof from the "
        "catalog's peak flop rate.")] = None,
    mem_bytes: Annotated[float | None, typer.Option(
        help="Bytes the run moves to and from memory: a memory roof from the catalog's "
        "memory bandwidth.")] = None,
    input_csv: Annotated[Path | None, typer.Option(
        "--input", help="CSV of queries (app, nodes, ...; - reads standard input): one "
        "output row per input row, ending with the notes the estimate of its query "
        "prints.")] = None,
    confidence: Annotated[float, typer.Option(
        help="Interval confidence level, at most 0.9998 (the widest intervals).")] = 0.9,
    fmt: Annotated[TableFormat | None, typer.Option(
        "--format", help="table, json or csv \\[default: table]; with --input, csv (the "
        "default there) or json.", show_default=False)] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show how the estimate was made, step by step: each member "
        "law's runtime, their geometric mean, then each factor (the move onto the "
        "measured runs, the learned correction, the peers' speed-up and weight) up to the "
        "estimate and its interval; in json as 'explanation'. One query, table or "
        "json.")] = False,
) -> None:
    """Predict the runtime of APP at NODES with an interval, speedup and efficiency."""
    from perfpredict.durations import format_seconds
    from perfpredict.errors import BadInputError
    from perfpredict.estimate import estimate as estimate_one
    from perfpredict.estimate.lookup import Query, option_name
    from perfpredict.percent import efficiency_percent
    from perfpredict.report.tables import confidence_percent

    if explain and input_csv is not None:
        raise BadInputError("--explain explains one query, and --input answers a file of "
                            "them; drop --explain, or ask for one query with --app and "
                            "--nodes")
    if input_csv is not None:
        # each row is a whole query: an option beside the file would be dropped unseen
        given = [option for option, value in (
            ("--app", app), ("--nodes", nodes), ("--system", system),
            ("--problem-size", problem_size), ("--variant", variant),
            ("--ranks-per-node", ranks_per_node), ("--threads-per-rank", threads_per_rank),
            ("--io-bytes", io_bytes), ("--net-bytes", net_bytes), ("--flops", flops),
            ("--mem-bytes", mem_bytes)) if value is not None]
        if given:
            raise BadInputError(f"--input takes every query from the file, so "
                                f"{', '.join(given)} would be ignored; put "
                                f"{'it' if len(given) == 1 else 'them'} in the file's "
                                "columns (app, nodes, system, problem_size, variant, "
                                "ranks_per_node, threads_per_rank, io_bytes, net_bytes, "
                                "flops, mem_bytes) instead")
        from perfpredict.estimate import estimate_batches  # a batch's alone: 3 ms of each one

        if fmt == TableFormat.table:  # said, not defaulted: a CSV in its place would surprise
            raise BadInputError("--input writes one row per query as csv (the default) or "
                                "json; pass --format csv or --format json")
        # answered and rendered a chunk of queries at a time: 1M queries held 1.3 GiB at once
        batch = estimate_batches(ctx.obj.url_to_read(), input_csv, confidence)
        with whole_output():
            if fmt == TableFormat.json:  # one object per query, in the file's order
                print_rows(batch.records(), "json", batch.columns)
            else:  # a table of 100k rows is a CSV: the format scripts read (DESIGN.md)
                from perfpredict.report.csv_rows import write_csv_cells

                write_csv_cells(sys.stdout, batch.columns, batch.rows(), float_format=".6g")
        return
    if app is None or nodes is None:
        raise BadInputError("pass --app and --nodes (or --input queries.csv)")
    result = estimate_one(ctx.obj.url_to_read(), Query(
        app=app, nodes=nodes, system=system, problem_size=problem_size, variant=variant,
        ranks_per_node=ranks_per_node, threads_per_rank=threads_per_rank, io_bytes=io_bytes,
        net_bytes=net_bytes, flops=flops, mem_bytes=mem_bytes, field_name=option_name),
        confidence, explain)
    if fmt == TableFormat.json:
        print_json(result.as_dict())
    elif fmt == TableFormat.csv:
        print_rows([result.as_csv_row()], "csv")
    else:
        pct = confidence_percent(confidence)
        typer.echo(f"{result.series}")
        typer.echo(f"  {counted(nodes, 'node')}: "
                   f"{format_seconds(result.predicted_runtime_s)} s "
                   f"({pct} interval {format_seconds(result.lower_runtime_s)} - "
                   f"{format_seconds(result.upper_runtime_s)} s)")
        smallest = result.measured_scales[0]
        unit = result.scale_unit.removesuffix("s") if smallest == 1 else result.scale_unit
        baseline = f"{smallest:g} {unit}"
        efficiency = efficiency_percent(result.efficiency)
        if result.scaling == "weak":
            typer.echo(f"  weak-scaling efficiency {efficiency} (runtime at {baseline} "
                       "over this runtime)")
        else:
            typer.echo(f"  speedup {result.speedup:.2f}x, parallel efficiency "
                       f"{efficiency} against {baseline}")
        typer.echo(f"  law: {result.formula}; overhead coefficient "
                   f"{result.overhead_coefficient:.3f}")
        if result.breakdown_s:
            typer.echo("  breakdown: " + ", ".join(
                f"{k[:-2]} {format_seconds(v)} s" for k, v in result.breakdown_s.items()))
        typer.echo(f"  rests on {result.n_runs} runs at "
                   f"{', '.join(f'{s:g}' for s in result.measured_scales)} {result.scale_unit}")
        for note in result.notes:
            typer.echo(f"  note: {note}")
        if result.explanation is not None:
            _echo_explanation(result.explanation, pct)


def _echo_explanation(explanation: Explanation, pct: str) -> None:
    """The chain of ``estimate --explain``: one line per member and per step, the
    runtime after each, so that a reader can multiply it out."""
    from perfpredict.estimate.explain import runtime_text
    from perfpredict.model.base_estimate import LAW_LABELS

    x = explanation
    unit = x.scale_unit.removesuffix("s") if x.scale == 1 else x.scale_unit
    typer.echo(f"  how it was made at {x.scale:g} {unit} (each step multiplies the runtime "
               "before it):")
    for member in x.members:
        typer.echo(f"    {LAW_LABELS[member.law]:<16} {runtime_text(member.runtime_s):>12}  "
                   f"{member.formula}")
    typer.echo(f"    {'base':<16} {runtime_text(x.base_runtime_s):>12}  the geometric mean of "
               f"the {len(x.members)} above")
    for step in x.steps:
        typer.echo(f"    {step.step.replace('_', ' '):<16} {runtime_text(step.runtime_s):>12}  "
                   f"x {step.factor:.4g}: {step.detail}")
        if step.step == "peers":
            for peer in x.peers:
                typer.echo(f"      peer (weight {peer.weight:.2f}, speed-up "
                           f"{peer.speedup:.4g}x): {peer.series}")
    typer.echo(f"    {'estimate':<16} {runtime_text(x.predicted_runtime_s):>12}  {pct} interval "
               f"{runtime_text(x.lower_runtime_s)} - {runtime_text(x.upper_runtime_s)} (x "
               f"{x.lower_factor:.4g} to x {x.upper_factor:.4g}): {x.interval_detail}")


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate)

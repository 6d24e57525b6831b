"""``perfpredict advise``: node counts and proposal tables (the group's own callback),
``advise walltime`` and ``advise next-runs``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from perfpredict.cli.render import TableFormat, TableFormatOption

advise_app = typer.Typer(
    help="Advice from predictions: node counts, walltimes, allocation tables.",
    invoke_without_command=True,
)


class Objective(str, Enum):
    fastest = "fastest"
    cheapest = "cheapest"
    balanced = "balanced"


class AdviceFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    latex = "latex"
    csv = "csv"


class Scheduler(str, Enum):
    sbatch = "sbatch"
    pbs = "pbs"


AppOption = Annotated[str | None, typer.Option("--app", help="Application name.")]
SystemOption = Annotated[str | None, typer.Option(
    help="System the runs were measured on (narrows the series; also looked up in the "
    "catalog for queues, granularity and charge).")]
SizeOption = Annotated[str | None, typer.Option(help="Problem size label.")]
VariantOption = Annotated[str | None, typer.Option(
    help="Configuration that tells series apart (build, input parameters).")]
RanksOption = Annotated[float | None, typer.Option(
    help="MPI ranks per node (needed for series measured in ranks).")]
ThreadsOption = Annotated[float | None, typer.Option(help="Threads per rank.")]


def advise(
    ctx: typer.Context,
    app: AppOption = None,
    system: SystemOption = None,
    problem_size: SizeOption = None,
    variant: VariantOption = None,
    ranks_per_node: RanksOption = None,
    threads_per_rank: ThreadsOption = None,
    runs: Annotated[int, typer.Option(
        help="Production runs to budget for (1 to 1000000).")] = 1,
    run_class: Annotated[list[str] | None, typer.Option(
        "--run-class", metavar="CLASS",
        help="A class of production run to budget for, as LABEL=NODESxRUNS: largest=512x10 "
        "is 10 runs on 512 nodes; repeat it for each class (largest, typical, smallest "
        "job). Each is predicted and priced as the recommendation is, and the requested "
        "resources list the classes and their total instead of the recommendation at "
        "--runs.")] = None,
    periods: Annotated[int, typer.Option(
        help="Allocation periods to split the totals over, evenly (ARCHER2: 2 half-years, "
        "LCRC: 4 quarters), as centers take back hours a period leaves unused (1 to "
        "120; 1: no split).")] = 1,
    period_label: Annotated[str, typer.Option(
        help="What one period is called in the tables, e.g. quarter or '6 months'.")
    ] = "period",
    objective: Annotated[Objective, typer.Option(
        metavar="OBJECTIVE",
        help="fastest, cheapest or balanced: how to choose among the node counts that meet "
             "the efficiency floor.")
    ] = Objective.fastest,
    min_efficiency: Annotated[float | None, typer.Option(
        help="Parallel-efficiency floor against the smallest measured configuration "
        "(weak-scaling efficiency for a weak-scaling series; default 0.7, unless a speedup "
        "floor per doubling is given).")] = None,
    min_speedup_per_doubling: Annotated[float | None, typer.Option(
        help="Speedup floor per doubling of nodes (Notur: 1.5, 1.4, 1.3); for a "
        "weak-scaling series, the throughput gained per doubling.")] = None,
    max_nodes: Annotated[int | None, typer.Option(
        help="Largest node count to consider (default: the system's size from the catalog, "
        "else 16x the largest measured).")] = None,
    nodes: Annotated[int | None, typer.Option(
        help="Node count you have chosen: the walltime, node-hours, proposal tables, plot "
        "and --emit script are for it, the node counts swept shown beside it with the one "
        "advise would choose; a warning says where it fails the efficiency floor or no "
        "queue takes it.")] = None,
    kill_risk: Annotated[float, typer.Option(
        help="Share of runs that may outlive the advised walltime.")] = 0.05,
    time_min_kill_risk: Annotated[float | None, typer.Option(
        help="Also advise a time-min (Slurm --time-min, PBS min_walltime): a shorter limit "
        "the scheduler may cut the walltime to so that the job starts sooner, at which "
        "this share of runs would be killed (larger than --kill-risk, e.g. 0.25). "
        "Default: none.")] = None,
    signal_lead: Annotated[str | None, typer.Option(
        metavar="DURATION",
        help="Signal the job this long before its limit to checkpoint (Slurm "
        "--signal=B:USR1@LEAD): seconds (600) or [DD-[HH:]]MM:SS (10:00), at most a fifth "
        "of the shortest limit the job may be given. Default: 600 s (or a fifth of the "
        "limit) for a run chained across jobs, else no signal.")] = None,
    confidence: Annotated[float, typer.Option(
        help="Interval confidence level, at most 0.9998 (the widest intervals).")] = 0.9,
    fmt: Annotated[AdviceFormat, typer.Option(
        "--format", metavar="FORMAT",
        help="table, json, markdown, latex or csv. csv is the table of node counts "
        "considered, the count the plan is for marked 'recommended' and advise's own "
        "choice 'advised' (the same row without --nodes), with the recommendation, its "
        "walltime and warnings on stderr (run classes and per-period totals are in the "
        "other formats); markdown and latex are the proposal's tables, with the warnings "
        "on stderr; json has every figure as fields.")
    ] = AdviceFormat.table,
    plot: Annotated[Path | None, typer.Option(
        help="Write the scaling figure (.png, .svg or .pdf) and its numbers (.csv).")] = None,
    emit: Annotated[Scheduler | None, typer.Option(
        help="Print only the batch directives for the recommendation; with --format json, "
        "the advice's JSON with their text under 'directives'.")] = None,
) -> None:
    """Recommend a node count, walltime and node-hours for APP, with proposal tables.

    Sweeps node counts, predicts each with its interval, and picks one by --objective
    among those meeting the efficiency floor, saying which rule decided.
    """
    if ctx.invoked_subcommand is not None:
        _refuse_options_before(ctx, ctx.invoked_subcommand)
        return
    from perfpredict.errors import BadInputError

    if app is None:
        if not _given_options(ctx):  # bare 'perfpredict advise', as a bare 'runs': help
            typer.echo(ctx.get_help())
            raise typer.Exit(2)
        # a script asking 'advise --format json' must not get the help text and exit 0
        raise BadInputError("'advise' needs --app APP (or a subcommand: 'advise walltime', "
                            "'advise next-runs'; see 'perfpredict advise --help')")
    if emit is not None and fmt not in (AdviceFormat.table, AdviceFormat.json):
        # said before the sweep: the directives have no table or proposal form
        raise BadInputError(f"--emit {emit.value} prints batch directives as text, or as "
                            f"JSON with --format json; drop --format {fmt.value}, or --emit "
                            f"for the advice as {fmt.value}")
    from perfpredict.advise.plan import PlanRequest, advise_plan
    from perfpredict.cli.render import print_json, print_rows
    from perfpredict.report import proposal

    if plot is not None:  # said before the sweep, as --emit's format is
        from perfpredict.report.plots import check_plot_path

        check_plot_path(plot)
    plan = advise_plan(ctx.obj.open_store(), PlanRequest(
        app=app, system=system, problem_size=problem_size, variant=variant,
        ranks_per_node=ranks_per_node,
        threads_per_rank=threads_per_rank, runs=runs, objective=objective.value,
        min_efficiency=min_efficiency, min_speedup_per_doubling=min_speedup_per_doubling,
        max_nodes=max_nodes, nodes=nodes, kill_risk=kill_risk, confidence=confidence,
        time_min_kill_risk=time_min_kill_risk, signal_lead=signal_lead,
        run_classes=tuple(run_class or ()), periods=periods, period_label=period_label))
    if plot is not None:
        from perfpredict.report.plots import save_scaling_plot

        written = save_scaling_plot(plan, plot)
        typer.echo(f"Wrote {written.figure} and {written.data_csv}", err=True)
    if emit is not None and fmt == AdviceFormat.json:
        from perfpredict.advise.directives import directives_document

        print_json(directives_document(plan, emit.value))
    elif emit is not None:  # the script header on stdout; what it cannot say, aside
        from perfpredict.advise.directives import directives, emit_warnings

        typer.echo(directives(plan, emit.value))
        _warn(emit_warnings(plan, emit.value))
    elif fmt == AdviceFormat.json:
        print_json(plan.as_dict())
    elif fmt in (AdviceFormat.markdown, AdviceFormat.latex):
        # the tables on stdout, to paste; the warnings (a walltime resting on an
        # extrapolation, a series fitted now) aside, where the markdown had dropped them
        render = (proposal.proposal_markdown if fmt == AdviceFormat.markdown
                  else proposal.proposal_latex)
        typer.echo(render(plan))
        _warn(plan.warnings)
    elif fmt == AdviceFormat.csv:  # one table on stdout, as every csv; the rest said aside
        print_rows(plan.candidate_rows(), "csv", proposal.CANDIDATE_COLUMNS)
        typer.echo("\n".join(proposal.summary_lines(plan)), err=True)
    else:
        typer.echo("\n".join(proposal.summary_lines(plan)))
        resources = proposal.resource_table(plan)
        if resources is not None:
            rows, columns = resources
            print_rows(rows, "table", columns, title="Requested resources")
        candidates, candidate_columns = proposal.candidate_table(plan)
        print_rows(candidates, "table", candidate_columns, title="Node counts considered")


def _warn(warnings: list[str]) -> None:
    """The advice's warnings on stderr, one line each, beside output that has no place
    for them (directives, a proposal's tables)."""
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)


def _refuse_options_before(ctx: typer.Context, subcommand: str) -> None:
    """'advise --app X next-runs' gave --app to 'advise' itself, which a subcommand never
    sees: say where it goes instead of letting the subcommand ask for it."""
    from perfpredict.errors import BadInputError

    given = _given_options(ctx)
    if given:
        what = "is an option" if len(given) == 1 else "are options"
        raise BadInputError(
            f"{', '.join(given)} before '{subcommand}' {what} of 'advise' itself, which "
            f"'advise {subcommand}' does not see; give its options after its name (see "
            f"'perfpredict advise {subcommand} --help')")


def _given_options(ctx: typer.Context) -> list[str]:
    """The options of 'advise' itself that the command line gave."""
    # by name: Typer carries its own copy of Click, whose enum is not click's
    return [param.opts[0] for param in ctx.command.params
            if getattr(ctx.get_parameter_source(param.name or ""), "name", "") == "COMMANDLINE"]


def next_runs(
    ctx: typer.Context,
    app: Annotated[str, typer.Option("--app", help="Application name.")],
    system: SystemOption = None,
    problem_size: SizeOption = None,
    variant: VariantOption = None,
    ranks_per_node: RanksOption = None,
    threads_per_rank: ThreadsOption = None,
    budget_node_hours: Annotated[float | None, typer.Option(
        help="Node-hours available for benchmarks (P90 cost), a finite number; default: no "
        "limit.")] = None,
    target_nodes: Annotated[int | None, typer.Option(
        help="Scale whose prediction should tighten (default: what 'advise' recommends).")
    ] = None,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Benchmarks to run next that tighten the advised request most, within a budget.

    Ranks unmeasured node counts by how much a run there would shrink the P90/P50 runtime
    ratio at the target scale, per node-hour, simulated with the trained predictor.
    """
    from perfpredict.advise.next_runs import NEXT_RUN_COLUMNS, TABLE_HEADERS, plan_next_runs
    from perfpredict.advise.plan import PlanRequest
    from perfpredict.cli.render import print_json, print_rows

    result = plan_next_runs(ctx.obj.open_store(), PlanRequest(
        app=app, system=system, problem_size=problem_size, variant=variant,
        ranks_per_node=ranks_per_node,
        threads_per_rank=threads_per_rank), target_nodes=target_nodes,
        budget_node_hours=budget_node_hours)
    if fmt == TableFormat.json:
        print_json(result.as_dict())
    elif fmt == TableFormat.csv:
        print_rows([step.as_dict() for step in result.steps], "csv", NEXT_RUN_COLUMNS)
    else:
        from perfpredict.report.tables import display_rows

        typer.echo(result.summary())
        if result.steps:  # the summary already says why there is none
            rows, columns = display_rows([step.as_dict() for step in result.steps],
                                         TABLE_HEADERS)
            print_rows(rows, "table", columns, title="Benchmarks to run next")


def register(app: typer.Typer) -> None:
    from perfpredict.cli import walltime_commands

    advise_app.callback(invoke_without_command=True)(advise)
    walltime_commands.register(advise_app)
    advise_app.command("next-runs")(next_runs)
    app.add_typer(advise_app, name="advise")

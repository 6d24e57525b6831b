"""An advice plan as people read it: a summary, the candidate table, and the two tables an
allocation proposal asks for, in Markdown and LaTeX ready to paste.

- **Requested resources**: runs x nodes x hours x node-hours, per run and in total, at P50
  and P90, in the machine's allocation units when the catalog knows its charge factor,
  and the walltime to request as Slurm ``D-HH:MM:SS`` and PBS ``HH:MM:SS``: one row for
  the recommendation, or one per ``--run-class`` with a source column and their total;
  with ``--periods``, the totals' share of one allocation period.
- **Scaling evidence** in OLCF's shape: nodes | time to solution, actual | time to
  solution, ideal | predicted with its interval. Predicted rows (node counts never run:
  up to the recommendation, and each run class's) are set apart: italics and a rule in
  LaTeX, italics in Markdown, and a source column.

Every table carries the sentence saying which machine and measured node counts the figures
rest on, and any conversion used.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from perfpredict.advise.job_limits import chain_charge_text
from perfpredict.advise.plan import ranks_per_node_text, whole_nodes
from perfpredict.advise.scheduler import pbs_time
from perfpredict.advise.selection import Candidate, node_count, percent_apart
from perfpredict.advise.walltime import slurm_time
from perfpredict.durations import format_seconds
from perfpredict.figures import format_value, ordinal, significant
from perfpredict.percent import efficiency_percent
from perfpredict.report.tables import (
    confidence_percent,
    display_rows,
    latex_table,
    markdown_table,
)

if TYPE_CHECKING:
    from perfpredict.advise.plan import Plan
    from perfpredict.advise.run_classes import ResourceFigures, RunClassPlan

#: Columns of the candidate table (``--format table`` and ``csv``), a stable contract.
CANDIDATE_COLUMNS = (
    "nodes", "measured", "measured_runtime_s", "predicted_runtime_s", "lower_runtime_s",
    "upper_runtime_s", "p90_runtime_s", "efficiency", "speedup", "speedup_per_doubling",
    "node_hours_p50", "node_hours_p90", "meets_floor", "recommended", "advised",
)


#: The candidate table on a terminal: fewer columns, short labels. Efficiency is "eff.",
#: no wider than its percentages: "efficiency" made the table of day-long runs (runtimes
#: of 365,698 s, node-hours past 1,000) 82 columns wide, and its verdicts a second table.
_CANDIDATE_HEADERS = {
    "nodes": "nodes", "measured_runtime_s": "measured s", "predicted_runtime_s": "P50 s",
    "efficiency": "eff.",
    "speedup_per_doubling": "x per doubling", "node_hours_p50": "node-h P50",
    "node_hours_p90": "node-h P90", "verdict": "verdict",
}


def candidate_table(plan: Plan) -> tuple[list[dict[str, str]], list[str]]:
    """The candidates for a terminal (rows and column labels), narrow enough for 80
    columns: efficiency in percent and a verdict (advised, ok, or below the floor; "asked"
    on the count ``--nodes`` made the plan for where advise would choose another); the
    intervals are in the JSON and CSV."""
    rows = []
    floor = plan.request.floor().min_efficiency
    for row in plan.candidate_rows():
        verdict = ("advised" if row["advised"] else
                   "ok" if row["meets_floor"] else "<floor")
        if row["recommended"] and verdict != "advised":  # --nodes: the user's own count,
            verdict = "asked"  # its floor said in a warning: "asked, <floor" broke 80 columns
        rows.append({**row, "efficiency": percent_apart(row["efficiency"], floor),
                     "verdict": verdict})
    return display_rows(rows, _CANDIDATE_HEADERS)


def walltime_text(plan: Plan) -> str:
    return f"{slurm_time(plan.walltime_s)} (Slurm --time), {pbs_time(plan.walltime_s)} (PBS)"


def summary_lines(plan: Plan) -> list[str]:
    """The recommendation in a few lines: what to request, why, and what it rests on."""
    rec, request = plan.recommended, plan.request
    pct = confidence_percent(request.confidence)
    lines = [
        plan.series,
        # a node count the user chose is planned for, not recommended (advise's own
        # choice, in the reason, may be another)
        f"{'Recommendation' if request.nodes is None else 'Plan'}: {node_count(rec.nodes)}. "
        f"{plan.reason[0].upper()}{plan.reason[1:]}",
        f"  predicted runtime {format_seconds(rec.predicted_runtime_s)} s ({pct} interval "
        f"{format_seconds(rec.lower_runtime_s)} - {format_seconds(rec.upper_runtime_s)} s), " + (
            f"weak-scaling efficiency {efficiency_percent(rec.efficiency)}" if plan.weak else
            f"parallel efficiency {efficiency_percent(rec.efficiency)}, speedup "
            f"{rec.speedup:.1f}x"),
        f"  walltime {walltime_text(plan)}: the {ordinal(100 * (1 - request.kill_risk))} "
        f"percentile {format_seconds(plan.walltime_quantile_s)} s rounded up to a multiple of "
        f"{plan.time_granularity_s} s{' and capped by the queue' if plan.chained_jobs > 1 else ''}"
        f"; {kill_text(plan)}, expected "
        f"runtime/walltime {_ratio_text(plan.expected_runtime_over_walltime)}"
        f"{f' over the {plan.chained_jobs} jobs' if plan.chained_jobs > 1 else ''}",
        *checkpoint_lines(plan),
        *([f"  queue {plan.queue_reason}"] if plan.queue_reason else []),
        f"  node-hours per run {format_value(rec.node_hours_p50)} (P50), "
        f"{format_value(rec.node_hours_p90)} "
        "(P90)" + ("" if request.runs == 1 else  # the totals are the run's
                   f"; for {request.runs:,} runs {format_value(plan.node_hours_p50)} (P50), "
                   f"{format_value(plan.node_hours_p90)} (P90)") + _units_text(
            plan.allocation_unit, (plan.node_hours_p50, plan.node_hours_p90),
            (plan.allocation_units_p50, plan.allocation_units_p90)),
        *resource_lines(plan),
        f"  basis: {plan.basis}",
    ]
    return lines + [f"  warning: {w}" for w in plan.warnings]


def checkpoint_lines(plan: Plan) -> list[str]:
    """The time-min (``--time-min-kill-risk``) and the checkpoint signal (``--signal-lead``,
    or the lead a chained run is given) as summary lines, none where neither is asked
    for. A time-min that would shorten nothing is said in the warnings."""
    lines = []
    time_min = plan.time_min
    if time_min is not None and plan.time_min_shortens:
        time_min_s, risk = time_min.time_min_s, time_min.kill_risk
        said = _risk_text(time_min.kill_probability, time_min.kill_probability_is_upper_bound,
                          risk, "--time-min-kill-risk")
        lines.append(
            f"  time-min {slurm_time(time_min_s)} (Slurm --time-min), {pbs_time(time_min_s)} "
            f"(PBS min_walltime): the {ordinal(100 * (1 - risk))} percentile "
            f"{format_seconds(time_min.quantile_s)} s rounded up; the scheduler may cut "
            f"the walltime to it to start the job sooner, and a job given only that long "
            f"is killed with probability "
            f"{said}: "
            f"checkpoint, or accept that risk")
    if plan.signal_lead_s is not None:
        lines.append(f"  checkpoint signal {plan.signal_lead_s} s before the limit (Slurm "
                     f"--signal=B:USR1@{plan.signal_lead_s}; PBS has none: time it in the "
                     f"job)")
    return lines


def kill_text(plan: Plan) -> str:
    """The kill probability of the walltime requested, as it can be stated: "at most" the
    risk asked for where the walltime is that risk's quantile (the interval model says no
    more), the figure where rounding up took it lower. For a chained run, the chance that
    the run outlasts its first job (the walltime's reading), and that the chain holds the
    quantile of the risk: "each of the 2 chained jobs reaches the limit with probability
    1.6%" was said of a run whose second job is needed that seldom, and "99.8%" of a
    chain of three whose third seldom is."""
    risk = plan.request.kill_risk
    said = _risk_text(plan.kill_probability, plan.kill_probability_is_upper_bound, risk,
                      "--kill-risk")
    if plan.chained_jobs > 1:
        return (f"the run outlasts its first job, to be continued by the next, with "
                f"probability {said}, and the "
                f"{plan.chained_jobs} jobs hold its {ordinal(100 * (1 - risk))} percentile "
                f"(at most {100 * risk:g}% of runs outlast them, --kill-risk)")
    return f"kill probability {said}"


def _risk_text(probability: float, upper_bound: bool, risk: float, option: str) -> str:
    """The kill probability of a limit taken at the quantile of ``risk`` (given as
    ``option``): "at most" the risk where the reading reaches it (the interval model
    says no more), "at most" the finest the calibration errors resolve where the limit
    lies past the widest of them (a figure below it is none they measured), else the
    lower figure rounding up gave."""
    if not upper_bound:
        return f"{significant(100 * probability, 2)}%"
    if probability == risk:
        return f"at most {100 * risk:g}% ({option})"
    return (f"at most {significant(100 * probability, 2)}% (the limit lies past the widest "
            "calibration error: the finest they resolve)")


def _ratio_text(ratio: float) -> str:
    """The expected runtime/walltime ratio with two decimals, and two significant digits
    below 0.01: a 0.1 s run in a one-minute walltime read "0.00", as if it took no time.

    >>> _ratio_text(0.7318), _ratio_text(1.0158), _ratio_text(0.0016)
    ('0.73', '1.02', '0.0016')
    """
    return f"{ratio:.2f}" if ratio >= 0.01 else significant(ratio, 2)


def _units_text(unit: str | None, node_hours: tuple[float, float],
                units: tuple[float | None, float | None]) -> str:
    """Node-hours (P50, P90) in the machine's allocation units; where they charge one to
    one, its unit named without the same two numbers again."""
    if units[0] is None or units[1] is None:
        return ""
    unit = unit or "allocation units"
    if math.isclose(units[0], node_hours[0]) and math.isclose(units[1], node_hours[1]):
        return f", charged one to one in {unit}"
    return f" = {format_value(units[0])} (P50), {format_value(units[1])} (P90) {unit}"


def resource_lines(plan: Plan) -> list[str]:
    """The run classes' total and the share of one period as summary lines, none without
    ``--run-class`` or ``--periods`` (the node-hours line then says it all)."""
    totals, lines = plan.totals, []
    if plan.run_classes:
        classes = ", ".join(f"{c.label} ({c.runs} x {node_count(c.nodes)})"
                            for c in plan.run_classes)
        runs = plan.totals.total.runs
        lines.append(f"  run classes {classes}: {runs:g} run{'' if runs == 1 else 's'}, "
                     f"{_figures_text(plan, totals.total)} in total")
    if totals.periods > 1:
        lines.append(f"  per {totals.period_label}: "
                     f"{_figures_text(plan, totals.per_period)}. {totals.split_sentence()}")
    return lines


def _figures_text(plan: Plan, figures: ResourceFigures) -> str:
    """Node-hours at P50 and P90, and in allocation units where known, written as the
    tables write them (:func:`format_value`): to three significant digits, the summary
    said a total of 1,220 node-hours above a table whose Total row said 1,219."""
    return (f"{format_value(figures.node_hours_p50)} (P50), "
            f"{format_value(figures.node_hours_p90)} (P90) node-hours" + _units_text(
                plan.allocation_unit, (figures.node_hours_p50, figures.node_hours_p90),
                (figures.allocation_units_p50, figures.allocation_units_p90)))


def _class_row(plan: Plan, run_class: RunClassPlan) -> dict[str, Any]:
    """One run class as a row of the requested-resources table; with ``--run-class``, a
    source column says whether its node count was measured."""
    c = run_class
    row: dict[str, Any] = {"Run class": c.label, "Runs": c.runs, "Nodes": c.nodes}
    if plan.run_classes:
        row["Source"] = c.source
    row.update({
        "Wallclock per run P50 (h)": c.predicted_runtime_s / 3600.0,
        "Wallclock per run P90 (h)": c.p90_runtime_s / 3600.0,
        "Walltime request": f"{slurm_time(c.walltime_s)} / {pbs_time(c.walltime_s)}",
        "Node-hours per run P50": c.node_hours_per_run_p50,
        "Node-hours per run P90": c.node_hours_per_run_p90,
        "Total node-hours P50": c.node_hours_p50,
        "Total node-hours P90": c.node_hours_p90,
    })
    if c.allocation_units_p50 is not None and c.allocation_units_p90 is not None:
        unit = plan.allocation_unit or "allocation units"
        row[f"Total {unit} P50"] = c.allocation_units_p50
        row[f"Total {unit} P90"] = c.allocation_units_p90
    return row


def _sum_row(plan: Plan, label: str, figures: ResourceFigures) -> dict[str, Any]:
    """A total (or one period's share) as a row: runs and the totals, the per-run cells
    left empty."""
    unit = plan.allocation_unit or "allocation units"
    return {"Run class": label, "Runs": figures.runs,
            "Total node-hours P50": figures.node_hours_p50,
            "Total node-hours P90": figures.node_hours_p90,
            f"Total {unit} P50": figures.allocation_units_p50,
            f"Total {unit} P90": figures.allocation_units_p90}


def resource_rows(plan: Plan) -> tuple[list[dict[str, Any]], list[str]]:
    """The requested-resources table and its columns: one row per run class (the
    recommendation alone without ``--run-class``), their total when there are classes,
    and with ``--periods`` the totals' share of one period."""
    rows = [_class_row(plan, c) for c in plan.resource_classes]
    columns = list(rows[0])
    totals = plan.totals
    if plan.run_classes:
        rows.append(_sum_row(plan, "Total", totals.total))
    if totals.periods > 1:
        rows.append(_sum_row(plan, f"Per {totals.period_label} (1/{totals.periods})",
                             totals.per_period))
    return rows, columns


#: The requested-resources table on a terminal: the per-run node-hours and the allocation
#: units left to the summary, the JSON and the proposal formats.
_RESOURCE_HEADERS = {
    "Run class": "run class", "Runs": "runs", "Nodes": "nodes", "Source": "source",
    "Wallclock per run P50 (h)": "P50 h", "Wallclock per run P90 (h)": "P90 h",
    "Walltime request": "walltime", "Total node-hours P50": "node-h P50",
    "Total node-hours P90": "node-h P90",
}


def resource_table(plan: Plan) -> tuple[list[dict[str, str]], list[str]] | None:
    """The requested-resources table for a terminal (rows and column labels), None
    without ``--run-class`` or ``--periods``: the summary then says the one row."""
    if not plan.run_classes and plan.totals.periods == 1:
        return None
    rows, columns = resource_rows(plan)
    return display_rows(rows, {k: v for k, v in _RESOURCE_HEADERS.items() if k in columns})


#: The evidence table's node count of a measured rank count that fills no whole node.
_NO_WHOLE_NODES = "-"


def evidence_rows(plan: Plan) -> tuple[list[dict[str, Any]], list[str], list[bool]]:
    """The scaling-evidence table in OLCF's shape, its columns, and which rows are
    predicted. Measured rows come first (medians of the runs, with the prediction at the
    same scale beside them); predicted rows follow, by node count: every node count beyond
    the largest measured one up to the recommendation, the recommendation itself, and
    each ``--run-class`` node count never measured, the scales a proposal requests. The
    source column names the requested scale a predicted row is ("predicted
    (recommended)", "predicted (largest)")."""
    pct = confidence_percent(plan.request.confidence)
    first = plan.measured[0]
    ranks = plan.scale_unit == "ranks"

    def ideal_s(nodes: float) -> float:
        return first.runtime_s if plan.weak else first.runtime_s * first.nodes / nodes

    def row(nodes: float, actual_s: float | None, predicted: tuple[float, float, float],
            source: str) -> dict[str, Any]:
        # a series measured in ranks names the ranks run, as the basis does: their
        # conversion to nodes, where it fills no whole node, is a count no one ran
        # (LULESH's 64 ranks at 27 per node read "2.37037" nodes, "measured")
        whole = whole_nodes(nodes, ranks)
        out: dict[str, Any] = {"Nodes": _NO_WHOLE_NODES if whole is None else f"{whole:,g}"}
        if ranks:
            out["Ranks"] = format_value(float(nodes * plan.scale_per_node))
        mid, lo, hi = (format_value(float(v)) for v in predicted)
        out.update({"Time to solution, actual (s)": format_value(actual_s) or "-",
                    "Time to solution, ideal (s)": format_value(ideal_s(nodes)),
                    f"Predicted (s) [{pct} interval]": f"{mid} [{lo}, {hi}]",
                    "Source": source})
        return out

    rows = [row(m.nodes, m.runtime_s,
                (m.predicted_runtime_s, m.lower_runtime_s, m.upper_runtime_s), "measured")
            for m in plan.measured]
    largest = plan.measured[-1].nodes
    rec = plan.recommended
    unmeasured: dict[float, Candidate | RunClassPlan] = {
        float(c.nodes): c for c in plan.candidates
        if not c.measured and (largest < c.nodes <= rec.nodes or c is rec)}
    for run_class in plan.run_classes:  # a class's count may lie off the sweep
        if not run_class.measured:
            unmeasured.setdefault(float(run_class.nodes), run_class)
    class_labels = plan.run_class_labels()
    for nodes in sorted(unmeasured):
        prediction = unmeasured[nodes]
        requested = (["recommended"] if nodes == rec.nodes else []) + class_labels.get(
            nodes, [])
        source = f"predicted ({', '.join(requested)})" if requested else "predicted"
        rows.append(row(nodes, None, (prediction.predicted_runtime_s,
                                      prediction.lower_runtime_s,
                                      prediction.upper_runtime_s), source))
    predicted = [r["Source"] != "measured" for r in rows]
    return rows, list(rows[0]), predicted


def _notes(plan: Plan, any_predicted: bool) -> list[str]:
    """The basis, the walltime rule and how to read the evidence table (which mentions
    italic rows only when there are some)."""
    pct = confidence_percent(plan.request.confidence)
    ideal = ("ideal weak scaling keeps the time of the smallest measured run" if plan.weak
             else "ideal strong scaling divides the time of the smallest measured run by "
             "the node ratio")
    reading = (f"Predicted rows are in italics with {pct} prediction intervals; {ideal}."
               if any_predicted else f"Predictions carry {pct} prediction intervals; {ideal}.")
    if plan.scale_unit == "ranks" and any(not float(m.nodes).is_integer()
                                              for m in plan.measured):
        reading += (f" Nodes are the ranks at {ranks_per_node_text(plan.scale_per_node)}; "
                    f"'{_NO_WHOLE_NODES}' where a measured rank count fills no whole number "
                    "of nodes.")
    percentile = (f"the {ordinal(100 * (1 - plan.request.kill_risk))} percentile of the "
                  f"predicted runtime rounded up to a multiple of {plan.time_granularity_s} s")
    if plan.run_classes:
        queued = any(c.queue for c in plan.run_classes)
        walltime = (f"Walltime requests: {percentile} at each class's node count"
                    + (", in the queue that takes it" if queued else "") + "".join(
                        f"; {c.label}: the limit of queue {c.queue}, each run "
                        f"{c.chained_jobs} chained jobs, checkpointed before the limit "
                        f"({_chain_charge_note(c.chained_jobs, c.walltime_s, c.nodes)})"
                        for c in plan.run_classes if c.chained_jobs > 1) + ".")
    elif plan.chained_jobs <= 1:
        walltime = f"Walltime: {walltime_text(plan)}, {percentile}."
    else:
        charge = _chain_charge_note(plan.chained_jobs, plan.walltime_s, plan.recommended.nodes)
        walltime = (f"Walltime: {walltime_text(plan)}, the limit of queue {plan.queue}, "
                    f"below {percentile} ({format_seconds(plan.walltime_quantile_s)} s): "
                    f"each run is {plan.chained_jobs} chained jobs, checkpointed before "
                    f"the limit ({charge}).")
    if plan.queue_reason and not plan.run_classes:
        walltime += f" Queue {plan.queue_reason}."
    if plan.totals.periods > 1:
        walltime += f" {plan.totals.split_sentence()}"
    return [plan.basis, walltime, reading]


def _chain_charge_note(chained_jobs: int, limit_s: float, nodes: int) -> str:
    """The bound on a chained run's charge, in the proposal's note: the tables' node-hours
    count the predicted runtime alone, and the warning that said what chaining may cost
    went to stderr, out of the Markdown or LaTeX pasted into a proposal."""
    return ("the node-hours count the predicted runtime alone; with each job but the "
            "last charged up to its limit, a run takes up to "
            f"{chain_charge_text(chained_jobs, limit_s, nodes)}")


def _label_slug(text: str) -> str:
    """``text`` as a LaTeX label part: letters, digits and hyphens only."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "app"


def proposal_markdown(plan: Plan) -> str:
    """Both proposal tables as GitHub-flavoured Markdown, with their notes."""
    resources, resource_columns = resource_rows(plan)
    evidence, evidence_columns, predicted = evidence_rows(plan)
    evidence = [{k: f"*{v}*" if is_predicted and v else v for k, v in r.items()}
                for r, is_predicted in zip(evidence, predicted, strict=True)]
    parts = [f"### Requested resources: {plan.request.app}", "",
             markdown_table(resources, resource_columns), "",
             f"### Scaling evidence: {plan.series}", "",
             markdown_table(evidence, evidence_columns), ""]
    return "\n".join(parts + [f"_{note}_  " for note in _notes(plan, any(predicted))])


def proposal_latex(plan: Plan) -> str:
    """Both proposal tables as LaTeX ``table`` floats (booktabs), notes in the captions."""
    resources, resource_columns = resource_rows(plan)
    evidence, evidence_columns, predicted = evidence_rows(plan)
    first_predicted = predicted.index(True) if True in predicted else len(predicted)
    notes = _notes(plan, any(predicted))
    slug = _label_slug(plan.request.app)
    return "\n\n".join([
        "% requires \\usepackage{booktabs} and \\usepackage{adjustbox}",
        latex_table(resources, resource_columns,
                    caption=f"Requested resources for {plan.request.app}. {notes[0]} "
                            f"{notes[1]}", label=f"tab:resources-{slug}",
                    rule_before=[len(plan.resource_classes)]),
        latex_table(evidence, evidence_columns,
                    caption=f"Scaling evidence: {plan.series}. {notes[2]}",
                    italic=predicted, rule_before=[first_predicted],
                    align="r" * (len(evidence_columns) - 1) + "l",
                    label=f"tab:scaling-{slug}"),
    ])

"""The scaling figure of an allocation proposal, with the numbers it plots as CSV.

Left: time to solution against nodes (log-log): measured medians as filled markers, the
predicted curve as a line with its interval as a shaded band, ideal scaling dashed, the
ranges outside the measurements shaded (beyond the largest, and below the smallest where a
run class lies there), the recommended node count starred (the user's, with ``--nodes``,
and advise's own choice beside it as an open star where it differs) and
each ``--run-class`` node count marked with an open diamond and the class's label. Right:
parallel efficiency (weak-scaling efficiency for a weak-scaling series) against the
smallest measured configuration (100% there), measured
and predicted, with the efficiency floor and the same marks. PNG, SVG or PDF by the file's
extension; matplotlib is imported here only, and its pyplot not at all (no display
needed, and a notebook's backend and figures are left as they were).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from perfpredict.advise.plan import ranks_per_node_text
from perfpredict.advise.selection import floor_percent, node_count
from perfpredict.counts import plain
from perfpredict.durations import format_seconds
from perfpredict.errors import BadInputError, named_path
from perfpredict.report.csv_rows import write_csv_cells
from perfpredict.report.tables import confidence_percent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation
    from matplotlib.transforms import Bbox

    from perfpredict.advise.plan import Plan

FORMATS = (".png", ".svg", ".pdf")
CSV_COLUMNS = ("nodes", "measured_runtime_s", "predicted_runtime_s", "lower_runtime_s",
               "upper_runtime_s", "ideal_runtime_s", "measured_efficiency",
               "predicted_efficiency", "recommended", "run_class", "advised", "ranks")
#: The headers of earlier versions' plotted numbers, before the run classes' column, the
#: advised one and the ranks': a file a new plot of that name writes over, as its own.
#: New columns go last, so that a reader taking the columns by position reads on.
_EARLIER_HEADERS = tuple(",".join(CSV_COLUMNS[:-n]) for n in (3, 2, 1))
#: Significant digits of the runtimes and efficiencies in the plot's CSV: a part in a
#: million, finer than any figure shows or a job's timer measures, where the full floats
#: carried the noise of medians and ratios (936.7470000000002). Significant digits, not
#: decimals, so a 0.05 s runtime keeps its digits as a 5e5 s one does.
CSV_FLOAT_FORMAT = ".6g"
#: How a run class's node count is marked in both panels: an open diamond, so that the
#: measured point or the recommended star at the same count shows through it.
_RUN_CLASS_MARK: dict[str, Any] = {
    "marker": "D", "markersize": 12, "markerfacecolor": "none",
    "markeredgecolor": "tab:purple", "markeredgewidth": 2, "linestyle": "none", "zorder": 7,
    "label": "run classes"}
#: How advise's own choice is marked in both panels beside a ``--nodes`` count it is not:
#: the recommendation's star, open and green, so that it reads as the star advise would
#: have put there and the user's filled one stays the plan's.
_ADVISED_MARK: dict[str, Any] = {
    "marker": "*", "markersize": 18, "markerfacecolor": "none",
    "markeredgecolor": "tab:green", "markeredgewidth": 1.8, "linestyle": "none",
    "zorder": 6, "label": "advise's choice"}
#: The white box behind a mark's label, which keeps it readable over the band and lines.
_LABEL_BOX = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85}


def plot_rows(plan: Plan) -> list[dict[str, Any]]:
    """The plotted numbers, one row per node count (measured, swept or a run class's),
    ascending; ``run_class`` holds the labels of the ``--run-class`` classes at that
    count ("; " between several), empty at the others. ``recommended`` marks the count
    the plan is for (the filled star: ``--nodes``' where given) and ``advised`` the one
    advise would choose (the open star beside a ``--nodes`` count it is not), the same
    row without ``--nodes``: the CSV named the count asked for alone.

    ``ranks``, for a series measured in MPI ranks, is the ranks run at a measured row and
    the ranks the node count holds at the others (converted as its nodes were); empty for
    a series measured in nodes. Its measured nodes are a conversion (LULESH's 64 ranks at
    27 per node are 2.37037 nodes, a count no one ran), which the CSV gave alone, where
    the JSON gives the ranks run (``measured_ranks``).

    Efficiency is against the smallest measured configuration, 100% there by definition:
    measured runtimes against the measured runtime at that base, predicted ones against
    the predicted runtime at it. Dividing the measured base by a prediction instead put
    the model's miss at the base into every predicted value (172% at the base itself for
    a series whose law underpredicts its smallest run, issue 14).
    """
    base = plan.measured[0]
    in_ranks = plan.scale_unit == "ranks"

    def ideal_s(nodes: float, base_runtime_s: float) -> float:
        return base_runtime_s if plan.weak else base_runtime_s * base.nodes / nodes

    rows: dict[float, dict[str, Any]] = {}
    for m in plan.measured:
        rows[m.nodes] = {"nodes": plain(m.nodes), "ranks": plain(m.scale) if in_ranks else None,
                         "measured_runtime_s": m.runtime_s,
                         "measured_efficiency": ideal_s(m.nodes, base.runtime_s) / m.runtime_s,
                         "predicted_runtime_s": m.predicted_runtime_s,
                         "lower_runtime_s": m.lower_runtime_s,
                         "upper_runtime_s": m.upper_runtime_s}
    for c in plan.candidates:
        rows.setdefault(float(c.nodes), {"nodes": c.nodes}).update(
            predicted_runtime_s=c.predicted_runtime_s, lower_runtime_s=c.lower_runtime_s,
            upper_runtime_s=c.upper_runtime_s)
    for run_class in plan.run_classes:  # a class's count may lie off the sweep
        rows.setdefault(float(run_class.nodes), {
            "nodes": run_class.nodes, "predicted_runtime_s": run_class.predicted_runtime_s,
            "lower_runtime_s": run_class.lower_runtime_s,
            "upper_runtime_s": run_class.upper_runtime_s})
    class_labels = plan.run_class_labels()
    out = []
    for nodes in sorted(rows):
        row = {column: None for column in CSV_COLUMNS} | rows[nodes]
        row["ideal_runtime_s"] = ideal_s(nodes, base.runtime_s)
        row["predicted_efficiency"] = (ideal_s(nodes, base.predicted_runtime_s)
                                       / row["predicted_runtime_s"])
        row["recommended"] = nodes == plan.recommended.nodes
        row["advised"] = nodes == plan.advised_nodes
        row["run_class"] = "; ".join(class_labels.get(nodes, [])) or None
        if in_ranks and row["ranks"] is None:
            row["ranks"] = plain(nodes * plan.scale_per_node)
        out.append(row)
    return out


def label_log_axis(axis: Axis) -> None:
    """Plain numbers (40, not 4 x 10^1) on a log axis, with minor ticks labelled where
    there are too few powers of ten to read a value off: every minor tick on a narrow
    range, 2 and 5 times a power of ten on a range that holds one power of ten (a
    runtime axis of 30-500 s read only "100")."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    as_written = FuncFormatter(lambda y, _: f"{y:g}")
    axis.set_major_formatter(as_written)
    bottom, top = axis.get_view_interval()
    n_powers_of_ten = math.floor(math.log10(top)) - math.ceil(math.log10(bottom)) + 1
    if top / bottom < 20:
        axis.set_minor_formatter(as_written)
    elif n_powers_of_ten < 2:
        axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        axis.set_minor_formatter(as_written)
    else:
        axis.set_minor_formatter(NullFormatter())


class PlotFiles(NamedTuple):
    """What :func:`save_scaling_plot` wrote: the figure, and its numbers as CSV."""

    figure: Path
    data_csv: Path


def check_plot_path(path: str | Path) -> Path:
    """``path`` as a figure file :func:`save_scaling_plot` can write, else bad input: said
    before an advice's sweep, which a wrong extension only failed after. The plotted
    numbers go beside it under the same name with .csv, a file the user did not name:
    one there that is not an earlier plot's (``--plot runs.png`` beside the runs.csv it
    plots) is refused rather than written over."""
    path = Path(named_path(path, "the figure file"))
    if path.suffix.lower() not in FORMATS:
        raise BadInputError(f"--plot {path}: the file must end in "
                            f"{', '.join(FORMATS[:-1])} or {FORMATS[-1]}")
    data_csv = path.with_suffix(".csv")
    try:
        with data_csv.open(encoding="utf-8", errors="replace") as fh:
            header = fh.readline().rstrip("\r\n")
    except OSError:  # not there (or not readable, which writing it will say)
        return path
    if header and header not in (",".join(CSV_COLUMNS), *_EARLIER_HEADERS):
        raise BadInputError(f"--plot {path}: its numbers go to {data_csv}, which holds "
                            f"another table (its header begins {header[:80]!r}); name the "
                            "figure otherwise, or move that file")
    return path


def _keep_apart(fig: Figure, labels: list[Annotation]) -> None:
    """Move each of ``labels`` (placed below their marks, left to right) further down
    until it overlaps none before it: run classes a doubling or two apart, on an axis of
    ten, had their labels written over each other. Measured as Agg draws ``fig``, whose
    text a PDF or SVG sets alike, by a renderer of its own: a canvas made for it would
    have replaced the one of a notebook's figure, which then no longer showed."""
    from matplotlib.backends.backend_agg import RendererAgg

    renderer = RendererAgg(int(fig.bbox.width), int(fig.bbox.height), fig.dpi)
    placed: list[Bbox] = []
    for label in labels:
        box = label.get_window_extent(renderer)
        while any(box.overlaps(other) for other in placed):
            dx_pt, dy_pt = label.xyann
            label.xyann = (dx_pt, dy_pt - box.height * 72 / fig.dpi - 2)
            box = label.get_window_extent(renderer)
        placed.append(box)


def save_scaling_plot(plan: Plan, path: str | Path) -> PlotFiles:
    """Draw ``plan`` to ``path`` (.png, .svg or .pdf) and write the plotted numbers to the
    same name with .csv (a proposal's reviewers ask for the numbers behind a figure)."""
    path = check_plot_path(path)
    fig = draw_scaling_plot(plan)
    try:
        fig.savefig(path, dpi=150)
    except OSError as exc:
        raise BadInputError(f"--plot {path}: cannot write it ({exc.strerror or exc}); "
                            "choose a folder that exists and you can write") from None

    csv_path = path.with_suffix(".csv")
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        write_csv_cells(fh, CSV_COLUMNS, ([row[c] for c in CSV_COLUMNS]
                                          for row in plot_rows(plan)),
                        float_format=CSV_FLOAT_FORMAT)
    return PlotFiles(path, csv_path)


def draw_scaling_plot(plan: Plan, axes: Iterable[Axes] | None = None) -> Figure:
    """Draw ``plan``'s two panels, runtime and parallel efficiency, and return their
    Figure. ``axes``: the two Axes to draw into, a notebook's own
    (``fig, axes = plt.subplots(1, 2); draw_scaling_plot(plan, axes)``), whose figure's
    title and layout are left to their owner; without them, a Figure of its own with
    the series as its title, as ``advise --plot`` saves it (:func:`save_scaling_plot`).
    """
    # a Figure of its own, not pyplot's: matplotlib.use("Agg") switched a notebook's
    # backend, so that its own figures no longer showed, and pyplot holds every figure
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    if axes is None:
        fig = Figure(figsize=(12, 5))
        ax_time, ax_eff = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
    else:
        given = list(getattr(axes, "flat", axes)) if isinstance(axes, Iterable) else []
        if len(given) != 2 or not all(isinstance(ax, Axes) for ax in given):
            raise BadInputError("axes must be two matplotlib Axes, the runtime panel's and "
                                "the efficiency panel's, as plt.subplots(1, 2) makes them; "
                                f"got {type(axes).__name__}")
        ax_time, ax_eff = given
        fig = ax_time.get_figure()

    rows = plot_rows(plan)
    nodes = [r["nodes"] for r in rows]
    measured = [r for r in rows if r["measured_runtime_s"] is not None]
    run_classes = [r for r in rows if r["run_class"]]
    rec = plan.recommended
    pct = confidence_percent(plan.request.confidence)
    # a run class below the smallest measured count extends the axis down there: the
    # laws extrapolate downward, so that range is shaded as the one above the largest
    outside = [(lo, hi) for lo, hi in ((nodes[0], plan.measured[0].nodes),
                                       (plan.measured[-1].nodes, nodes[-1])) if lo < hi]

    for ax in (ax_time, ax_eff):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(LogLocator(base=2))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_xlabel("Nodes" + (f" ({ranks_per_node_text(plan.scale_per_node)})"
                                 if plan.scale_unit == "ranks" else ""))
        ax.grid(True, which="major", alpha=0.3)
        for i, (lo, hi) in enumerate(outside):  # one legend entry for both
            ax.axvspan(lo, hi, color="0.93", zorder=0,
                       label="_nolegend_" if i else "beyond the measurements")

    ax_time.set_yscale("log")
    ax_time.fill_between(nodes, [r["lower_runtime_s"] for r in rows],
                         [r["upper_runtime_s"] for r in rows], color="tab:blue", alpha=0.2,
                         linewidth=0, label=f"{pct} prediction interval")
    ax_time.plot(nodes, [r["predicted_runtime_s"] for r in rows], color="tab:blue",
                 linewidth=1.8, label="predicted")
    ax_time.plot(nodes, [r["ideal_runtime_s"] for r in rows], color="0.35", linestyle="--",
                 linewidth=1.2, label=f"ideal {'weak' if plan.weak else 'strong'} scaling")
    ax_time.plot([r["nodes"] for r in measured], [r["measured_runtime_s"] for r in measured],
                 "o", color="black", markersize=6, zorder=5, label="measured (median)")
    # with --nodes the star is the user's count, as the summary's "Plan: N nodes" is,
    # and advise's own choice, where it differs, is marked apart: the legend said
    # "recommended: 48 nodes" of a count advise had not chosen, and its own went unmarked
    star = "recommended" if plan.request.nodes is None else "as asked (--nodes)"
    advised = next((r for r in rows if r["nodes"] == plan.advised_nodes
                    and plan.advised_nodes != rec.nodes), None)
    ax_time.plot([rec.nodes], [rec.predicted_runtime_s], "*", color="tab:red", markersize=16,
                 markeredgecolor="black", zorder=6, label=f"{star}: {node_count(rec.nodes)}")
    if advised is not None:
        ax_time.plot([advised["nodes"]], [advised["predicted_runtime_s"]], **_ADVISED_MARK
                     | {"label": f"{_ADVISED_MARK['label']}: {node_count(advised['nodes'])}"})
    # label the star on the side with room, so it never runs off the axes
    right_half = rec.nodes > (nodes[0] * nodes[-1]) ** 0.5
    ax_time.annotate(f"{node_count(rec.nodes)}\n{format_seconds(rec.predicted_runtime_s)} s",
                     (rec.nodes, rec.predicted_runtime_s), textcoords="offset points",
                     xytext=(-12 if right_half else 12, 12), fontsize=9, color="tab:red",
                     ha="right" if right_half else "left", bbox=_LABEL_BOX)
    if run_classes:
        ax_time.plot([r["nodes"] for r in run_classes],
                     [r["predicted_runtime_s"] for r in run_classes], **_RUN_CLASS_MARK)
    class_labels = []
    for r in run_classes:  # below the mark, as the star's label is above its own
        at_edge = {nodes[0]: "left", nodes[-1]: "right"}.get(r["nodes"], "center")
        class_labels.append(ax_time.annotate(
            f"{r['run_class']}\n{node_count(r['nodes'])}",
            (r["nodes"], r["predicted_runtime_s"]), textcoords="offset points",
            xytext=(0, -14), fontsize=9, color="tab:purple", ha=at_edge, va="top",
            bbox=_LABEL_BOX, parse_math=False))
    # the ideal line may fall far below everything else; let it leave the frame rather
    # than squash the predictions into the top of the panel
    lowest = min([*(r["lower_runtime_s"] for r in rows),
                  *(r["measured_runtime_s"] for r in measured)])
    ax_time.set_ylim(bottom=lowest * 0.7)
    label_log_axis(ax_time.yaxis)
    ax_time.set_ylabel("Time to solution (s)")
    ax_time.set_title("Runtime", fontsize=11)
    ax_time.legend(fontsize=8, loc="best")

    ax_eff.plot(nodes, [r["predicted_efficiency"] for r in rows], color="tab:blue",
                linewidth=1.8, label="predicted")
    ax_eff.plot([r["nodes"] for r in measured], [r["measured_efficiency"] for r in measured],
                "o", color="black", markersize=6, zorder=5, label="measured")
    floor = plan.request.floor().min_efficiency
    if floor is not None:
        ax_eff.axhline(floor, color="tab:orange", linestyle=":", linewidth=1.5,
                       label=f"efficiency floor {floor_percent(floor)}")
    ax_eff.plot([rec.nodes], [next(r["predicted_efficiency"] for r in rows if r["recommended"])],
                "*", color="tab:red", markersize=16,
                markeredgecolor="black", zorder=6, label=star)
    if advised is not None:
        ax_eff.plot([advised["nodes"]], [advised["predicted_efficiency"]], **_ADVISED_MARK)
    if run_classes:
        ax_eff.plot([r["nodes"] for r in run_classes],
                    [r["predicted_efficiency"] for r in run_classes], **_RUN_CLASS_MARK)
    top = max([1.05, *(r["predicted_efficiency"] for r in rows),
               *(r["measured_efficiency"] for r in measured)])
    ax_eff.set_ylim(0, min(top * 1.05, 2.0))
    ax_eff.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:.0%}"))
    # as the summary names it: a weak-scaling series' panel said "Parallel efficiency"
    # beside "weak-scaling efficiency 71%"
    efficiency = "Weak-scaling efficiency" if plan.weak else "Parallel efficiency"
    ax_eff.set_ylabel(f"{efficiency} (vs smallest measured)")
    ax_eff.set_title(efficiency, fontsize=11)
    ax_eff.legend(fontsize=8, loc="best")

    if axes is None:
        kind = "Weak" if plan.weak else "Strong"
        # the labels a user typed and the series a data set named, drawn as written: a
        # '$' in them was read as mathtext, and an unpaired one ended the plot in an
        # internal error
        fig.suptitle(textwrap.fill(f"{kind} scaling: {plan.series}", 110), fontsize=10,
                     parse_math=False)
        fig.tight_layout()
    _keep_apart(fig, class_labels)
    return fig

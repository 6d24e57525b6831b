"""``advise --plot``: a real figure file and the plotted numbers beside it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.errors import BadInputError
from perfpredict.report.plots import (
    CSV_COLUMNS,
    check_plot_path,
    draw_scaling_plot,
    save_scaling_plot,
)
from tests.advise.conftest import BERT, RELEARN, read_csv

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: How far the CSV's six significant digits may lie from the plan's floats.
SIX_DIGITS = 5e-6


def _figures_saved(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the plot draws, caught where it saves them (a Figure of its own)."""
    from matplotlib.figure import Figure

    figures: list = []
    savefig = Figure.savefig
    monkeypatch.setattr(Figure, "savefig",
                        lambda fig, *a, **k: (figures.append(fig), savefig(fig, *a, **k)))
    return figures


def test_png_and_its_numbers(trained_store, tmp_path: Path) -> None:
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    figure, csv_path = save_scaling_plot(plan, tmp_path / "scaling.png")
    assert figure == tmp_path / "scaling.png" and figure.read_bytes()[:8] == PNG_MAGIC
    assert csv_path == tmp_path / "scaling.csv"
    rows = read_csv(csv_path)
    assert list(rows[0]) == list(CSV_COLUMNS)
    measured = {float(r["nodes"]): float(r["measured_runtime_s"]) for r in rows
                if r["measured_runtime_s"]}
    assert measured == pytest.approx({m.nodes: m.runtime_s for m in plan.measured},
                                     rel=SIX_DIGITS)
    recommended = [r for r in rows if r["recommended"] == "True"]
    assert len(recommended) == 1
    assert float(recommended[0]["nodes"]) == plan.recommended.nodes
    assert float(recommended[0]["predicted_runtime_s"]) == pytest.approx(
        plan.recommended.predicted_runtime_s, rel=SIX_DIGITS)
    for r in rows:
        assert float(r["lower_runtime_s"]) <= float(r["predicted_runtime_s"]) <= float(
            r["upper_runtime_s"])
    first = plan.measured[0]
    assert float(rows[-1]["ideal_runtime_s"]) == pytest.approx(
        first.runtime_s * first.nodes / float(rows[-1]["nodes"]), rel=SIX_DIGITS)


def _significant_digits(cell: str) -> int:
    """'936.7470000000002' has 16, '0.0589123' and '1.23457e+06' have 6."""
    return len(cell.lower().partition("e")[0].lstrip("-").replace(".", "").lstrip("0"))


def test_the_numbers_are_written_as_a_reader_wants_them(trained_store,
                                                        tmp_path: Path) -> None:
    """Node counts are whole ("8", not "8.0") and runtimes and efficiencies carry six
    significant digits, not the float noise of a median (936.7470000000002), and still
    order the band as the figure draws it."""
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    rows = read_csv(save_scaling_plot(plan, tmp_path / "scaling.png").data_csv)
    assert [r["nodes"] for r in rows] == [str(c.nodes) for c in plan.candidates]
    numbers = [cell for r in rows for column, cell in r.items()
               if cell and column not in ("nodes", "recommended", "advised")]
    assert numbers and all(_significant_digits(cell) <= 6 for cell in numbers), numbers
    for r in rows:
        assert float(r["lower_runtime_s"]) <= float(r["predicted_runtime_s"]) <= float(
            r["upper_runtime_s"])


def test_svg_through_the_cli(advise_cli, tmp_path: Path) -> None:
    figure = tmp_path / "weak.svg"
    result = advise_cli("advise", *RELEARN, "--plot", str(figure), "--format", "json")
    assert result.exit_code == 0, result.output
    assert ET.parse(figure).getroot().tag.endswith("svg")
    rows = read_csv(tmp_path / "weak.csv")
    assert [float(r["nodes"]) for r in rows if r["measured_runtime_s"]] == [1, 2, 4, 8, 16]


def test_a_recommendation_of_one_node_is_labelled_in_the_singular(trained_store,
                                                                 tmp_path: Path) -> None:
    """The legend and the star's label said "recommended: 1 nodes" (RELeARN, weak)."""
    import matplotlib

    plan = advise_plan(trained_store, PlanRequest(
        app="RELeARN", problem_size="9000 neurons/rank, theta=0.3", ranks_per_node=48))
    assert plan.recommended.nodes == 1
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text, not as paths
        figure = save_scaling_plot(plan, tmp_path / "weak.svg").figure
    texts = [el.text or "" for el in ET.parse(figure).iter() if el.tag.endswith("text")]
    assert "recommended: 1 node" in texts and "1 node" in texts, texts
    assert not [t for t in texts if "1 nodes" in t], texts


def test_a_weak_scaling_panel_is_named_as_the_summary_names_it(trained_store,
                                                              tmp_path: Path) -> None:
    """RELeARN's panel said "Parallel efficiency" beside a summary's "weak-scaling
    efficiency 71%"; a strong-scaling series' keeps its name."""
    import matplotlib

    weak = advise_plan(trained_store, PlanRequest(
        app="RELeARN", problem_size="9000 neurons/rank, theta=0.3", ranks_per_node=48))
    strong = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    for plan, name, other in ((weak, "Weak-scaling efficiency", "Parallel efficiency"),
                              (strong, "Parallel efficiency", "Weak-scaling efficiency")):
        with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text, not as paths
            figure = save_scaling_plot(plan, tmp_path / "panel.svg").figure
        texts = [el.text or "" for el in ET.parse(figure).iter() if el.tag.endswith("text")]
        assert name in texts and f"{name} (vs smallest measured)" in texts, texts
        assert not [t for t in texts if other in t], texts


def test_each_run_class_is_marked_and_labelled(trained_store, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The figure marked only the recommendation, not the node counts the run classes
    request: each is plotted (48 nodes, off the sweep, too), named in the numbers'
    run_class column and marked in both panels with its label."""
    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04",
        run_classes=("largest=1024x2", "typical=48x10", "smallest=1x4", "also=1x1")))
    figures = _figures_saved(monkeypatch)
    rows = read_csv(save_scaling_plot(plan, tmp_path / "classes.png").data_csv)
    marked = {float(r["nodes"]): r for r in rows if r["run_class"]}
    assert {n: r["run_class"] for n, r in marked.items()} == {
        1: "smallest; also", 48: "typical", 1024: "largest"}
    typical = plan.run_classes[1]
    assert float(marked[48]["predicted_runtime_s"]) == pytest.approx(
        typical.predicted_runtime_s, rel=SIX_DIGITS)
    assert float(marked[48]["lower_runtime_s"]) == pytest.approx(
        typical.lower_runtime_s, rel=SIX_DIGITS)

    (figure,) = figures
    ax_time, ax_eff = figure.axes
    for ax, column in ((ax_time, "predicted_runtime_s"), (ax_eff, "predicted_efficiency")):
        (marks,) = [line for line in ax.get_lines() if line.get_label() == "run classes"]
        assert list(marks.get_xdata()) == [1, 48, 1024]
        assert list(marks.get_ydata()) == pytest.approx(
            [float(marked[n][column]) for n in (1, 48, 1024)], rel=SIX_DIGITS)
    labels = {text.get_text() for text in ax_time.texts}
    assert {"smallest; also\n1 node", "typical\n48 nodes", "largest\n1024 nodes"} <= labels


def test_advise_s_own_choice_is_marked_beside_the_count_asked(trained_store, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With --nodes 48 the star's legend read "recommended: 48 nodes", a count advise had
    not chosen, and advise's own (8 nodes) was not marked: the star is the count asked,
    and advise's choice an open star of its own in both panels, only where it differs."""
    figures = _figures_saved(monkeypatch)
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                                  nodes=48))
    assert plan.advised_nodes == 8
    rows = {float(r["nodes"]): r for r in read_csv(
        save_scaling_plot(plan, tmp_path / "asked.png").data_csv)}
    (figure,) = figures
    ax_time, ax_eff = figure.axes
    for ax, star, column in ((ax_time, "as asked (--nodes): 48 nodes", "predicted_runtime_s"),
                             (ax_eff, "as asked (--nodes)", "predicted_efficiency")):
        labels = {line.get_label(): line for line in ax.get_lines()}
        assert list(labels[star].get_xdata()) == [48]
        (advised,) = [line for label, line in labels.items()
                      if label.startswith("advise's choice")]
        assert advised.get_label() == ("advise's choice: 8 nodes" if ax is ax_time
                                       else "advise's choice")
        assert list(advised.get_xdata()) == [8]
        assert list(advised.get_ydata()) == pytest.approx([float(rows[8][column])],
                                                          rel=SIX_DIGITS)
        assert advised.get_markerfacecolor() == "none"  # open, apart from the filled star
    legend = [text.get_text() for text in ax_time.get_legend().get_texts()]
    assert "advise's choice: 8 nodes" in legend and "recommended: 48 nodes" not in legend

    same = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                                  nodes=8))
    save_scaling_plot(same, tmp_path / "same.png")
    for ax in figures[-1].axes:
        assert not [line for line in ax.get_lines()
                    if line.get_label().startswith("advise's choice")]


def test_the_numbers_mark_the_count_asked_and_advise_s_own(advise_cli,  # type: ignore[no-untyped-def]
                                                           tmp_path: Path) -> None:
    """The figure's open star, advise's choice beside --nodes 48, had no row of its own
    in the CSV, which marked 48 ``recommended`` alone: ``advised`` marks advise's own
    (8 nodes), the same row as ``recommended`` where --nodes is advise's choice too."""
    for asked, advised in ((48, 8), (8, 8)):
        figure = tmp_path / f"nodes{asked}.png"
        result = advise_cli("advise", *BERT, "--nodes", str(asked), "--plot", str(figure))
        assert result.exit_code == 0, result.output
        rows = read_csv(figure.with_suffix(".csv"))
        assert list(rows[0]) == list(CSV_COLUMNS)
        assert [r["nodes"] for r in rows if r["recommended"] == "True"] == [str(asked)]
        assert [r["nodes"] for r in rows if r["advised"] == "True"] == [str(advised)]
        assert {r["advised"] for r in rows} == {"True", "False"}


def test_a_dollar_in_a_run_class_label_is_drawn_as_typed(advise_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A label is what the user typed, not mathtext: --run-class 'x$^$=8x1' ended the
    plot in "internal error (ValueError: ... ParseSyntaxException ...)", exit 1."""
    figure = tmp_path / "dollars.png"
    result = advise_cli("advise", *BERT, "--run-class", "cost$5=8x2", "--run-class",
                        "x$^$=16x1", "--plot", str(figure))
    assert result.exit_code == 0, result.output
    assert figure.read_bytes().startswith(PNG_MAGIC)
    assert [r["run_class"] for r in read_csv(figure.with_suffix(".csv")) if r["run_class"]] == [
        "cost$5", "x$^$"]


def test_run_class_labels_close_together_do_not_overlap(trained_store, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Run classes a doubling or less apart, on an axis of ten, had their labels written
    over each other: each is moved down below those before it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04",
        run_classes=("production=32x10", "validation=48x2", "scaling=64x1", "largest=1024x1")))
    figures = _figures_saved(monkeypatch)
    save_scaling_plot(plan, tmp_path / "classes.png")
    (figure,) = figures
    renderer = FigureCanvasAgg(figure).get_renderer()
    labels = [text for text in figure.axes[0].texts if text.get_color() == "tab:purple"]
    assert len(labels) == 4
    boxes = [label.get_window_extent(renderer) for label in labels]
    for i, box in enumerate(boxes):
        for other in boxes[i + 1:]:
            assert not box.overlaps(other)


@pytest.mark.parametrize("n_columns", [len(CSV_COLUMNS) - n for n in (3, 2, 1)])
def test_an_earlier_plots_numbers_are_written_over(trained_store, tmp_path: Path,
                                                   n_columns: int) -> None:
    """The numbers of a plot made before the run_class column, the advised one or the
    ranks one are the plot's own: written over, not refused as another table."""
    earlier = tmp_path / "scaling.csv"
    values = ["1", "2", "2", "1", "3", "2", "1", "1", "True", "", "True"][:n_columns]
    earlier.write_text(",".join(CSV_COLUMNS[:n_columns]) + "\n" + ",".join(values) + "\n")
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    save_scaling_plot(plan, tmp_path / "scaling.png")
    assert list(read_csv(earlier)[0]) == list(CSV_COLUMNS)


def test_a_series_measured_in_ranks_gives_its_ranks_beside_the_nodes(
        trained_store, tmp_path: Path) -> None:
    """LULESH ran 27 to 343 ranks: at 27 ranks per node the CSV gave 2.37037 nodes alone,
    a count no one ran, where the JSON gives the ranks run. The ranks run stand beside
    the measured rows' nodes (the figure's x, kept), the ranks each other count holds
    beside it; a series measured in nodes leaves the column empty. It comes last, so the
    columns before it are where a reader took them."""
    lulesh = advise_plan(trained_store, PlanRequest(app="LULESH 2.0.3", ranks_per_node=27))
    rows = read_csv(save_scaling_plot(lulesh, tmp_path / "lulesh.png").data_csv)
    assert CSV_COLUMNS[-1] == "ranks" and list(rows[0]) == list(CSV_COLUMNS)
    measured = [r for r in rows if r["measured_runtime_s"]]
    assert [r["ranks"] for r in measured] == ["27", "64", "125", "216", "343"]
    assert [r["ranks"] for r in measured] == [
        str(n) for n in lulesh.as_dict()["measured_ranks"]]
    assert [r["nodes"] for r in measured] == ["1", "2.37037", "4.62963", "8", "12.7037"]
    swept = [r for r in rows if not r["measured_runtime_s"]]
    assert swept and all(int(r["ranks"]) == 27 * int(r["nodes"]) for r in swept)
    bert = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    assert {r["ranks"] for r in read_csv(save_scaling_plot(
        bert, tmp_path / "bert.png").data_csv)} == {""}


def test_a_notebook_draws_the_plot_into_its_own_axes(trained_store, tmp_path: Path) -> None:
    """The figure could only be saved to a file; a notebook draws it into the two Axes
    it made, as it draws its own, and its figure's title, canvas and pyplot's figures
    stay its own (a canvas made to measure the labels replaced the figure's)."""
    import matplotlib.pyplot as plt

    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", run_classes=("largest=1024x2", "typical=48x10")))
    rows = read_csv(save_scaling_plot(plan, tmp_path / "scaling.png").data_csv)
    fig, axes = plt.subplots(1, 2)
    try:
        fig.suptitle("my study")
        canvas = fig.canvas
        assert draw_scaling_plot(plan, axes) is fig
        assert fig.canvas is canvas and fig.get_suptitle() == "my study"
        assert plt.get_fignums() == [fig.number]
        (predicted,) = [line for line in axes[0].get_lines() if line.get_label() == "predicted"]
        assert list(predicted.get_xdata()) == [float(r["nodes"]) for r in rows]
        assert list(predicted.get_ydata()) == pytest.approx(
            [float(r["predicted_runtime_s"]) for r in rows], rel=SIX_DIGITS)
        assert axes[0].get_xscale() == "log" and axes[1].get_ylabel().startswith("Parallel")
        for wrong in (axes[0], [axes[0]], "axes"):
            with pytest.raises(BadInputError, match=r"^axes must be two matplotlib Axes, "
                               r"the runtime panel's and the efficiency panel's"):
                draw_scaling_plot(plan, wrong)  # type: ignore[arg-type]
    finally:
        plt.close(fig)
    assert draw_scaling_plot(plan).get_suptitle().startswith("Strong scaling: bert")


def test_pdf(advise_cli, tmp_path: Path) -> None:
    result = advise_cli("advise", *BERT, "--plot", str(tmp_path / "f.pdf"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"


def test_unknown_extension_is_refused(trained_store, tmp_path: Path) -> None:
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    with pytest.raises(BadInputError, match=r"\.png"):
        save_scaling_plot(plan, tmp_path / "figure.jpg")
    assert not (tmp_path / "figure.csv").exists()


@pytest.mark.parametrize(("bottom", "top"), [(25.0, 550.0), (40.0, 60.0), (3.0, 3000.0)])
def test_a_log_runtime_axis_labels_at_least_two_runtimes(bottom: float, top: float) -> None:
    """30-500 s holds one power of ten, and its axis read only "100": a runtime could
    not be read off it. Every range shows two labelled ticks or more."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perfpredict.report.plots import label_log_axis

    fig, ax = plt.subplots()
    try:
        ax.set_yscale("log")
        ax.set_ylim(bottom, top)
        label_log_axis(ax.yaxis)
        fig.canvas.draw()
        labels = [tick.get_text() for tick in
                  ax.get_yticklabels(which="both") if tick.get_text()
                  and bottom <= tick.get_position()[1] <= top]
    finally:
        plt.close(fig)
    assert len(labels) >= 2, labels
    assert all(bottom <= float(text) <= top for text in labels), labels  # 40, not 4x10^1


def test_a_figure_file_that_is_no_path_is_bad_input() -> None:
    """``save_scaling_plot(plan, 5)`` was a TypeError from inside pathlib; the file is
    checked before the figure is drawn."""
    with pytest.raises(BadInputError, match=r"^the figure file is named by its path, a "
                       r"text or a Path, not an int$"):
        check_plot_path(5)  # type: ignore[arg-type]


def test_a_run_class_below_the_measurements_lies_in_a_shaded_range(
        trained_store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LULESH measured at 27-343 ranks is 3.375-42.9 nodes at 8 ranks per node: a class on
    1 node extends the axis down to a range the laws extrapolate into, which was drawn
    unshaded, as if measured; only the range above the largest was shaded."""
    from matplotlib.colors import to_rgba

    plan = advise_plan(trained_store, PlanRequest(
        app="LULESH 2.0.3", ranks_per_node=8, run_classes=("tiny=1x2",)))
    smallest, largest = plan.measured[0].nodes, plan.measured[-1].nodes
    figures = _figures_saved(monkeypatch)
    save_scaling_plot(plan, tmp_path / "below.png")
    (figure,) = figures
    for ax in figure.axes:
        spans = sorted(
            (float(min(xs)), float(max(xs))) for patch in ax.patches
            if patch.get_facecolor() == to_rgba("0.93")
            for xs in [patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]])
        assert spans == [(1.0, smallest), (largest, float(plan.candidates[-1].nodes))]
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()].count(
            "beyond the measurements") == 1

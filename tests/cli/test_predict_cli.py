"""train / estimate / evaluate / datasets through the CLI runner."""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, on_a_terminal, shared_path

BERT = ["--app", "bert", "--system", "dgxa100_ngc22.04_pytorch (NVIDIA)"]


def test_estimate_answers_from_the_bundled_predictor_on_an_empty_store(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("estimate", *BERT, "--nodes", "1024", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["lower_runtime_s"] < doc["predicted_runtime_s"] < doc["upper_runtime_s"]
    assert doc["beyond_measured_range"] is True
    assert doc["measured_scales"] == [1.0, 8.0, 128.0, 512.0]
    assert 0 < doc["efficiency"] < 1
    assert doc["formula"].startswith("T(p) =")


def test_an_estimate_beyond_the_machine_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    """The laws answer at any node count; the store's catalog (seeded with the shipped
    entries by its first use: here 'systems list') gives Frontier 9,856 nodes."""
    assert cli("systems", "list").exit_code == 0
    wdmerger = ["--app", "Castro-wdmerger", "--system", "Frontier", "--format", "json"]
    beyond = ("20000 nodes are more than Frontier has (9,856 in the catalog): no job runs at "
              "this scale there")
    for nodes, said in (("9856", False), ("20000", True)):
        result = cli("estimate", *wdmerger, "--nodes", nodes)
        assert result.exit_code == 0, result.output
        assert (beyond in json.loads(result.stdout)["notes"]) is said


def test_one_estimate_as_csv_keeps_its_notes(cli) -> None:  # type: ignore[no-untyped-def]
    """``--format csv`` of one query dropped every note (a list), so a script reading it
    never saw "more than Frontier has" or "extrapolating N doublings"; its last column
    is now ``notes``, joined with "; " as a query file's row is."""
    assert cli("systems", "list").exit_code == 0
    query = ["estimate", "--app", "Castro-wdmerger", "--system", "Frontier", "--nodes",
             "20000"]
    result = cli(*query, "--format", "csv")
    assert result.exit_code == 0, result.output
    header, row = csv.reader(io.StringIO(result.stdout))
    assert header[-1] == "notes"
    assert row[-1] == "; ".join(json.loads(cli(*query, "--format", "json").stdout)["notes"])
    assert "20000 nodes are more than Frontier has" in row[-1]


def test_an_empty_query_file_is_said_to_be_empty(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An empty file (a script's query generator that wrote nothing) was refused as "the
    header has no 'app' column", of a header that is not there."""
    queries = tmp_path / "q.csv"
    queries.write_text("", encoding="utf-8")
    result = cli("estimate", "--input", str(queries))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {queries}:1: the query file is empty; give a header "
                             "line (at least app,nodes) and one row per query\n")


def test_a_query_file_beyond_the_machine_names_the_node_count_as_written(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """A query file's 1e6 nodes were noted as "1e+06 nodes are more than Frontier has",
    where --nodes 1000000 reads "1000000 nodes"."""
    assert cli("systems", "list").exit_code == 0
    queries = tmp_path / "q.csv"
    queries.write_text("app,system,nodes\nCastro-wdmerger,Frontier,1e6\n"
                       "Castro-wdmerger,Frontier,1000000\n", encoding="utf-8")
    result = cli("estimate", "--input", str(queries), "--format", "json")
    assert result.exit_code == 0, result.output
    said = ("1000000 nodes are more than Frontier has (9,856 in the catalog): no job runs "
            "at this scale there")
    assert [said in row["notes"] for row in json.loads(result.stdout)] == [True, True]


def test_an_estimate_beyond_the_machine_says_so_without_a_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user, no store yet: the bundled predictor answers and the shipped catalog
    gives Frontier 9,856 nodes (before, only a store's catalog was read, and 65,536
    nodes of Frontier were estimated without a word)."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from perfpredict.estimate import Query, estimate, load_predictor

    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path))
    beyond = ("65536 nodes are more than Frontier has (9,856 in the catalog): no job runs "
              "at this scale there")
    for nodes, said in ((9856, False), (65536, True)):
        result = CliRunner().invoke(app, ["estimate", "--app", "Castro-wdmerger", "--system",
                                          "Frontier", "--nodes", str(nodes), "--format",
                                          "json"])
        assert result.exit_code == 0, result.output
        assert (beyond in json.loads(result.stdout)["notes"]) is said
    assert not (tmp_path / "perfpredict.db").exists()  # read, nothing created
    query = Query(app="Castro-wdmerger", system="Frontier", nodes=65536)
    library = estimate(None, query)
    assert beyond in library.notes
    # a list of queries is told what each of them alone is (it was not)
    assert load_predictor(None).estimate_many([query])[0].notes == library.notes


def test_a_layout_no_series_was_measured_with_is_said_not_ignored(cli) -> None:  # type: ignore[no-untyped-def]
    """--ranks-per-node 16 for a code measured at 4 ranks per node was answered from the
    4-rank series without a word; another layout scales otherwise, so it is refused as an
    unmeasured --variant is, naming the layouts measured."""
    dell = ["--app", "bert", "--system", "XE8545x4A100-SXM-40GB (Dell)", "--nodes", "8"]
    result = cli("estimate", *dell, "--ranks-per-node", "16")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: bert has no runs with 16 ranks per node; measured: 4 (give one of those "
        "in --ranks-per-node, or none for the measured layout)")
    measured = cli("estimate", *dell, "--ranks-per-node", "4")
    assert measured.exit_code == 0 and "could not be checked" not in measured.output


def test_a_layout_the_runs_do_not_record_is_said_unchecked(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A hand-written CSV without ranks_per_node: its series fits any layout, so
    --ranks-per-node 7 was answered as the runs' curve without a word, where a series that
    records its layout refuses another."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"mycode,mysys,{n},{1000 / n + 50}\n" for n in (1, 2, 4, 8)))
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    query = ["estimate", "--app", "mycode", "--nodes", "16", "--format", "json"]
    result = cli(*query, "--ranks-per-node", "7")
    assert result.exit_code == 0, result.output
    assert ("the runs of mycode on mysys [default size] do not record their ranks per "
            "node, so the 7 given in --ranks-per-node could not be checked against them: the "
            "estimate is their curve's, whatever layout they ran with"
            ) in json.loads(result.stdout)["notes"]
    plain = json.loads(cli(*query).stdout)
    assert not any("could not be checked" in note for note in plain["notes"])


def test_far_below_the_measured_range_is_flagged(cli) -> None:  # type: ignore[no-untyped-def]
    """Below the smallest measured scale the laws extrapolate downward, which no backtest
    measures: flagged and said, as extrapolation beyond the largest scale is (CosmoFlow on
    Cori was measured at 512 and 1,024 nodes; at 1 node it said "efficiency 715%" and
    nothing else). One doubling is said "1 doubling", not "1.0 doublings"."""
    cosmoflow = ["--app", "cosmoflow", "--system", "coriknl"]
    for nodes, below in (("512", None), ("8", "6 doublings"), ("256", "1 doubling")):
        result = cli("estimate", *cosmoflow, "--nodes", nodes, "--format", "json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert doc["measured_scales"][0] == 512.0
        assert (doc["below_measured_range"], doc["beyond_measured_range"]) == (
            below is not None, False)
        said = [note for note in doc["notes"] if "below the smallest measured scale" in note]
        assert said == ([] if below is None else [
            f"{below} below the smallest measured scale (512 nodes): the laws "
            "extrapolated downward, which no backtest measures, and the interval is the one "
            "calibrated between measured scales; a run nearer this scale would tell"])


def test_the_ensemble_names_the_slope_drift_only_where_it_joins_and_splits_its_time(cli) -> None:  # type: ignore[no-untyped-def]
    """The slope drift is a member of a strong-scaling series' mean beyond its measured
    range only, and the formula says so there alone; the mean's time is split in the
    proportions of its Amdahl + log member, adding up to the prediction."""
    docs = {}
    for nodes in ("64", "1024"):  # inside (1-512 measured) and beyond
        result = cli("estimate", *BERT, "--nodes", nodes, "--format", "json")
        assert result.exit_code == 0, result.output
        docs[nodes] = json.loads(result.stdout)
    assert docs["64"]["law"] == docs["1024"]["law"] == "ensemble"
    assert "slope drift" not in docs["64"]["formula"]
    assert docs["1024"]["formula"].endswith(
        "the pooled slope drift from the largest measured scale, moved onto the runs "
        "measured at 512 nodes")
    for doc in docs.values():
        assert set(doc["breakdown_s"]) == {"serial_s", "parallel_s", "communication_s"}
        assert sum(doc["breakdown_s"].values()) == pytest.approx(doc["predicted_runtime_s"])


def test_inside_the_measured_range_the_formula_names_the_runs_it_was_moved_onto(cli) -> None:  # type: ignore[no-untyped-def]
    """At a measured node count the estimate is the median of the runs there, between two
    it is moved onto the runs at both, and beyond the range (bert scales strongly) onto
    the runs at the largest measured scale."""
    docs = {}
    for nodes in ("8", "64", "1024"):  # measured, between 8 and 128, beyond 512
        result = cli("estimate", *BERT, "--nodes", nodes, "--format", "json")
        assert result.exit_code == 0, result.output
        docs[nodes] = json.loads(result.stdout)
    assert docs["8"]["formula"].endswith("moved onto the runs measured at 8 nodes")
    assert docs["8"]["predicted_runtime_s"] == pytest.approx(174.459)  # the 8-node median
    assert docs["64"]["formula"].endswith("moved onto the runs measured at 8 and 128 nodes")
    assert docs["1024"]["formula"].endswith("moved onto the runs measured at 512 nodes")


def test_estimate_explain_prints_a_chain_that_multiplies_out(cli) -> None:  # type: ignore[no-untyped-def]
    """The law line named the slope drift, the move and the correction without their
    values; --explain prints each member's runtime, the base and each step's factor, so
    that a reader multiplies the printed numbers out to the printed estimate."""
    result = cli("estimate", *BERT, "--nodes", "2048", "--explain")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index("  how it was made at 2048 nodes (each step multiplies the runtime "
                        "before it):")
    chain = lines[start + 1:]
    assert [line.split("  ")[2].strip() for line in chain] == [
        "Amdahl", "Amdahl + log", "power law", "slope drift", "base", "measured move",
        "correction", "peers", "ideal scaling", "estimate"]
    seconds = [float(re.search(r"([\d,.]+) s  ", line)[1].replace(",", ""))  # type: ignore[index]
               for line in chain]
    factors = [float(re.search(r"  x ([\d.]+): ", line)[1])  # type: ignore[index]
               for line in chain[5:9]]
    members, base, estimate = seconds[:4], seconds[4], seconds[9]
    assert base == pytest.approx(math.prod(members) ** 0.25, rel=2e-3)
    assert estimate == pytest.approx(base * math.prod(factors), rel=2e-3)
    assert "x 0.7507: the learned overhead coefficient c = 0.7507" in chain[6]
    assert chain[9].startswith("    estimate              5.698 s  90% interval 1.212 s - "
                               "21.02 s")


def test_estimate_explain_gives_the_chain_in_json(cli) -> None:  # type: ignore[no-untyped-def]
    castro = ["--app", "Castro-flame_wave", "--system", "Frontier", "--problem-size",
              "He 25cm", "--variant", "net=iso7|integ=VODE|campaign=2026", "--nodes", "2048",
              "--format", "json"]
    plain = json.loads(cli("estimate", *castro).stdout)
    assert "explanation" not in plain
    result = cli("estimate", *castro, "--explain")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    explanation = doc.pop("explanation")
    assert doc == plain
    assert [step["step"] for step in explanation["steps"]] == [
        "measured_move", "correction", "peers", "ideal_scaling"]
    assert explanation["steps"][-1]["runtime_s"] == pytest.approx(doc["predicted_runtime_s"])
    assert len(explanation["peers"]) == doc["peer_series"] == 10
    assert set(explanation["peers"][0]) == {"series", "speedup", "weight"}
    assert explanation["peer_weight"] == 0.5


def test_estimate_explain_below_the_measured_range_does_not_say_inside(cli) -> None:  # type: ignore[no-untyped-def]
    """At 40 ranks, below P3DFFT's smallest measured 128, the correction step read "none
    inside the measured range", beside a note that the estimate lies 1.7 doublings
    below it."""
    result = cli("estimate", "--app", "P3DFFT2", "--problem-size", "512x512x512", "--nodes",
                 "1", "--explain", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["below_measured_range"] is True
    (correction,) = [s for s in doc["explanation"]["steps"] if s["step"] == "correction"]
    assert correction["factor"] == 1
    assert correction["detail"].startswith(
        "none below the measured range, where the runs at its smallest scale set the level")


def test_estimate_table_names_law_interval_and_evidence(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("estimate", *BERT, "--nodes", "256")
    assert result.exit_code == 0, result.output
    assert "90% interval" in result.stdout
    assert "rests on 40 runs at 1, 8, 128, 512 nodes" in result.stdout
    assert "% against 1 node\n" in result.stdout  # bert's smallest measured scale
    # a confidence the table would round to 100% is printed as asked
    result = cli("estimate", *BERT, "--nodes", "256", "--confidence", "0.999")
    assert "99.9% interval" in result.stdout


def test_an_interval_at_the_widest_calibration_error_says_it_may_be_too_narrow(cli) -> None:  # type: ignore[no-untyped-def]
    """bert's interval a doubling out rests on 751 calibration errors there: at 99.9% it
    is the widest of them (the one above 99.5% is not), which no confidence label
    should pass off as resolved."""
    said = "interval is as wide as the widest error the model was calibrated on"
    notes = {c: json.loads(cli("estimate", *BERT, "--nodes", "1024", "--confidence", c,
                               "--format", "json").stdout)["notes"] for c in ("0.995", "0.999")}
    assert not any(said in note for note in notes["0.995"]), notes["0.995"]
    assert any(note.startswith(f"at 99.9% the {said}") for note in notes["0.999"]), notes


@pytest.mark.parametrize("confidence", ["0.9999", "0.99999"])
def test_a_confidence_wider_than_the_intervals_resolve_is_refused(  # type: ignore[no-untyped-def]
        cli, confidence: str) -> None:
    """The intervals' tail levels end at 99.98%: bert's 99.95%, 99.99% and 99.999%
    intervals were one and the same, each labelled with the level asked for, and a Castro
    series' read past the last level (0.24-201 s at 99.98%, 0.007-6,929 s at 99.99%)."""
    widest = cli("estimate", *BERT, "--nodes", "256", "--confidence", "0.9998")
    assert widest.exit_code == 0, widest.output
    for command in (("estimate", *BERT, "--nodes", "256"), ("advise", *BERT)):
        result = cli(*command, "--confidence", confidence)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"Error: --confidence {confidence} is wider than the predictor's intervals "
            "resolve (their widest is 0.9998); ask for 0.9998 or less")


def test_an_estimate_of_several_matching_series_names_those_it_did_not_use(cli) -> None:  # type: ignore[no-untyped-def]
    """'--app bert' matches 31 series (systems, submitters): the note names which others
    match, so the user sees what to narrow by, and says how many it does not name."""
    doc = json.loads(cli("estimate", "--app", "bert", "--nodes", "64", "--format",
                         "json").stdout)
    note = next(n for n in doc["notes"] if "series match" in n)
    assert note.startswith("31 series match; using the best measured one (most scales, "
                           "then most runs), not bert on "), note
    assert doc["series"] not in note and note.count("bert on ") == 3
    assert "; and 27 more (narrow with --system / --problem-size / --variant)" in note


def test_estimate_table_prints_subsecond_runtimes_in_significant_digits(cli) -> None:  # type: ignore[no-untyped-def]
    """PencilFFTs times one transform pair in hundredths of a second: the table shows three
    significant digits of it, not "0.0 s", and the figures the JSON gives."""
    fft = ["--app", "PencilFFTs.jl", "--problem-size", "512x512x512 real-to-complex 3D FFT",
           "--nodes", "256"]
    doc = json.loads(cli("estimate", *fft, "--format", "json").stdout)
    assert doc["upper_runtime_s"] < 1
    result = cli("estimate", *fft)
    assert result.exit_code == 0, result.output
    line = result.stdout.splitlines()[1]
    assert line == (f"  256 nodes: {doc['predicted_runtime_s']:.3g} s (90% interval "
                    f"{doc['lower_runtime_s']:.3g} - {doc['upper_runtime_s']:.3g} s)")
    assert " 0.0 s" not in result.stdout


def test_estimate_says_when_an_application_has_nothing_to_borrow(cli) -> None:  # type: ignore[no-untyped-def]
    """LULESH is one series in the bundled data: its interval is calibrated for a new
    application, and the estimate says so; BERT's many series need no such note."""
    lulesh = cli("estimate", "--app", "LULESH 2.0.3", "--nodes", "20", "--ranks-per-node", "36",
                 "--format", "json")
    assert lulesh.exit_code == 0, lulesh.output
    assert any("no other series of LULESH 2.0.3 was trained on" in note
               for note in json.loads(lulesh.stdout)["notes"])
    bert = cli("estimate", *BERT, "--nodes", "1024", "--format", "json")
    assert not any("no other series" in note for note in json.loads(bert.stdout)["notes"])


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--app", "bert", "--nodes", "0"], 2, "nodes must be a positive number"),
        (["--app", "bert", "--nodes", "8", "--confidence", "1.5"], 2, "confidence"),
        (["--app", "bret", "--nodes", "8"], 1, "did you mean bert"),
        (["--nodes", "8"], 2, "pass --app and --nodes"),
        (["--app", "RELeARN", "--nodes", "8", "--problem-size", "nope"], 1, "measured:"),
        # MLPerf writes DGX A100 as dgxa100: the ten systems listed were others, none of these
        (["--app", "bert", "--nodes", "8", "--system", "DGX A100"], 1,
         "measured: dgxa100_ngc20.06_pytorch (NVIDIA); dgxa100_ngc21.05_pytorch (NVIDIA); "
         "dgxa100_ngc21.09_pytorch (NVIDIA); HPE-"),
        # the query was whole: "pass --app and --nodes" named neither the cause nor the fix
        (["--app", "bert", "--nodes", "8", "--explain", "--format", "csv"], 2,
         "an explanation (--explain) is a chain of steps that one CSV row cannot hold; ask "
         "for it in json (--format json, its field 'explanation') or as the table (--format "
         "table)"),
        (["--input", "q.csv", "--explain"], 2,
         "--explain explains one query, and --input answers a file of them; drop --explain, "
         "or ask for one query with --app and --nodes"),
        # each row is a whole query: an option beside the file was dropped without a word
        (["--input", "q.csv", "--app", "bert", "--nodes", "8"], 2,
         "--input takes every query from the file, so --app, --nodes would be ignored"),
        (["--input", "q.csv", "--system", "Frontier"], 2, "so --system would be ignored"),
        (["--input", "q.csv", "--ranks-per-node", "4", "--io-bytes", "1e9"], 2,
         "--ranks-per-node, --io-bytes would be ignored; put them in the file's columns"),
        (["--input", "q.csv", "--flops", "1e18"], 2,
         "so --flops would be ignored; put it in the file's columns"),
        # a table asked for by name came out as CSV, exit 0
        (["--input", "q.csv", "--format", "table"], 2,
         "--input writes one row per query as csv (the default) or json; pass --format csv"),
        # advise walltime's option: "No such option", and nothing of what --input reads
        (["--input", "q.csv", "--input-format", "darshan"], 2,
         "--input-format is an option of 'perfpredict advise walltime', not of 'estimate': "
         "estimate --input reads one format, a CSV of queries (columns app, nodes and any "
         "of system, problem_size, ...; plain or gzipped), so drop it; a scheduler log's "
         "jobs are advised with 'perfpredict advise walltime --input FILE --input-format "
         "FORMAT', a Darshan log is stored with 'perfpredict ingest darshan FILE'"),
    ],
)
def test_estimate_bad_requests_get_one_line_and_exit_code(cli, args, code, message) -> None:  # type: ignore[no-untyped-def]
    result = cli("estimate", *args)
    assert result.exit_code == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]
    assert "Traceback" not in result.output


def test_estimate_input_keeps_rows_order_and_input_columns(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,runtime_s,note\nresnet,64,1,a\nbert,16,,b\nresnet,2,99,c\n"
                       "resnet,64,5000,d\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["note"] for r in rows] == ["a", "b", "c", "d"]
    assert [r["runtime_s"] for r in rows] == ["1", "", "99", "5000"]
    for r in rows:
        assert float(r["lower_runtime_s"]) <= float(r["predicted_runtime_s"]) <= float(r["upper_runtime_s"])
    # runtime_s is ignored: the same query with another runtime_s gets the same answer
    answers = ("predicted_runtime_s", "lower_runtime_s", "upper_runtime_s", "speedup",
               "efficiency")
    assert [rows[3][c] for c in answers] == [rows[0][c] for c in answers]
    assert rows[0]["predicted_runtime_s"] != rows[2]["predicted_runtime_s"]

    # efficiency is speedup per unit of scale: for one series, speedup / efficiency goes
    # as the node count (64 and 2 nodes of resnet)
    def scale(row: dict[str, str]) -> float:
        return float(row["speedup"]) / float(row["efficiency"])

    assert scale(rows[0]) / scale(rows[2]) == pytest.approx(64 / 2, rel=1e-4)


def test_estimate_input_answers_in_json_too(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--format json was ignored with --input (CSV came out, exit 0): one object per
    query, in the file's order, the same answers as the CSV."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,note\nresnet,64,a\nbert,16,b\n")
    as_json = cli("estimate", "--input", str(queries), "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    rows = json.loads(as_json.stdout)
    csv_text = cli("estimate", "--input", str(queries), "--format", "csv").stdout
    assert cli("estimate", "--input", str(queries)).stdout == csv_text  # csv by default
    as_csv = list(csv.DictReader(io.StringIO(csv_text)))
    assert [r["note"] for r in rows] == ["a", "b"]
    for row, cells in zip(rows, as_csv, strict=True):
        assert row["predicted_runtime_s"] == pytest.approx(float(cells["predicted_runtime_s"]),
                                                           rel=1e-5)


def test_estimate_input_reads_standard_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--input -`` was taken for a file named "-" ("no such file"), where ``ingest`` and
    ``advise walltime`` read standard input: the same answers as from the file, and a bad
    row named ``<stdin>`` with its line."""
    text = "app,nodes,note\nresnet,64,a\nbert,16,b\n"
    queries = tmp_path / "q.csv"
    queries.write_text(text)
    piped = cli("estimate", "--input", "-", input=text)
    assert piped.exit_code == 0, piped.output
    assert piped.stdout == cli("estimate", "--input", str(queries)).stdout
    bad = cli("estimate", "--input", "-", input="app,nodes\nresnet,64\nresnet,many\n")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: <stdin>:3: column 'nodes' must be a number")
    unknown = cli("estimate", "--input", "-", input="app,nodes\nno-such-app,8\n")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("Error: <stdin>:2: no trained series for application")


def test_estimate_input_that_is_not_there_is_said_as_every_missing_file_is(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """It was "cannot read the query file: [Errno 2] No such file or directory: ...",
    the path named twice, where ingest, advise walltime and systems add say this."""
    missing = tmp_path / "queries.csv"
    for args in (["estimate", "--input"], ["ingest", "csv"]):
        result = cli(*args, str(missing))
        assert result.exit_code == 2
        assert result.stderr == f"Error: {missing}: no such file; check the path\n"


def test_estimate_input_saved_as_csv_utf8_by_a_spreadsheet_is_read(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A spreadsheet's "CSV UTF-8" (the save the UTF-16 refusal advises) starts with a
    byte-order mark: the query file was refused as having no 'app' column, its header's
    first name read as '\\ufeffapp'. Its rows are answered as the file without it."""
    plain, marked = tmp_path / "q.csv", tmp_path / "q-excel.csv"
    plain.write_text("app,nodes\nresnet,64\n")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    result = cli("estimate", "--input", str(marked), "--format", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == cli("estimate", "--input", str(plain), "--format", "csv").stdout


def test_estimate_input_reads_gzip_as_ingest_csv_does(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A gzipped query file was refused as "the line is not UTF-8 text (perhaps
    Latin-1 ...)" at line 1; it is read as ``ingest csv`` reads one, by its content, from
    a file or piped in; a damaged one names where its stream broke, and a file of
    another compression the command that decompresses it."""
    import gzip

    plain = tmp_path / "q.csv"
    plain.write_text("app,nodes\nresnet,64\nbert,16\n")
    packed = tmp_path / "q.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = cli("estimate", "--input", str(plain)).stdout
    for given, piped in ((str(packed), None), ("-", packed.read_bytes())):
        result = cli("estimate", "--input", given, input=piped)
        assert result.exit_code == 0, result.output
        assert result.stdout == expected
    latin = tmp_path / "latin.csv.gz"
    latin.write_bytes(gzip.compress("app,nodes\nresnet,64\nr\xe9snet,8\n".encode("latin-1")))
    result = cli("estimate", "--input", str(latin))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {latin}:3: the line is not UTF-8 text")
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed.read_bytes()[:-12])
    result = cli("estimate", "--input", str(cut))
    assert result.exit_code == 2 and result.stdout == ""
    assert re.match(rf"Error: {re.escape(str(cut))}:\d+: the compressed stream is damaged "
                    r"after line \d+ \(.*\); re-copy the file\n$", result.stderr)
    zipped = tmp_path / "q.csv.bz2"
    zipped.write_bytes(b"BZh91AY&SY" + bytes(20))
    result = cli("estimate", "--input", str(zipped))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {zipped}: the file is bzip2-compressed; decompress it "
                             "first (bunzip2 q.csv.bz2), or compress it with gzip, which is "
                             "read as it is\n")


def test_estimate_input_refuses_a_darshan_log_saying_what_it_is(cli) -> None:  # type: ignore[no-untyped-def]
    """A Darshan log was "the line is not UTF-8 text (perhaps Latin-1 or Windows-1252);
    save the file as UTF-8 (a spreadsheet's 'CSV UTF-8')", a fix for another file; it
    is said to be an I/O log, from a file or piped in, with the command that reads one."""
    log = shared_path("logs", "darshan", "imbalanced_io__imbalanced-io.darshan")
    for given, piped in ((str(log), None), ("-", log.read_bytes())):
        result = cli("estimate", "--input", given, input=piped)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr == (f"Error: {'<stdin>' if piped else log}: the file is a "
                                 "Darshan I/O log, not a query file (a CSV with at least "
                                 "the columns app and nodes, one row per query); store its "
                                 "I/O with 'perfpredict ingest darshan'\n")


@pytest.mark.parametrize(("log", "said"), [
    (("slurm", "xdmod-sacct-accounting-logs.psv"), "Slurm 'sacct -P' output (sacct)"),
    (("swf", "KTH-SP2-1996-2.1-cln.swf.gz"), "Standard Workload Format (swf)"),
    (("pbs", "xdmod-accounting-logs.log"), "PBS / Torque / PBS Pro accounting logs (pbs)"),
    (("slurm", "clockwork-sacct_1.json"), "Slurm 'sacct --json' (sacct-json)"),
])
def test_estimate_input_refuses_a_scheduler_log_saying_what_it_is(  # type: ignore[no-untyped-def]
        cli, log: tuple[str, str], said: str) -> None:
    """A scheduler's log was "the header has no 'app' column; a query file needs at
    least app and nodes; add the column 'app' to the header", as if a column were all
    it lacked; it holds jobs that ran, and the fix names the commands that read them."""
    path = shared_path("logs", *log)
    fmt = said.rsplit("(", 1)[1].rstrip(")")
    result = cli("estimate", "--input", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"Error: {path}:1: the file looks like {said}, not csv; read it "
                             f"with 'perfpredict ingest {fmt}' to store its jobs, or "
                             "'perfpredict advise walltime' to advise such jobs their "
                             "walltimes; a query file is a CSV with at least the columns "
                             "app and nodes, one row per query\n")


@pytest.mark.parametrize(("nodes", "said"), [
    ("4.5", ":2: column 'nodes' must be a whole number, got 4.5"),
    ("1e23", ":2: column 'nodes' must be at most 2147483647, got 1e+23"),
])
def test_estimate_input_refuses_node_counts_no_job_has(cli, tmp_path: Path, nodes: str,  # type: ignore[no-untyped-def]
                                                       said: str) -> None:
    """--nodes takes whole numbers; a query file answered 4.5 nodes, and 1e23 with an
    interval up to 1e45 s."""
    queries = tmp_path / "q.csv"
    queries.write_text(f"app,nodes\nresnet,{nodes}\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: {queries}{said}"
    one = cli("estimate", "--app", "resnet", "--nodes", "99999999999999999999999")
    assert one.exit_code == 2 and "--nodes must be at most 2147483647" in one.stderr


#: A bad query, as estimate's options and as a query file's row: (options, header, row,
#: what is wrong). The command line names the option, the file its column.
BAD_QUERIES = [
    (["--app", "bert", "--nodes", "0"], "app,nodes", "bert,0",
     "{nodes} must be a positive number, got 0"),
    (["--app", "bert", "--nodes", "4", "--ranks-per-node", "-8"], "app,nodes,ranks_per_node",
     "bert,4,-8", "{ranks_per_node} must be a positive number, got -8"),
    (["--app", "bert", "--nodes", "4", "--threads-per-rank", "1.5"],
     "app,nodes,threads_per_rank", "bert,4,1.5",
     "{threads_per_rank} must be a whole number, got 1.5"),
    (["--app", "bert", "--nodes", "3", "--ranks-per-node", "0.5"], "app,nodes,ranks_per_node",
     "bert,3,0.5", "{ranks_per_node} 0.5 on 3 nodes is 1.5 ranks; give a ranks per node "
     "that makes whole ranks"),
    # advise sweeps from one node: it read "0.5 on 1 nodes"
    (["--app", "bert", "--nodes", "1", "--ranks-per-node", "0.5"], "app,nodes,ranks_per_node",
     "bert,1,0.5", "{ranks_per_node} 0.5 on 1 node is 0.5 ranks; give a ranks per node "
     "that makes whole ranks"),
    (["--app", "bert", "--nodes", "4", "--io-bytes", "-1"], "app,nodes,io_bytes", "bert,4,-1",
     "{io_bytes} must be zero or more, got -1"),
    (["--app", "bert", "--nodes", "4", "--mem-bytes", "-5e9"], "app,nodes,mem_bytes",
     "bert,4,-5e9", "{mem_bytes} must be zero or more, got -5e+09"),
    (["--app", "LULESH 2.0.3", "--nodes", "4"], "app,nodes", "LULESH 2.0.3,4",
     "LULESH 2.0.3 on opal [s=30 per rank] is measured in MPI ranks, not nodes; give "
     "{ranks_per_node} so the node count can be turned into ranks"),
    (["--app", "bert", "--system", "XE8545x4A100-SXM-40GB (Dell)", "--nodes", "8",
      "--ranks-per-node", "16"], "app,system,nodes,ranks_per_node",
     "bert,XE8545x4A100-SXM-40GB (Dell),8,16",
     "bert has no runs with 16 ranks per node; measured: 4 (give one of those in "
     "{ranks_per_node}, or none for the measured layout)"),
]


@pytest.mark.parametrize("value", ["inf", "1e400", "nan"])
def test_a_volume_that_is_not_finite_is_refused_as_such(cli, value: str) -> None:  # type: ignore[no-untyped-def]
    """'--io-bytes inf' was refused as "must be zero or more, got inf", which it is."""
    result = cli("estimate", "--app", "bert", "--nodes", "4", "--io-bytes", value)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: --io-bytes must be finite, got {float(value):g}"


@pytest.mark.parametrize(("options", "header", "row", "wrong"), BAD_QUERIES)
def test_a_bad_query_names_the_option_typed_or_the_column_written(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, options: list[str], header: str, row: str, wrong: str) -> None:
    """Both shared one wording, "nodes must be a positive number", which named neither
    the --nodes a command line typed nor the column 'nodes' a file's row wrote (and
    "ranks-per-node" is neither the option nor the column ranks_per_node); a query
    file's user was told to "pass --ranks-per-node"."""
    fields = ("nodes", "ranks_per_node", "threads_per_rank", "io_bytes", "mem_bytes")
    typed = cli("estimate", *options)
    assert typed.exit_code in (1, 2) and "Traceback" not in typed.output
    assert typed.stderr.strip() == "Error: " + wrong.format(
        **{f: "--" + f.replace("_", "-") for f in fields})
    queries = tmp_path / "q.csv"
    good = ",".join({"app": "bert", "nodes": "4"}.get(c, "") for c in header.split(","))
    queries.write_text(f"{header}\n{good}\n{row}\n")
    written = cli("estimate", "--input", str(queries))
    assert written.exit_code == typed.exit_code
    assert written.stderr.strip() == f"Error: {queries}:3: " + wrong.format(
        **{f: f"column {f!r}" for f in fields})
    assert written.stdout == ""


def test_a_query_row_without_an_app_or_a_node_count_names_the_empty_column(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    queries = tmp_path / "q.csv"
    for row, empty in (("bert,", "column 'nodes' is"), (",4", "column 'app' is"),
                       ('"  ",4', "column 'app' is"),
                       (",", "column 'app' and column 'nodes' are")):
        queries.write_text(f"app,nodes\n{row}\n")
        result = cli("estimate", "--input", str(queries))
        assert result.exit_code == 2
        assert result.stderr.strip() == (f"Error: {queries}:2: {empty} empty; every row "
                                         "needs an app and a node count")


def test_estimate_input_bad_row_names_file_and_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes\nresnet,64\nresnet,many\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert f"{queries}:3:" in result.stderr
    queries.write_text("app,nodes,nodes\nresnet,64,128\n")  # which nodes is meant?
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert f"{queries}:1: the header names nodes more than once" in result.stderr
    # another table's names: the renames it needs, as ingest csv says them (a "time"
    # column means nothing to a query, so it is not named)
    queries.write_text("Application,num_nodes,time\nresnet,64,5\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert (f"{queries}:1: the header has no 'app' column; a query file needs at least app "
            "and nodes; rename Application to app, num_nodes to nodes in the header\n"
            ) == result.stderr.removeprefix("Error: ")
    # a spreadsheet's export separated by semicolons: one column, and said why
    queries.write_text("app;nodes\nresnet;64\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert result.stderr.rstrip().endswith(
        "its columns are separated by semicolons, not commas; save the table as "
        "comma-separated values with '.' as the decimal point")
    # a header of one column is no sign of another separator: a column is missing
    for header, missing in (("nodes", "app"), ("app", "nodes")):
        queries.write_text(f"{header}\n64\n")
        result = cli("estimate", "--input", str(queries), "--format", "csv")
        assert result.exit_code == 2
        assert result.stderr == (
            f"Error: {queries}:1: the header has no '{missing}' column; a query file needs "
            f"at least app and nodes; add the column '{missing}' to the header (see "
            "'perfpredict estimate --help')\n")
    # a query the predictor cannot answer names its line too (a blank line skipped)
    queries.write_text("app,nodes\nresnet,64\n\nno-such-app,8\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {queries}:4: no trained series for application "
                                    "'no-such-app'")
    queries.write_bytes("app,nodes\nresnet,64\n".encode("utf-16"))  # "Unicode text"
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert result.stderr.rstrip().endswith("the file is UTF-16 or UTF-32 text; save it as UTF-8 "
                                           "(a spreadsheet's 'CSV UTF-8')")


#: A query file whose third line is bad in each way a batch refuses one: read as a row,
#: checked as a query, answered; the exit code and what the error says after the line.
BAD_THIRD_LINES = {
    "cells past the header": (b"resnet,8,,x", 2, "expected 3 fields as in the header, found 4"),
    "no number": (b"resnet,many,", 2, "column 'nodes' must be a number, got 'many'"),
    "no app": (b",8,", 2, "column 'app' is empty"),
    # a missing value's mark, which leaves an optional column out: said to be empty
    "nan nodes": (b"resnet,nan,", 2, "column 'nodes' must be a number, got 'nan'; every row "
                  "needs a node count"),
    "part of a node": (b"resnet,4.5,", 2, "column 'nodes' must be a whole number, got 4.5"),
    "a bad layout": (b"resnet,8,-4", 2, "column 'ranks_per_node' must be a positive number"),
    "an unknown app": (b"no-such-app,8,", 1, "no trained series for application 'no-such-app'"),
    "Latin-1": ("r\xe9snet,8,".encode("latin-1"), 2, "the line is not UTF-8 text (perhaps "
                "Latin-1 or Windows-1252); save the file as UTF-8"),
    "a cell over the csv module's limit": (b"resnet,8," + b"1" * 200_000, 2,
                                           "not a readable CSV row (field larger than field "
                                           "limit (131072)); the line is damaged"),
}


@pytest.mark.parametrize("bad", sorted(BAD_THIRD_LINES))
def test_every_bad_query_names_the_file_and_its_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, bad: str) -> None:
    """However a query is refused, the one line names the file and the query's line, in
    a file and piped in alike. A Latin-1 name was said as a byte's position in a block
    ("cannot read the query file: ... in position 51"), with no line, and a cell over the
    csv module's field limit was an internal error naming neither; and far down a file
    the line is still the one the byte is on."""
    line, exit_code, said = BAD_THIRD_LINES[bad]
    text = b"app,nodes,ranks_per_node\nresnet,64,\n" + line + b"\nbert,16,\n"
    queries = tmp_path / "q.csv"
    queries.write_bytes(text)
    for given, name, piped in ((str(queries), str(queries), None), ("-", "<stdin>", text)):
        result = cli("estimate", "--input", given, "--format", "csv", input=piped)
        assert result.exit_code == exit_code, result.output
        assert result.stderr.startswith(f"Error: {name}:3: {said}")
        assert len(result.stderr.splitlines()) == 1
        assert result.stdout == ""
    queries.write_bytes(text.replace(b"resnet,64,\n", b"resnet,64,\n" * 3000))
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.stderr.startswith(f"Error: {queries}:3002: {said}")


def test_estimate_input_names_the_line_of_a_bad_query_validated_once(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """The batch validated each query twice, reading the file (to name a bad row's
    line) and estimating; once now, as it estimates, and the line is still named."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,ranks_per_node\nresnet,64,\nresnet,8,\n\n"
                       "resnet,16,-4\nbert,4,\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {queries}:5: column 'ranks_per_node' must be a "
                             "positive number, got -4\n")
    assert result.stdout == ""


def test_estimate_input_rows_carry_the_estimates_notes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A row answered far beyond the measured runs, or from the best measured of an
    application's 31 series, said nothing of it; the ``notes`` column says what
    ``perfpredict estimate`` of the row prints, joined with "; " (a list in JSON), naming
    the fields as the file's columns, not as options."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,system\nmaskrcnn,16,XE8545x4A100-SXM-40GB (Dell)\n"
                       "bert,1024,\n")
    table = cli("estimate", "--app", "bert", "--nodes", "1024")
    printed = [line.removeprefix("  note: ") for line in table.stdout.splitlines()
               if line.startswith("  note: ")]
    assert len(printed) == 2 and printed[0].startswith("31 series match")
    options = "--system / --problem-size / --variant"
    assert options in printed[0]
    in_rows = [note.replace(options, "column 'system' / column 'problem_size' / column "
                                     "'variant'") for note in printed]
    as_csv = cli("estimate", "--input", str(queries), "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert list(rows[0])[-1] == "notes"
    assert [r["notes"] for r in rows] == ["", "; ".join(in_rows)]
    as_json = cli("estimate", "--input", str(queries), "--format", "json")
    assert [r["notes"] for r in json.loads(as_json.stdout)] == [[], in_rows]


def test_estimate_input_refuses_a_row_with_more_fields_than_the_header(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """An unquoted comma in a label splits a cell: the cells past the header's were
    dropped and the query answered from what was left (exit 0; here the system cut at
    the comma, which matches by substring). Refused at its line, as ingest csv and
    advise walltime refuse such a row."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,system\nbert,64,XE8545x4A100-SXM-40GB (Dell)\n"
                       "bert,64,XE8545x4A100-SXM-40GB, Dell\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"Error: {queries}:3: expected 3 fields as in the header, "
                             "found 4; quote fields that contain commas\n")
    # a row that leaves its last columns out is read as empty there, as before
    queries.write_text("app,nodes,system\nresnet,64\n")
    assert cli("estimate", "--input", str(queries), "--format", "csv").exit_code == 0


def test_estimate_input_reads_a_header_as_ingest_csv_does(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Hand-written headers put a space after each comma: they were refused as "the
    header has no 'nodes' column" over a header that shows it; ingest csv reads them
    (a byte-order mark before it too: the test above)."""
    queries = tmp_path / "q.csv"
    queries.write_text("app, nodes, system\nresnet, 64, \n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 0, result.output
    (row,) = csv.DictReader(io.StringIO(result.stdout))
    assert list(row)[:3] == ["app", "nodes", "system"]  # the cells as written
    assert row["series"].startswith("resnet on ") and float(row["predicted_runtime_s"]) > 0


def test_estimate_input_reads_numbers_as_ingest_csv_does(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One reader of numbers in tables: 'NA' is missing, 'inf' is refused at its line."""
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,ranks_per_node\nRELeARN,8,4\nresnet,16,NA\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 0, result.output
    assert len(list(csv.DictReader(io.StringIO(result.stdout)))) == 2
    queries.write_text("app,nodes\nresnet,16\nresnet,inf\n")
    result = cli("estimate", "--input", str(queries), "--format", "csv")
    assert result.exit_code == 2
    assert f"{queries}:3: column 'nodes' must be finite" in result.stderr


def test_train_on_bundled_data_then_estimate_from_the_store(cli) -> None:  # type: ignore[no-untyped-def]
    loaded = cli("datasets", "load", "relearn", "lulesh_thicket")
    assert loaded.exit_code == 0, loaded.output
    assert "relearn: 244 runs stored" in loaded.stdout
    assert "already loaded" in cli("datasets", "load", "relearn").stdout
    alone = cli("train", "--no-borrow-bundled")
    assert alone.exit_code == 0, alone.output
    assert "note: weak scaling was learned beside fewer than 8 strong-scaling applications " \
           "from this store alone" in alone.stdout
    assert "train without --no-borrow-bundled learns its correction" in alone.stdout
    trained = cli("train")
    assert trained.exit_code == 0, trained.output
    assert "26 series can be estimated, 26 with 3+ scales taught" in trained.stdout
    # weak scaling alone: it borrows, and learns its correction and slope drift with the
    # bundled strong-scaling series, as --with-bundled would
    (borrowed,) = [line for line in trained.stdout.splitlines()
                   if "borrowed from the bundled data sets" in line]
    assert "the correction and slope drift learned with them" in borrowed
    assert "mlperf_training" in borrowed and "relearn" not in borrowed
    assert "note: weak scaling was learned beside" not in trained.stdout
    # no strong scaling of its own: no application learns half its correction alone
    assert "from their own series alone" not in trained.stdout
    est = cli("estimate", "--app", "RELeARN", "--nodes", "16", "--ranks-per-node", "64",
              "--problem-size", "7000 neurons/rank, theta=0.3", "--format", "json")
    assert est.exit_code == 0, est.output
    doc = json.loads(est.stdout)
    assert doc["scale"] == 1024 and doc["scale_unit"] == "ranks"
    # the store's predictor answered: it knows nothing of MLPerf
    assert cli("estimate", "--app", "bert", "--nodes", "8").exit_code == 1


@pytest.mark.slow  # two trainings beside the bundled data sets: 45 s
def test_train_app_borrows_the_loaded_data_sets_it_leaves_out(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """After 'datasets load', as the README has it, 'train --app mycode' trained on mycode
    alone: a data set the store holds was never borrowed (it "counts once"), though --app
    left it out of training, so nothing was ("borrowed ...: none"), the intervals were
    calibrated by series, and the note said to train without --no-borrow-bundled, which
    had not been given. --with-bundled added nothing either. The loaded data sets'
    other applications are now borrowed, as from a store that never loaded them."""
    assert sqlite_cli("datasets", "load", "lulesh_thicket", "castro_scaling").exit_code == 0
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
                    "runtime_s\n" + "".join(f"mycode,Perlmutter-CPU,grid=512,{n},128,1,{t}\n"
                                            for n, t in ((1, 1000), (2, 520), (4, 281),
                                                         (8, 160))))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    trained = sqlite_cli("train", "--app", "mycode")
    assert trained.exit_code == 0, trained.output
    (borrowed,) = [line for line in trained.stdout.splitlines()
                   if "borrowed from the bundled data sets" in line]
    assert borrowed.endswith(": mlperf_training, mlperf_hpc, relearn, lulesh_thicket, "
                             "castro_scaling, pencilffts_jeanzay"), borrowed
    assert "intervals calibrated by application" in trained.stdout
    assert "--no-borrow-bundled" not in trained.stdout
    with_bundled = sqlite_cli("train", "--app", "mycode", "--with-bundled")
    assert with_bundled.exit_code == 0, with_bundled.output
    assert "lulesh_thicket, castro_scaling" in with_bundled.stdout.splitlines()[1]


def test_train_app_says_which_applications_the_replaced_predictor_covered(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """A shared store's predictor is one: 'train --app' replaced the center's, and the
    applications it left out were silently fitted at each estimate from then on."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"{app},lab7,{n},{40 * k + 1000 / n:.2f}\n"
        for k, app in enumerate(("solver", "mesher", "viz"), 1) for n in (1, 2, 4, 8)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    assert sqlite_cli("train", "--no-borrow-bundled").exit_code == 0
    one = sqlite_cli("train", "--app", "solver", "--no-borrow-bundled")
    assert one.exit_code == 0, one.output
    assert ("note: this predictor replaced the store's, which had series of 2 applications "
            "--app left out (mesher, viz): their series are fitted at each estimate from "
            "now on") in one.stdout
    again = sqlite_cli("train", "--app", "solver", "--no-borrow-bundled", "--format", "json")
    assert json.loads(again.stdout)["replaced_applications"] == []
    # a training of every application leaves none out, whatever the predictor before had
    assert sqlite_cli("runs", "delete", "--batch", "1", "--yes").exit_code == 0
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"mesher,lab7,{n},{80 + 1000 / n:.2f}\n" for n in (1, 2, 4, 8)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    every = sqlite_cli("train", "--no-borrow-bundled", "--format", "json")
    assert json.loads(every.stdout)["replaced_applications"] == []


def test_train_names_the_applications_that_learned_half_their_correction_alone(  # type: ignore[no-untyped-def]
        sqlite_cli) -> None:
    assert sqlite_cli("datasets", "load", "castro_scaling", "pencilffts_jeanzay").exit_code == 0
    trained = sqlite_cli("train", "--no-borrow-bundled")
    assert trained.exit_code == 0, trained.output
    (line,) = [line for line in trained.stdout.splitlines()
               if "learned half of their correction from their own series alone" in line]
    # PencilFFTs.jl has eight series or more, P3DFFT2 fewer: it learns from every code's
    assert line.endswith(": Castro-flame_wave, Castro-wdmerger, PencilFFTs.jl")


def test_train_on_an_empty_store_is_a_domain_failure(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("train")
    assert result.exit_code == 1
    assert "nothing to train on" in result.stderr


def test_train_and_evaluate_name_an_application_the_store_lacks(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--app selects runs by name (in other letter case too, tests/cli/test_app_names.py):
    a typo or a name the store lacks is said so, with what it may have meant (was:
    "nothing to train on: the store holds 0 runs")."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"solver,Perlmutter-GPU,{n},{40 + 1000 / n:.2f}\n" for n in (1, 2, 4, 8)))
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    for args in (("train", "--app", "Solvr"), ("evaluate", "--app", "Solvr")):
        result = cli(*args)
        assert result.exit_code == 1
        assert result.stderr.strip() == ("Error: the store holds no runs of application "
                                         "'Solvr'; did you mean solver?")
    result = cli("train", "--app", "lammps")
    assert result.stderr.strip().endswith("'lammps'; its applications: solver")


def test_evaluate_of_series_cut_too_short_says_which_split_keeps_enough(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """Two applications of four scales each: extrapolation keeps two scales of every
    series, too few to learn from (was "ingest more runs", which they had); the message
    names the cut and the splits and protocol that keep enough, and few-shot runs."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"{app},Perlmutter-GPU,{n},{serial_s + 1000 / n:.2f}\n"
        for app, serial_s in (("solver", 40), ("mesher", 90)) for n in (1, 2, 4, 8)))
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    apps = ["--app", "solver", "--app", "mesher"]
    for options, says in (
            ((), "cut to the lower half of its scales (two of four); --split fewshot keeps "
                 "three scales, --protocol by-series trains on the other series in full, or "
                 "ingest runs at more scales"),
            # the split and protocol asked for, not extrapolation's (a tester's --split
            # random was told what extrapolate keeps, and --protocol by-series to use it)
            (("--split", "random"), "cut to its scales but the held-out ones; --split "
                                    "fewshot keeps three scales, --protocol by-series"),
            # one series: by series, no other series to train on
            (("--protocol", "by-series"), "(two of four); --split fewshot keeps three "
                                          "scales, or ingest runs at more scales")):
        result = cli("evaluate", *(apps[:2] if "by-series" in options else apps), *options)
        assert result.exit_code == 1
        message = result.stderr.strip()
        assert message.startswith("Error: ") and len(message.splitlines()) == 1
        assert says in message, message
    assert cli("evaluate", "--app", "solver", "--app", "mesher", "--split", "fewshot",
               "--format", "json").exit_code == 0


def test_a_cache_effect_is_not_carried_past_the_runs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A tester's CP2K series ran 4.8 times faster from 128 to 256 nodes, then 1.9 and
    1.8 times per doubling: fitted across the drop, the laws went on scaling faster than
    ideal (Amdahl's serial time 0, the power law's exponent -1.3), and advise chose the
    largest node count at 149% efficiency. The laws start after the drop, and say so."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"cached,Frontier,{nodes},{runtime_s}\n" for nodes, runtime_s in (
            (16, 3113.7), (32, 669.0), (64, 404.6), (128, 272.9))))
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    result = cli("estimate", "--app", "cached", "--nodes", "1024", "--format", "json")
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert any("the laws were fitted to the runs from 32 nodes on: from 16 to 32 the runs "
               "beat ideal scaling by more than 10%" in note for note in estimate["notes"])
    # two more doublings after 1.5 and 1.3 times per doubling: slower than ideal from 128
    assert estimate["predicted_runtime_s"] > 272.9 * 128 / 1024 * 1.5


def _trained_solver(cli, tmp_path: Path, *train_options: str) -> None:  # type: ignore[no-untyped-def]
    """A store trained (with ``train_options``) on one series on Perlmutter-GPU, 1-16
    nodes, two runs each: 40 s + 1000 s / p + 2 s * (log2(p) + 1), the second run 0.5 s
    slower."""
    runs = tmp_path / "runs.csv"
    rows = [f"solver,Perlmutter-GPU,{n},{40 + 1000 / n + 2 * n.bit_length() + 50 * r:.2f}"
            for n in (1, 2, 4, 8, 16) for r in (0.0, 0.01)]
    runs.write_text("app,system,nodes,runtime_s\n" + "\n".join(rows) + "\n")
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    assert cli("train", *train_options).exit_code == 0


def test_io_bytes_give_an_io_term_from_the_catalog(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _trained_solver(cli, tmp_path)
    result = cli("estimate", "--app", "solver", "--nodes", "64", "--io-bytes", "2e13",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["breakdown_s"]["io_s"] > 0
    assert sum(doc["breakdown_s"].values()) == pytest.approx(doc["predicted_runtime_s"])
    assert ("roofline from Perlmutter-GPU's catalog entry: I/O time from its file-system "
            "bandwidth") in doc["notes"]
    # one application: the interval is calibrated on the bundled applications left out,
    # and says so
    assert any("calibrated on applications left out" in n for n in doc["notes"])


def _train_on_one_series(sqlite_cli, tmp_path: Path, app_and_system: str,  # type: ignore[no-untyped-def]
                         io_bytes: str | None = None) -> None:
    """Store one application's strong scaling, 1 to 16 nodes with a log term, each run
    with ``io_bytes`` where given, and train on it alone (no bundled data borrowed)."""
    io_column, io_value = (",io_bytes", f",{io_bytes}") if io_bytes else ("", "")
    runs = tmp_path / "runs.csv"
    runs.write_text(f"app,system,nodes,runtime_s{io_column}\n" + "".join(
        f"{app_and_system},{n},{40 + 1000 / n + 2 * n.bit_length():.2f}{io_value}\n"
        for n in (1, 2, 4, 8, 16)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    assert sqlite_cli("train", "--no-borrow-bundled").exit_code == 0


def test_io_bytes_0_is_a_run_without_io_not_the_io_the_runs_recorded(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """``--io-bytes 0`` (a run staged to node-local storage) was taken for no volume
    given: the breakdown had the runs' recorded 2 TB as its I/O term, and the note said
    '--io-bytes gives another' to a user who had given one."""
    _train_on_one_series(sqlite_cli, tmp_path, "solver,Perlmutter-GPU", io_bytes="2e12")
    query = ("estimate", "--app", "solver", "--nodes", "64", "--format", "json")
    recorded = json.loads(sqlite_cli(*query).stdout)
    assert "io_s" in recorded["breakdown_s"]
    zero = json.loads(sqlite_cli(*query, "--io-bytes", "0").stdout)
    assert "io_s" not in zero["breakdown_s"]
    assert sum(zero["breakdown_s"].values()) == pytest.approx(zero["predicted_runtime_s"])
    assert not any("roofline" in note for note in zero["notes"])
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,io_bytes\nsolver,64,0\nsolver,64,\n")
    zero_row, recorded_row = json.loads(
        sqlite_cli("estimate", "--input", str(queries), "--format", "json").stdout)
    assert zero_row["notes"] == zero["notes"]
    assert any("as the runs at 16 nodes recorded it" in n for n in recorded_row["notes"])


def test_a_store_entrys_bandwidth_is_the_rooflines(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """The roofline reads the store's entry of the machine, as 'systems show' and
    'advise' do: a file-system bandwidth 'systems add' gave Frontier, whose shipped entry
    has none, turns an I/O volume into time, and the note says whose number it is. The
    roofline read the shipped catalog alone, and said it lacked the number."""
    query = ("estimate", "--app", "Castro-wdmerger", "--system", "Frontier", "--nodes",
             "1024", "--io-bytes", "1e12", "--format", "json")
    shipped = json.loads(cli(*query).stdout)
    assert ("roofline: the shipped catalog has no file-system bandwidth for this system: I/O "
            "time is inside the fitted terms") in shipped["notes"]
    assert "io_s" not in shipped["breakdown_s"]
    entry = cli("systems", "show", "Frontier", "--format", "toml").stdout
    entry = entry.replace("[sources]\n", "fs_bw_bytes_per_s = 1e13\n[sources]\n"
                          'fs_bw_bytes_per_s = "OLCF: Orion, 10 TB/s"\n', 1)
    (tmp_path / "frontier.toml").write_text(entry)
    assert cli("systems", "add", str(tmp_path / "frontier.toml")).exit_code == 0
    result = cli(*query)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["breakdown_s"]["io_s"] > 0
    assert [n for n in doc["notes"] if n.startswith("roofline")] == [
        "roofline from Frontier's entry added with 'systems add': I/O time from its "
        "file-system bandwidth"]
    assert not any("shipped catalog" in n for n in doc["notes"])


def test_a_machine_systems_add_described_gets_a_roofline(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """A machine no shipped entry knows, described with 'systems add' (completing the
    placeholder ingest made for the logs' name), turns an I/O volume into time with the
    file-system bandwidth its user gave, with no retraining: the trained predictor
    carries no catalog. Before, the estimate said the roofline reads no entry 'systems
    add' added."""
    _train_on_one_series(sqlite_cli, tmp_path, "labcode,lab7")
    query = ("estimate", "--app", "labcode", "--nodes", "32", "--io-bytes", "1e11",
             "--format", "json")
    unknown = json.loads(sqlite_cli(*query).stdout)
    assert ("roofline: the store's placeholder that ingest made from the logs (complete it "
            "with 'perfpredict systems add FILE.toml') has no file-system bandwidth for this "
            "system: I/O time is inside the fitted terms") in unknown["notes"]
    assert "io_s" not in unknown["breakdown_s"]

    (tmp_path / "lab.toml").write_text(
        '[[systems]]\nname = "lab7"\naliases = ["Lab-Cluster-7"]\nnodes = 64\n'
        "fs_bw_bytes_per_s = 1e10\n[systems.sources]\nnodes = \"the lab's wiki\"\n"
        'fs_bw_bytes_per_s = "IOR, 2026-11"\n')
    assert sqlite_cli("systems", "add", str(tmp_path / "lab.toml")).exit_code == 0
    doc = json.loads(sqlite_cli(*query).stdout)
    assert [n for n in doc["notes"] if "roofline" in n] == [
        "roofline from lab7's entry added with 'systems add': I/O time from its "
        "file-system bandwidth"]
    parts = doc["breakdown_s"]
    assert sum(parts.values()) == pytest.approx(doc["predicted_runtime_s"])
    # 1e11 B at the entry's 1e10 B/s is 10 s, beside the runs' 40 s serial less what
    # the fitted terms leave to the I/O term (about 32 s)
    assert parts["io_s"] / parts["serial_s"] == pytest.approx(10 / 32, rel=0.3)
    # the machine's size comes from the same entry
    beyond = sqlite_cli("estimate", "--app", "labcode", "--nodes", "128")
    assert "128 nodes are more than lab7 has (64 in the catalog)" in beyond.stdout
    # a row of a batch reads it as the one query does
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,io_bytes\nlabcode,32,1e11\n")
    [row] = list(csv.DictReader(io.StringIO(
        sqlite_cli("estimate", "--input", str(queries)).stdout)))
    assert ("roofline from lab7's entry added with 'systems add': I/O time from its "
            "file-system bandwidth") in row["notes"]


def test_an_entry_smaller_than_a_measured_run_is_said_out_of_date(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """A catalog entry of fewer nodes than the runs measured is out of date: advice
    swept past it unsaid, while an estimate beyond the runs called the scale more than the
    machine has. Both say the same now, and neither bounds a node count by it."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"labcode,lab7,{n},{40 + 1000 / n:.2f}\n" for n in (1, 2, 4, 8, 16)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    assert sqlite_cli("train", "--no-borrow-bundled").exit_code == 0
    (tmp_path / "lab.toml").write_text(
        '[[systems]]\nname = "lab7"\nnodes = 8\n[systems.sources]\nnodes = "wiki, 2019"\n')
    assert sqlite_cli("systems", "add", str(tmp_path / "lab.toml")).exit_code == 0
    said = ("lab7 has 8 nodes in the catalog, fewer than the 16 a stored run measured: the "
            "entry is out of date and bounds no node count ('perfpredict systems add' "
            "corrects it)")
    estimate = sqlite_cli("estimate", "--app", "labcode", "--nodes", "32")
    assert estimate.exit_code == 0 and said in estimate.stdout
    assert "more than lab7 has" not in estimate.stdout
    advice = sqlite_cli("advise", "--app", "labcode", "--format", "json")
    assert advice.exit_code == 0, advice.output
    assert said in json.loads(advice.stdout)["warnings"]


def test_the_io_the_runs_recorded_gives_the_io_term(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """Runs that recorded their I/O (a Darshan log, accounting's disk counters, here an
    io_bytes column) give an estimate that names no volume its roofline's I/O term: the
    run's total for strong scaling, per node for weak scaling (at 64 nodes, 4x what the
    runs at 16 did). A volume the query gives is used instead, and runs that moved more
    bytes than the file system's bandwidth allows in their time give no I/O term, and
    say why. An estimate faster than the file system allows for the recorded I/O says
    it is optimistic."""
    def series(app: str, io_bytes: float, scaling: str, work_s: float = 1000,
               nodes: tuple[int, ...] = (1, 2, 4, 8, 16)) -> str:
        return "".join(f"{app},Perlmutter-GPU,{n},{40 + work_s / n + 2 * n.bit_length():.2f},"
                       f"{io_bytes * (n if scaling == 'weak' else 1):g},{scaling}\n"
                       for n in nodes)
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s,io_bytes,scaling\n"
                    + series("solver", 2e12, "strong") + series("cached", 1e15, "strong")
                    + series("weakio", 1e11, "weak")
                    # 50 s of I/O at 5e12 B/s, which the runs at 128 nodes (211 s) had
                    + series("iobound", 2.5e14, "strong", 20000, (8, 16, 32, 64, 128)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    assert sqlite_cli("train", "--no-borrow-bundled").exit_code == 0
    query = ("estimate", "--nodes", "64", "--format", "json")
    catalog = ("roofline from Perlmutter-GPU's catalog entry: I/O time from its file-system "
               "bandwidth")

    doc = json.loads(sqlite_cli(*query, "--app", "solver").stdout)
    recorded = ("roofline: I/O volume 2 TB per run, as the runs at 16 nodes recorded it "
                "(the same at any node count); --io-bytes gives another")
    assert [n for n in doc["notes"] if "roofline" in n] == [recorded, catalog]
    parts = doc["breakdown_s"]
    assert sum(parts.values()) == pytest.approx(doc["predicted_runtime_s"])
    # 2e12 B at 5e12 B/s (the file system's, below 64 nodes' injection) is 0.4 s, and
    # the law's other terms take the rest of 1000 s / p at 64 nodes and 40 s serial
    assert parts["io_s"] / parts["serial_s"] == pytest.approx(0.4 / 42, rel=0.25)
    given = json.loads(sqlite_cli(*query, "--app", "solver", "--io-bytes", "2e13").stdout)
    assert recorded not in given["notes"] and catalog in given["notes"]
    assert given["breakdown_s"]["io_s"] > 5 * parts["io_s"]

    weak = json.loads(sqlite_cli(*query, "--app", "weakio").stdout)
    assert ("roofline: I/O volume 100 GB per node, as the runs at 16 nodes recorded it "
            "(weak scaling: alike on every node); --io-bytes gives another") in weak["notes"]
    # 64 x 1e11 B at 5e12 B/s
    assert weak["breakdown_s"]["io_s"] == pytest.approx(1.28, rel=0.25)

    cached = json.loads(sqlite_cli(*query, "--app", "cached").stdout)
    assert "io_s" not in cached["breakdown_s"]
    assert [n for n in cached["notes"] if "roofline" in n] == [
        "roofline: the runs at 16 nodes recorded more I/O than Perlmutter-GPU's file-system "
        "bandwidth moves in the time they took (node-local storage or caches serve it, or "
        "the counters count those too): their I/O time is inside the fitted terms"]

    optimistic = ("the I/O the runs recorded needs 50 s at Perlmutter-GPU's file-system "
                  "bandwidth at 8192 nodes, more than this estimate: it is optimistic unless "
                  "the I/O shrinks at this scale")
    far = json.loads(sqlite_cli("estimate", "--app", "iobound", "--nodes", "8192",
                                "--format", "json").stdout)
    assert far["predicted_runtime_s"] < 50 and optimistic in far["notes"]
    near = json.loads(sqlite_cli("estimate", "--app", "iobound", "--nodes", "256",
                                 "--format", "json").stdout)

    def floor_notes(estimate: dict[str, Any]) -> list[str]:
        return [n for n in estimate["notes"] if n.startswith("the I/O the runs recorded")]
    assert near["predicted_runtime_s"] > 50 and floor_notes(near) == []
    assert floor_notes(doc) == []

    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,io_bytes\nsolver,64,\nsolver,64,2e13\niobound,8192,\n"
                       "iobound,8192,1e12\n")
    batch = sqlite_cli("estimate", "--input", str(queries), "--format", "json")
    assert batch.exit_code == 0, batch.output
    recorded_row, given_row, far_row, far_given_row = json.loads(batch.stdout)
    assert recorded_row["notes"] == [n.replace("--io-bytes", "column 'io_bytes'")
                                     for n in doc["notes"]]
    assert given_row["notes"] == given["notes"]
    assert optimistic in far_row["notes"]
    # the volume given replaces the recorded one, and is the bound's
    assert floor_notes(far_given_row) == []

    # advice shows no breakdown and takes no --io-bytes: the roofline's notes are the
    # estimate's alone, the bound is the advice's too
    advice = sqlite_cli("advise", "--app", "iobound", "--objective", "fastest",
                        "--min-efficiency", "0.01", "--format", "json")
    assert advice.exit_code == 0, advice.output
    plan = json.loads(advice.stdout)
    assert plan["recommended_nodes"] == 1792  # the whole machine
    assert not any(w.startswith("roofline") for w in plan["warnings"])
    assert floor_notes({"notes": plan["warnings"]}) == [optimistic.replace("8192", "1792")]


def test_flops_memory_and_network_volumes_give_roofs_from_the_catalog(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """The roofline's compute, memory and network terms (DESIGN.md), from the query's
    volumes and the catalog's peak flop rate and bandwidths: the on-node time is split
    into its binding roof and the time above it; a volume the catalog cannot turn into
    time (Perlmutter-GPU's memory bandwidth is left unknown) says so and stays in the
    fitted terms. The notes are a batch row's too. The store's part is the other tests'
    (:func:`tests.conftest.sqlite_cli`), and nothing here needs a learned correction."""
    _trained_solver(sqlite_cli, tmp_path, "--no-borrow-bundled")
    # 1.94e16 flops are 500 s of one node's 3.88e13 flop/s peak, 6.4e12 bytes 64 s / p of
    # its 1e11 B/s injection bandwidth: the runs' 1000 s / p are 500 s of roof, 64 s of
    # network volume and 436 s above the roof
    volumes = ("--flops", "1.94e16", "--mem-bytes", "1e15", "--net-bytes", "6.4e12")
    result = sqlite_cli("estimate", "--app", "solver", "--nodes", "64", *volumes,
                        "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    parts = doc["breakdown_s"]
    assert list(parts) == ["serial_s", "compute_s", "above_roof_s", "communication_s",
                           "network_s"]
    assert parts["compute_s"] / parts["above_roof_s"] == pytest.approx(500 / 436, rel=0.05)
    assert parts["compute_s"] / parts["network_s"] == pytest.approx(500 / 64, rel=0.05)
    assert sum(parts.values()) == pytest.approx(doc["predicted_runtime_s"])
    assert ("roofline: the shipped catalog has no memory bandwidth for this system: the on-node "
            "time has no memory roof") in doc["notes"]
    assert ("roofline from Perlmutter-GPU's catalog entry: network time from its network "
            "injection bandwidth, a compute roof from its peak flop rate") in doc["notes"]
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,flops,mem_bytes,net_bytes\nsolver,64,1.94e16,1e15,6.4e12\n"
                       "solver,64,,,\n")
    batch = sqlite_cli("estimate", "--input", str(queries), "--format", "json")
    assert batch.exit_code == 0, batch.output
    with_volumes, without = json.loads(batch.stdout)
    assert with_volumes["notes"] == doc["notes"]
    assert not any("roofline" in note for note in without["notes"])


def test_volumes_the_runs_could_not_have_done_are_said_so(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """The roofline is a bound. The runs (1000 s / p of work, two runs a scale) took at
    least 1,042 node-seconds (at 1 node) and are estimated at 55 s on 64 nodes.
    3.88e17 flops are 10,000 s of one Perlmutter-GPU node's peak: more than the runs
    took, and 156 s on 64 nodes, more than the estimate. 7.76e16 flops (2,000 s on one
    node) are more than the runs took, though 31 s on 64 nodes is less than the
    estimate. 1.94e16 flops (500 s) the runs could have done: nothing is said. A batch
    row says what the estimate of its query says."""
    _trained_solver(sqlite_cli, tmp_path, "--no-borrow-bundled")
    unmet = "the volumes given need more time on Perlmutter-GPU than the measured runs"
    query = ("estimate", "--app", "solver", "--nodes", "64", "--format", "json")
    too_much = _notes_saying(unmet, sqlite_cli(*query, "--flops", "3.88e17"))
    assert len(too_much) == 1 and too_much[0].endswith(
        "check that they are the run's, all nodes together, and the catalog's numbers "
        "('perfpredict systems show Perlmutter-GPU')")
    assert len(_notes_saying(unmet, sqlite_cli(*query, "--flops", "7.76e16"))) == 1
    assert _notes_saying(unmet, sqlite_cli(*query, "--flops", "1.94e16")) == []
    # the floor adds its terms: network bytes alone under it, with the flops above it
    assert _notes_saying(unmet, sqlite_cli(*query, "--net-bytes", "3e14")) == []
    assert len(_notes_saying(unmet, sqlite_cli(*query, "--flops", "1.94e16", "--net-bytes",
                                               "3e14", "--io-bytes", "5e14"))) == 1
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes,flops\nsolver,64,3.88e17\nsolver,64,1.94e16\nsolver,64,\n")
    batch = sqlite_cli("estimate", "--input", str(queries), "--format", "json")
    assert batch.exit_code == 0, batch.output
    assert [any(unmet in note for note in row["notes"]) for row in json.loads(batch.stdout)] == [
        True, False, False]


def _notes_saying(text: str, result) -> list[str]:  # type: ignore[no-untyped-def]
    """The notes of a JSON estimate that say ``text``."""
    assert result.exit_code == 0, result.output
    return [n for n in json.loads(result.stdout)["notes"] if text in n]


def test_an_estimate_names_the_runs_ingested_since_training(cli, timed_runs_csv, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A run at 32 nodes ingested after 'train' left the estimate there "extrapolating
    beyond the largest measured scale (16 nodes)" without a word of it: the store's
    predictor answers from the runs it was trained on, and now says that the store holds
    newer ones until it is retrained (advice, built on estimates, says it too)."""
    assert cli("ingest", "csv", str(timed_runs_csv)).exit_code == 0
    assert cli("train", "--no-borrow-bundled").exit_code == 0
    query = ("estimate", "--app", "solver0", "--nodes", "32", "--format", "json")
    unseen = functools.partial(_notes_saying, "ingested since")
    assert unseen(cli(*query)) == []
    later = tmp_path / "later.csv"
    later.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
                     "runtime_s\nsolver0,Perlmutter-CPU,large,32,128,1,150\n")
    assert cli("ingest", "csv", str(later)).exit_code == 0
    (note,) = unseen(cli(*query))
    assert note.startswith("the store holds 1 run of solver0 ingested since this predictor "
                           "was trained (")
    assert note.endswith("which it has not learned from; run 'perfpredict train' to use it")
    # a batch's rows say it too, each of its application's (it is read a row at a time)
    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes\nsolver0,32\nsolver1,32\nsolver0,8\n")
    batch = cli("estimate", "--input", str(queries), "--format", "json")
    assert [note in row["notes"] for row in json.loads(batch.stdout)] == [True, False, True]
    assert unseen(cli("estimate", "--app", "solver1", "--nodes", "32", "--format", "json")) == []
    advice = cli("advise", "--app", "solver0", "--format", "json")
    assert advice.exit_code == 0, advice.output
    assert note in advice.stdout
    assert cli("train", "--no-borrow-bundled").exit_code == 0
    assert unseen(cli(*query)) == []


def test_an_estimate_names_the_runs_it_learned_from_that_were_deleted(cli, timed_runs_csv, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file deleted after 'train' ('runs delete') left the estimate answering from its
    runs without a word of it; it says so now, and with runs ingested since, both."""
    later = tmp_path / "later.csv"
    later.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
                     "runtime_s\nsolver0,Perlmutter-CPU,large,32,128,1,150\n")
    assert cli("ingest", "csv", str(timed_runs_csv)).exit_code == 0
    assert cli("ingest", "csv", str(later)).exit_code == 0
    assert cli("train", "--no-borrow-bundled").exit_code == 0
    query = ("estimate", "--app", "solver0", "--nodes", "32", "--format", "json")
    changed = functools.partial(_notes_saying, "; run 'perfpredict train' to ")
    assert changed(cli(*query)) == []
    assert cli("runs", "delete", "--batch", "2", "--yes").exit_code == 0
    (note,) = changed(cli(*query))
    assert note.startswith("the store no longer holds 1 run of solver0 that this predictor "
                           "learned from: they were deleted since it was trained (")
    assert note.endswith("; run 'perfpredict train' to answer from the runs it holds")
    assert cli("ingest", "csv", str(later)).exit_code == 0
    (note,) = changed(cli(*query))
    assert "holds 1 run of solver0 ingested since" in note
    assert "and no longer holds 1 run that it learned from, deleted since;" in note
    assert changed(cli("estimate", "--app", "solver1", "--nodes", "32", "--format", "json")) == []
    assert cli("train", "--no-borrow-bundled").exit_code == 0
    assert changed(cli(*query)) == []


def test_the_shipped_predictor_says_it_answers_for_a_store_untrained(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A store holding runs of an application the shipped predictor also knows, never
    trained, was answered from the shipped series as if from the store's own; it says
    so now, though not of the bundled data sets' own runs, which it was trained on."""
    assert cli("datasets", "load", "relearn").exit_code == 0
    query = ("estimate", "--app", "RELeARN", "--nodes", "16", "--ranks-per-node", "32",
             "--format", "json")
    shipped = functools.partial(_notes_saying, "shipped")
    assert shipped(cli(*query)) == []
    mine = tmp_path / "mine.csv"
    mine.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
                    "RELeARN,mycluster,5000 neurons/rank,1,32,1,400\n"
                    "RELeARN,mycluster,5000 neurons/rank,2,32,1,410\n")
    assert cli("ingest", "csv", str(mine)).exit_code == 0
    assert shipped(cli(*query)) == [
        "answered by the predictor shipped with perfpredict: the store holds 2 runs of "
        "RELeARN but no trained predictor of its own; run 'perfpredict train' to learn "
        "from them"]


def test_evaluate_table_leads_with_the_hybrid_against_the_best_baseline(cli, timed_runs_csv, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What a person running ``evaluate`` looks for: per group and pooled, the hybrid
    beside the best single baseline and what keeps it from the acceptance, then every
    method's figures, to three significant digits (JSON keeps them whole)."""
    from perfpredict.evaluate.metrics import acceptance
    from perfpredict.figures import format_value

    monkeypatch.setenv("COLUMNS", "500")  # every row on one line
    assert cli("ingest", "csv", str(timed_runs_csv)).exit_code == 0
    args = ("evaluate", "--no-borrow-bundled", "--confidence", "0.8")
    table = json.loads(cli(*args, "--format", "json").stdout)
    pooled = acceptance(table, "all", confidence=0.8)
    result = cli(*args)
    assert result.exit_code == 0, result.output
    verdicts, methods = result.stdout.split("Every method")
    assert "The hybrid against the best single baseline, per source" in verdicts
    assert "coverage of the 80% intervals" in verdicts
    rows = [line for line in verdicts.splitlines() if line.startswith("│")]
    assert len(rows) == 2 and rows[-1].startswith("│ all ")  # one source, then pooled
    cells = [cell.strip() for cell in rows[-1].strip("│").split("│")]
    assert cells[3] == format_value(pooled["hybrid_mape_pct"])
    assert cells[-1] == ("; ".join(pooled["failures"]) or "pass")
    assert "│ hybrid " in methods and "│ blackbox_xgboost " in methods
    # one source: its figures are the pooled ones, shown once
    assert "│ all " not in methods and methods.count("│ hybrid ") == 1
    assert not re.search(r"\d\.\d{4,}", result.stdout), "figures to three digits"


def test_evaluate_by_distance_shows_how_accuracy_falls_with_the_doublings(cli, timed_runs_csv, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "500")
    assert cli("ingest", "csv", str(timed_runs_csv)).exit_code == 0
    result = cli("evaluate", "--group-by", "distance", "--no-borrow-bundled")
    assert result.exit_code == 0, result.output
    verdicts = result.stdout.split("Every method")[0]
    assert "The hybrid against the best single baseline, per distance" in verdicts
    bands = [line.strip("│").split("│")[0].strip() for line in verdicts.splitlines()
             if line.startswith("│")]
    # extrapolation tests the upper half of each series: nothing inside its range
    assert bands[-1] == "all" and "0-1 doublings" in bands
    assert "inside the measured range" not in bands


@pytest.mark.parametrize("split", ["random", "time"])
def test_evaluate_new_splits_on_a_store_with_submit_times(cli, timed_runs_csv, split) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "csv", str(timed_runs_csv)).exit_code == 0
    # the splits through the CLI; the default borrowing of so small a store from the
    # bundled data sets is the library tests' (test_evaluate.py) and only costs time here
    result = cli("evaluate", "--split", split, "--no-borrow-bundled", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["method"]: r for r in json.loads(result.stdout) if r["group"] == "all"}
    assert rows["hybrid"]["n_series"] == 6 and rows["hybrid"]["coverage"] is not None
    assert "blackbox_xgboost" in rows and "amdahl" in rows


def test_evaluate_time_split_on_scheduler_logs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Scheduler jobs form series once a problem size marks them as one workload (issue
    14 item 13): here the user exports them and states one, then ingests the table."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app

    sacct = REPO / "examples" / "data" / "synthetic_sacct.psv"
    jobs = f"sqlite:///{tmp_path / 'jobs.db'}"
    assert CliRunner().invoke(app, ["--db", jobs, "ingest", "sacct", str(sacct)]).exit_code == 0
    export = CliRunner().invoke(app, ["--db", jobs, "runs", "export", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(export.stdout)))
    marked = tmp_path / "marked.csv"
    with marked.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "problem_size": "synthetic input"} for row in rows)
    assert cli("ingest", "csv", str(marked)).exit_code == 0
    # what is a series does not depend on what the store borrows (a training on the
    # bundled data sets per fold)
    result = cli("evaluate", "--split", "time", "--group-by", "app", "--format", "markdown",
                 "--no-borrow-bundled")
    assert result.exit_code == 0, result.output
    assert "| relearn | hybrid |" in result.stdout


def test_evaluate_time_split_without_submit_times_is_a_domain_failure(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("datasets", "load", "relearn").exit_code == 0
    result = cli("evaluate", "--split", "time")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "needs submission times" in lines[0] and "submit_time" in lines[0]
    assert "Traceback" not in result.output


def test_evaluate_unknown_split_is_a_usage_error(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("evaluate", "--split", "sideways")
    assert result.exit_code == 2
    assert "random" in result.output and "time" in result.output


@pytest.mark.parametrize(("args", "said"), [
    (("--repeats", "0"), "--repeats must be a whole number from 1 to 100, got 0"),
    # each repeat is a whole backtest: a million ran for weeks without a word
    (("--repeats", "1000000"), "--repeats must be a whole number from 1 to 100, got 1e+06"),
    # numpy's ValueError escaped as internal
    (("--seed", "-1"), "--seed must be a whole number from 0 to 2147483647, got -1"),
    # and XGBoost's "expect long" for a seed of 20 digits
    (("--seed", "99999999999999999999"),
     "--seed must be a whole number from 0 to 2147483647, got 99999999999999999999"),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else None)
def test_evaluate_repeats_and_seed_out_of_range_are_usage_errors(  # type: ignore[no-untyped-def]
        cli, args: tuple[str, ...], said: str) -> None:
    assert cli("datasets", "load", "relearn").exit_code == 0
    result = cli("evaluate", *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: {said}"


def test_estimate_input_prints_nothing_when_a_later_chunk_has_a_bad_row(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """Queries are answered and written a chunk at a time (1M at once held 1.3 GiB); a
    bad row past the first chunk must still leave standard output empty, not holding the
    rows before it as if the batch were complete."""
    from perfpredict.estimate.batch import CHUNK_QUERIES

    queries = tmp_path / "q.csv"
    queries.write_text("app,nodes\n" + "resnet,8\n" * CHUNK_QUERIES + "resnet,many\n")
    result = sqlite_cli("estimate", "--input", str(queries))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {queries}:{CHUNK_QUERIES + 2}: column 'nodes'")
    assert result.stdout == ""


#: What train's spinner wraps, standing in for a training: a warning meanwhile, then the
#: summary on stdout once it is done.
_SPUN = """
import sys, warnings, typer
from perfpredict.cli.progress import elapsed_spinner
with elapsed_spinner(sys.stderr.isatty(), "training"):
    warnings.warn("a warning meanwhile")
typer.echo("Trained on 32 runs.")
"""


def test_train_shows_a_spinner_on_a_terminal_and_takes_it_away_before_its_summary() -> None:
    """``train`` said nothing for a minute or more on a center's store (47-66 s on 200k
    sacct jobs); on a terminal it now shows a spinner with the time elapsed, which a
    warning prints above and the summary replaces."""
    import sys

    shown = on_a_terminal([sys.executable, "-c", _SPUN], {})
    assert b" training " in shown
    assert shown.index(b"a warning meanwhile") < shown.rindex(b" training ")
    assert shown[:shown.index(b"Trained on 32 runs.")].endswith(b"\x1b[2K")


"""The bundled HPC strong-scaling data sets (Castro, PencilFFTs) and training on the
bundled data beside a store (``train --with-datasets``), issue 13."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from tests.conftest import REPO, shared_path

NEW = {"castro_scaling": 197, "pencilffts_jeanzay": 95}


def _invoke(db: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", db, *args])
    return result.exit_code, result.stdout, result.stderr


def _rows(path: Path) -> list[dict[str, str]]:
    with (gzip.open(path, "rt", newline="") if path.suffix == ".gz"
          else path.open(newline="")) as fh:
        return list(csv.DictReader(fh))


def test_only_permissively_licensed_data_ship_each_with_its_source_and_licence() -> None:
    folders = {p.parent.name for p in (REPO / "datasets").glob("*/runs.csv.gz")}
    assert set(NEW) <= folders
    assert not folders & {"vasp_archer", "cp2k_readme"}  # GPL: read from ../shared only
    for name in folders:
        for part in ("SOURCE.txt", "LICENSE"):
            assert (REPO / "datasets" / name / part).stat().st_size > 0, (name, part)
    assert "Lawrence Berkeley" in (REPO / "datasets/castro_scaling/LICENSE").read_text()
    assert "Juan Ignacio Polanco" in (REPO / "datasets/pencilffts_jeanzay/LICENSE").read_text()


@pytest.mark.parametrize("name", sorted(NEW))
def test_every_measured_run_ships_as_measured(name: str) -> None:
    """prepare.py renames and regroups, never drops or alters a measurement."""
    raw = _rows(shared_path("datasets", name, "runs.csv"))
    bundled = _rows(REPO / "datasets" / name / "runs.csv.gz")

    def measured(rows: list[dict[str, str]]) -> list[tuple[str, str, str, int, float]]:
        return sorted((r["app"], r["system"], r["problem_size"], int(r["total_ranks"]),
                       float(r["runtime_s"])) for r in rows)

    assert measured(bundled) == measured(raw)


def test_load_tells_castro_campaigns_apart_and_counts_pencilffts_in_ranks(
        tmp_path: Path) -> None:
    from perfpredict.model.series import build_series
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    db = f"sqlite:///{tmp_path}/store.db"
    code, out, err = _invoke(db, "datasets", "load", *NEW)
    assert code == 0, err
    assert out.splitlines() == [f"{name}: {n} runs stored" for name, n in NEW.items()]
    with open_store(db) as store:
        series = build_series(runs_frame(store))
    castro = [s for s in series if s.key.app.startswith("Castro")]
    # one series per measured table: the campaign (software of that day) is a variant
    raw = _rows(shared_path("datasets", "castro_scaling", "runs.csv"))
    assert len(castro) == len({r["series"] for r in raw})
    assert all("|campaign=" in s.key.variant for s in castro)
    fft = [s for s in series if s.key.app in ("PencilFFTs.jl", "P3DFFT2")]
    assert len(fft) == 15 and {s.scale_unit for s in fft} == {"ranks"}
    code, out, _ = _invoke(db, "datasets", "list")
    assert "Castro strong scaling" in out and "PencilFFTs" in out


@pytest.mark.slow
def test_train_with_bundled_adds_the_bundled_runs_not_already_stored(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "datasets", "load", "relearn")[0] == 0
    code, out, err = _invoke(db, "train", "--with-bundled", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    others = report["bundled_datasets"]
    assert "relearn" not in others and set(NEW) <= set(others)
    bundled = sum(len(_rows(REPO / "datasets" / n / "runs.csv.gz")) for n in others)
    assert report["n_runs_bundled"] == bundled
    assert report["n_runs"] == bundled + 244  # relearn's runs counted once, from the store
    # the store's predictor now answers for a code whose runs the store does not hold
    code, out, err = _invoke(db, "estimate", "--app", "Castro-wdmerger", "--system",
                             "Frontier", "--nodes", "4096", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["app"] == "Castro-wdmerger"
    code, out, _ = _invoke(db, "runs", "stats", "--format", "json")
    assert json.loads(out)["n_runs"] == 244  # trained on, not stored


@pytest.mark.slow  # two trainings, one beside the bundled data sets: 30 s
def test_a_store_of_few_applications_borrows_from_the_bundled_ones(tmp_path: Path) -> None:
    """Castro alone is two strong-scaling applications: too few to calibrate intervals by
    leaving applications out. By default train borrows from the bundled data sets (their
    applications calibrate the intervals too, half the correction is learned with them)
    and says so, and it points to --with-bundled for a correction learned in full from
    more codes than two; with --no-borrow-bundled it calibrates by series and warns."""
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "datasets", "load", "castro_scaling")[0] == 0
    query = ("estimate", "--app", "Castro-wdmerger", "--system", "Frontier", "--nodes", "4096",
             "--format", "json")
    code, out, err = _invoke(db, "train", "--no-borrow-bundled")
    assert code == 0, err
    assert "intervals calibrated by series" in out
    assert "may be too narrow beyond the measured range" in out and "without --no-borrow-bundled" in out
    alone = json.loads(_invoke(db, *query)[1])
    assert any("calibrated by series" in note for note in alone["notes"])

    code, out, err = _invoke(db, "train")
    assert code == 0, err
    assert "strong scaling: base law ensemble" in out
    assert "weak scaling" not in out  # Castro holds none
    assert "intervals calibrated by application" in out
    assert "may be too narrow" not in out
    assert "note: the correction was learned from 2 strong-scaling applications" in out
    assert "perfpredict evaluate, with and without --with-bundled" in out
    (borrowed_from,) = [line for line in out.splitlines()
                        if "borrowed from the bundled data sets" in line]
    assert "half the correction learned with them" in borrowed_from
    assert "mlperf_training" in borrowed_from and "castro_scaling" not in borrowed_from
    borrowing = json.loads(_invoke(db, *query)[1])
    assert not any("calibrated by series" in note for note in borrowing["notes"])
    # half the correction beyond the measured range is the borrowed trees'
    assert borrowing["predicted_runtime_s"] != pytest.approx(alone["predicted_runtime_s"])
    # the bundled runs are borrowed; they are neither stored nor estimated from
    assert json.loads(_invoke(db, "runs", "stats", "--format", "json")[1])["n_runs"] == sum(
        1 for _ in _rows(REPO / "datasets" / "castro_scaling" / "runs.csv.gz"))


@pytest.mark.slow  # a training beside the bundled data sets: 25 s
def test_weak_scaling_beside_few_strong_applications_borrows_its_correction(
        tmp_path: Path) -> None:
    """Weak scaling beside two strong-scaling applications: by default train borrows
    all of weak scaling's correction and half of strong scaling's, and says so (the
    warning with --no-borrow-bundled is test_predict_cli's, beside no strong scaling)."""
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "datasets", "load", "relearn", "castro_scaling")[0] == 0
    code, out, err = _invoke(db, "train")
    assert code == 0, err
    (borrowed_from,) = [line for line in out.splitlines()
                        if "borrowed from the bundled data sets" in line]
    assert ("half of strong scaling's correction and all of weak scaling's learned with "
            "them") in borrowed_from
    assert "note: weak scaling was learned beside" not in out


def test_train_points_a_store_of_many_codes_measured_once_to_the_bundled_data(
        tmp_path: Path) -> None:
    """Nine codes, one scaling series each: enough applications to learn alone, too few
    series of each for an application's own correction or peers, so train points to
    --with-bundled; with three series of each it does not."""
    def store_of(n_series: int) -> str:
        runs = tmp_path / f"runs{n_series}.csv"
        runs.write_text("app,system,problem_size,nodes,runtime_s\n" + "".join(
            f"code{app},demo,size{size},{nodes},"
            f"{(50.0 + 1000.0 * (size + 1) / nodes ** (0.6 + 0.04 * app)):.3f}\n"
            for app in range(9) for size in range(n_series) for nodes in (1, 2, 4, 8, 16)))
        db = f"sqlite:///{tmp_path}/store{n_series}.db"
        assert _invoke(db, "ingest", "csv", str(runs))[0] == 0
        return db

    note = "train --with-bundled erred less with two series per application"
    code, out, err = _invoke(store_of(1), "train")
    assert code == 0, err
    assert "note: 9 strong-scaling series of 9 applications" in out and note in out
    assert "borrowed from the bundled data sets" not in out
    code, out, err = _invoke(store_of(3), "train")
    assert code == 0, err
    assert note not in out


def test_train_says_a_kind_of_too_few_series_gets_no_correction(tmp_path: Path) -> None:
    """Two strong-scaling series are too few to learn a correction from: by default half
    of one is borrowed and applies; borrowing nothing, train says there is none, rather
    than that the correction lost to the law, and points to borrowing."""
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,problem_size,nodes,runtime_s\n" + "".join(
        f"mycode,demo,{size},{nodes},{base / nodes ** 0.8:.3f}\n"
        for size, base in (("small", 1000.0), ("large", 8000.0)) for nodes in (1, 2, 4, 8)))
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "ingest", "csv", str(runs))[0] == 0
    code, out, err = _invoke(db, "train")
    assert code == 0, err
    # on, and unjudged: two series cannot tell whether it beats the law on this store
    assert ("strong scaling: base law ensemble, learned correction on, half of it borrowed "
            "and unjudged (only 2 series, 8 needed to judge it)") in out
    assert "half the correction learned with them" in out
    assert "too few strong-scaling series to learn a correction" not in out
    query = ("estimate", "--app", "mycode", "--problem-size", "large", "--nodes", "64",
             "--format", "json")
    code, out, err = _invoke(db, *query)
    assert code == 0, err
    assert not any("no learned correction" in n for n in json.loads(out)["notes"])
    code, out, err = _invoke(db, "train", "--no-borrow-bundled")
    assert code == 0, err
    assert "strong scaling: base law ensemble, learned correction off (only 2 series, 8 " \
           "needed: predictions are the base law's)" in out
    assert "weak scaling" not in out
    assert "train without --no-borrow-bundled learns half of one" in out
    assert "note: the correction was learned from" not in out  # none was, of one code
    code, out, err = _invoke(db, *query)
    assert code == 0, err
    assert any(n.startswith("no learned correction for strong scaling")
               for n in json.loads(out)["notes"])
    code, out, err = _invoke(db, "estimate", "--app", "mycode", "--problem-size", "large",
                             "--nodes", "4", "--format", "json")
    assert code == 0, err  # inside the measured range nothing is extrapolated or corrected
    assert not any("no learned correction" in n for n in json.loads(out)["notes"])


def test_every_bundled_file_is_the_last_release_its_checksums_record() -> None:
    """A bundled file changed without its checksum recorded would be stored beside the
    earlier release by ``datasets load``, every run twice; this fails first."""
    from perfpredict import datasets
    from perfpredict.ingest._text.lines import file_sha256

    assert set(datasets.RELEASES) == set(datasets.NAMES)
    for name in datasets.NAMES:
        assert file_sha256(datasets.path(name)) == datasets.RELEASES[name][-1], name
    checksums = [c for releases in datasets.RELEASES.values() for c in releases]
    assert len(checksums) == len(set(checksums))


def _earlier_release(tmp_path: Path, name: str) -> Path:
    """A copy of the bundled ``name`` as an earlier release might have been: the same runs
    with a column since corrected."""
    rows = _rows(REPO / "datasets" / name / "runs.csv.gz")
    earlier = tmp_path / name / "runs.csv"
    earlier.parent.mkdir()
    with earlier.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*rows[0], "errata"])
        writer.writeheader()
        writer.writerows({**r, "errata": "earlier release"} for r in rows)
    return earlier


def test_load_replaces_the_runs_of_an_earlier_release_once(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from perfpredict import datasets
    from perfpredict.ingest._text.lines import file_sha256
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    name = "lulesh_thicket"
    earlier = _earlier_release(tmp_path, name)
    assert _invoke(db_url, "ingest", "csv", str(earlier))[0] == 0
    monkeypatch.setitem(datasets.RELEASES, name,
                        (file_sha256(earlier), *datasets.RELEASES[name]))
    with open_store(db_url) as store:
        assert {r["name"]: r["in_store"] for r in datasets.describe(store)}[name] == \
            "an earlier release"
        assert datasets.releases_in(store) == {name: "earlier"}  # not borrowed again

    code, out, err = _invoke(db_url, "datasets", "load", name)
    assert code == 0, err
    assert out.splitlines() == [f"{name}: 5 runs stored, replacing the 5 of an earlier "
                                "release (retrain: 'perfpredict train')"]
    with open_store(db_url) as store:
        frame = runs_frame(store)
    assert len(frame) == 5
    assert not frame["extra"].astype(str).str.contains("earlier release").any()
    assert _invoke(db_url, "datasets", "load", name)[1] == f"{name}: already loaded\n"
    code, out, err = _invoke(db_url, "datasets", "list")
    assert code == 0, err
    row = next(line for line in out.splitlines() if name in line)  # the first table's
    assert "│ yes " in row
    assert sum("│ no " in line for line in out.splitlines()) == len(datasets.NAMES) - 1
    # the earlier file itself, ingested again (an older perfpredict's datasets load),
    # stores nothing rather than a second copy
    code, out, err = _invoke(db_url, "ingest", "csv", str(earlier), "--format", "json")
    assert code == 0, err
    assert json.loads(out)[0]["n_stored"] == 0
    with open_store(db_url) as store:
        assert len(runs_frame(store)) == 5


def test_a_release_that_fails_to_ingest_leaves_the_earlier_runs(db_url: str,
                                                               tmp_path: Path) -> None:
    from perfpredict.errors import BadInputError
    from perfpredict.ingest._text.lines import file_sha256
    from perfpredict.ingest.pipeline import ingest_file
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    earlier = _earlier_release(tmp_path, "lulesh_thicket")
    broken = tmp_path / "broken.csv"
    broken.write_text("app,system,nodes,runtime_s\nLULESH,opal,8,10.0\nLULESH,opal,16,-1\n")
    with open_store(db_url, create=True) as store:
        ingest_file(store, "csv", earlier)
        with pytest.raises(BadInputError, match=r"broken\.csv:3"):
            ingest_file(store, "csv", broken, replaces=[file_sha256(earlier)])
        assert len(runs_frame(store)) == 5


def test_mlperf_runs_all_say_they_train_to_a_target() -> None:
    """Time-to-train may beat ideal scaling (the batch size changes the work), so no
    MLPerf series is bounded there; MLPerf HPC's later rounds said only 'strong'."""
    from perfpredict import datasets

    series = datasets.series(["mlperf_hpc"])
    assert len(series) > 50 and not any(s.fixed_work for s in series)


def test_datasets_list_gives_json_and_csv_for_scripts(tmp_path: Path) -> None:
    """``--format json|csv`` everywhere (DESIGN.md): a script asks which data sets a store
    holds without reading a table drawn for a terminal."""
    from perfpredict import datasets

    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "datasets", "load", "lulesh_thicket")[0] == 0
    code, out, err = _invoke(db, "datasets", "list", "--format", "json")
    assert code == 0, err
    held = {r["name"]: r["in_store"] for r in json.loads(out)}
    assert held == {n: "yes" if n == "lulesh_thicket" else "no" for n in datasets.NAMES}
    code, out, err = _invoke(db, "datasets", "list", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    assert list(rows[0]) == ["name", "in_store", "description", "path"]
    assert [r["name"] for r in rows] == list(datasets.NAMES)


def test_each_description_states_its_files_range_and_its_sources_licence(
        tmp_path: Path) -> None:
    """MLPerf HPC was listed as "8-16384 nodes" while 699 of its runs, the instances of
    weak-scaling submissions, ran on 2 or 4 nodes: a user choosing data by the list was
    told of no run below 8 nodes."""
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "db", "init")[0] == 0
    code, out, err = _invoke(db, "datasets", "list", "--format", "json")
    assert code == 0, err
    for entry in json.loads(out):
        rows = _rows(Path(entry["path"]))
        low, high, unit = re.search(r"(\d+)-(\d+) (nodes|ranks)", entry["description"]).groups()
        counts = [float(r["nodes" if unit == "nodes" else "total_ranks"]) for r in rows]
        assert (min(counts), max(counts)) == (float(low), float(high)), entry["name"]
        rounds = re.search(r"(v[\d.]+)-(v[\d.]+)", entry["description"])
        if rounds:
            held = sorted({r["round"] for r in rows}, key=lambda v: [int(x) for x in v[1:].split(".")])
            assert (held[0], held[-1]) == rounds.groups(), entry["name"]
        licence = re.search(r"\(([^()]*)\)$", entry["description"]).group(1).split()[0]
        source = (Path(entry["path"]).parent / "SOURCE.txt").read_text(encoding="utf-8")
        assert re.search(rf"^license: {re.escape(licence)}\b", source, re.MULTILINE), entry["name"]


@pytest.mark.parametrize("name", ["mlperf_training", "mlperf_hpc", "relearn"])
def test_a_bundled_source_says_how_its_file_was_made_from_the_raw_one(name: str) -> None:
    """The bundled SOURCE.txt was the raw one copied: MLPerf's said that aborted runs are
    "kept, flagged" and to keep the rows without a ``duplicate_of``, where the bundled
    file has neither column and holds only unique, successful runs."""
    raw_source = shared_path("datasets", name, "SOURCE.txt").read_text(encoding="utf-8")
    bundled = (REPO / "datasets" / name / "SOURCE.txt").read_text(encoding="utf-8")
    note, rest = bundled.split("\n\n", 1)
    assert rest == raw_source
    n_runs = len(_rows(REPO / "datasets" / name / "runs.csv.gz"))
    n_raw = len(_rows(shared_path("datasets", name, "runs.csv")))
    assert note.startswith(f"bundled: {name}/runs.csv.gz, made by datasets/prepare.py")
    assert f"({n_raw} raw rows -> {n_runs} runs" in note
    assert ("no duplicate_of or run_status column" in note) == name.startswith("mlperf")


def test_one_data_set_by_name_is_that_data_set_not_its_letters(store) -> None:  # type: ignore[no-untyped-def]
    """``datasets.ingest(store, "castro_scaling")`` read the name letter by letter ("no
    bundled data set 'c'"), as did ``runs_frame`` and ``series``; one name is one data
    set, as one application is one in ``runs_frame(store, app=...)``. Every name is
    checked before any is stored."""
    from perfpredict import datasets
    from perfpredict.errors import BadInputError, NotFoundError
    from perfpredict.store.queries import runs_frame

    [report] = datasets.ingest(store, "castro_scaling")
    assert report.n_stored == NEW["castro_scaling"] == len(runs_frame(store))
    assert len(datasets.runs_frame("lulesh_thicket")) == 5
    assert {s.key.app for s in datasets.series("lulesh_thicket")} == {"LULESH 2.0.3"}
    with pytest.raises(NotFoundError, match="no bundled data set 'lulesh'; choose one of"):
        datasets.ingest(store, ["lulesh_thicket", "lulesh"])
    assert len(runs_frame(store)) == NEW["castro_scaling"]
    with pytest.raises(BadInputError, match=r"^names must be a data set's name or a list of "
                       r"names, as \['castro_scaling'\], got 5$"):
        datasets.ingest(store, 5)  # type: ignore[arg-type]


def test_load_given_a_store_says_that_ingest_stores_data_sets(store) -> None:  # type: ignore[no-untyped-def]
    """``datasets.load`` reads one file as a DataFrame, while the command ``datasets
    load`` stores data sets: a notebook following the command called
    ``datasets.load(store)`` and was told "no bundled data set Store(url=...)"."""
    from perfpredict import datasets
    from perfpredict.errors import BadInputError
    from perfpredict.store.queries import runs_frame

    for given, kind in ((store, "Store"), (["relearn", "lulesh_thicket"], "list")):
        with pytest.raises(BadInputError, match=(
                rf"^load reads one data set's file by its name \(load\('castro_scaling'\)\), "
                rf"not a {kind}; to store data sets, as the command 'datasets load' does, call "
                r"perfpredict\.datasets\.ingest\(store, names\); runs_frame\(names\)")):
            datasets.load(given)
    assert len(runs_frame(store)) == 0
    assert len(datasets.load("lulesh_thicket")) == 5

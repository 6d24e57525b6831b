"""Catalog entries: the shipped TOML files, validation of user files, and the TOML round
trip."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.catalog import (
    Queue,
    SystemSpec,
    bundled_systems,
    charge,
    load_toml,
    parse_toml,
    queue_for,
    to_toml,
)
from perfpredict.catalog.entries import NUMERIC_FIELDS, many_to_toml
from perfpredict.catalog.merge import FACT_FIELDS, change_to, merged
from perfpredict.errors import BadInputError
from perfpredict.names import name_key

REQUIRED_SYSTEMS = {"Frontier", "Aurora", "Perlmutter-GPU", "Perlmutter-CPU", "Polaris",
                    "ARCHER2", "LUMI-G", "JUWELS-Booster", "Fugaku", "opal", "Lichtenberg",
                    "Eos", "Selene", "LUMI-C", "El Capitan"}


def by_name(name: str) -> SystemSpec:
    return next(s for s in bundled_systems() if s.name == name)


def test_every_shipped_entry_loads_and_the_required_systems_are_there() -> None:
    names = [s.name for s in bundled_systems()]
    assert len(names) == len(set(names))
    assert REQUIRED_SYSTEMS <= set(names)


@pytest.mark.parametrize("spec", bundled_systems(), ids=lambda s: s.name)
def test_every_present_number_has_a_source(spec: SystemSpec) -> None:
    assert spec.unsourced_fields() == []
    for field in NUMERIC_FIELDS:
        value = getattr(spec, field)
        if value is not None:
            assert math.isfinite(value) and value >= 0
            assert spec.sources[field].strip()


@pytest.mark.parametrize("spec", bundled_systems(), ids=lambda s: s.name)
def test_shipped_queues_are_consistent(spec: SystemSpec) -> None:
    for queue in spec.queues:
        assert queue.max_nodes is None or queue.min_nodes <= queue.max_nodes
        if spec.nodes and queue.max_nodes:
            assert queue.max_nodes <= spec.nodes


def test_data_set_labels_are_aliases_of_their_systems() -> None:
    assert "opal (LLNL; Intel Broadwell, MVAPICH2, Intel 19.1)" in by_name("opal").aliases
    assert ("Lichtenberg (TU Darmstadt), per the Extra-P GPR study; not stated in the logs"
            in by_name("Lichtenberg").aliases)


@pytest.mark.parametrize(("nodes", "walltime_h"), [
    (1, 2), (91, 2), (92, 6), (183, 6), (184, 12), (1881, 12), (5645, 12), (9856, 12)])
def test_frontier_walltime_cap_follows_the_node_count_bins(nodes: int, walltime_h: int) -> None:
    queue = queue_for(by_name("Frontier"), nodes)
    assert queue is not None and queue.max_walltime_s == walltime_h * 3600


def test_queue_for_none_when_no_queue_takes_the_job() -> None:
    polaris = by_name("Polaris")
    assert queue_for(polaris, 497) is None
    assert queue_for(polaris, 5).name == "debug-scaling"  # type: ignore[union-attr]
    assert queue_for(by_name("Fugaku"), 10) is None


def test_charge_uses_the_charge_factor_and_queue_multiplier() -> None:
    assert charge(by_name("Frontier"), 100, 2.5) == pytest.approx(250.0)
    assert charge(by_name("LUMI-G"), 4, 24) == pytest.approx(384.0)  # the LUMI docs' example
    archer2 = by_name("ARCHER2")
    lowpriority = queue_for(archer2, 10, "lowpriority")
    assert charge(archer2, 10, 1, lowpriority) == 0.0
    assert charge(by_name("Perlmutter-GPU"), 10, 1) is None  # unknown, never made up


def test_toml_round_trip_of_every_shipped_entry() -> None:
    for spec in bundled_systems():
        assert parse_toml(to_toml(spec), "x.toml") == [spec]
    assert parse_toml(many_to_toml(bundled_systems()), "all.toml") == bundled_systems()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "key", "line_no"), [
    ('name = "X"\nfs_bw_bytes_per_s = -5.0\n[sources]\nfs_bw_bytes_per_s = "doc"\n',
     "key fs_bw_bytes_per_s", 2),
    ('name = "X"\nnodez = 4\n', "key nodez", 2),
    ('name = "X"\nnodes = "4"\n[sources]\nnodes = "doc"\n', "key nodes", 2),
    ('name = "X"\nnodes = 4.5\n[sources]\nnodes = "doc"\n', "key nodes", 2),
    ('name = "X"\nnodes = 4\n', "key nodes", 2),  # no source
    ('name = "X"\n[[queues]]\nname = "q"\nmin_nodes = 8\nmax_nodes = 2\n'
     '[sources]\nqueues = "doc"\n', "key queues[0].max_nodes: 2 is below min_nodes 8", 5),
    # a queue larger than the machine: one of the two numbers is a typo
    ('name = "X"\nnodes = 100\n[[queues]]\nname = "q"\nmax_nodes = 256\n'
     '[sources]\nnodes = "doc"\nqueues = "doc"\n', "key queues[0].max_nodes", 5),
    ('name = "X"\nnodes = 100\n[[queues]]\nname = "q"\nmin_nodes = 128\n'
     '[sources]\nnodes = "doc"\nqueues = "doc"\n', "key queues[0].min_nodes", 5),
    ('name = "X"\n[sources]\nnodse = "doc"\n', "key sources.nodse", 3),
    ('nodes = 4\n', "key name", None),
    ('name = "X\nnodes = 4\n', "not valid TOML", 1),
])
def test_bad_files_name_the_file_key_and_line(tmp_path: Path, text: str, key: str,
                                              line_no: int | None) -> None:
    path = write(tmp_path, text)
    with pytest.raises(BadInputError) as caught:
        load_toml(path)
    assert caught.value.path == str(path)
    assert caught.value.line_no == line_no
    assert key in caught.value.reason
    assert ";" in caught.value.reason  # a fix follows the reason


def test_a_file_that_is_no_path_is_bad_input() -> None:
    """``load_toml(5)`` was a TypeError from inside pathlib."""
    with pytest.raises(BadInputError, match=r"^a catalog's TOML file is named by its path, "
                       r"a text or a Path, not an int$"):
        load_toml(5)  # type: ignore[arg-type]


def test_unknown_key_suggests_the_close_one(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="did you mean 'cores_per_node'"):
        load_toml(write(tmp_path, 'name = "X"\ncore_per_node = 4\n'))


finite_positive = st.floats(min_value=1e-9, max_value=1e21, allow_nan=False,
                            allow_infinity=False)
text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1, max_size=40).filter(str.strip)  # a NUL is refused: no store keeps it
#: A system's name or alias: one of punctuation only is refused (it compares equal to any).
system_name = text.filter(name_key)


@st.composite
def specs(draw: st.DrawFn) -> SystemSpec:
    values: dict[str, object] = {}
    nodes: int | None = draw(st.none() | st.integers(1, 10**7))
    if nodes is not None:
        values["nodes"] = nodes
    for name in ["cores_per_node", "time_granularity_s"]:
        if draw(st.booleans()):
            values[name] = draw(st.integers(1, 10**7))
    for name in ["peak_flops_per_node", "fs_bw_bytes_per_s", "net_latency_s"]:
        if draw(st.booleans()):
            values[name] = draw(finite_positive)
    most = nodes or 10**6  # no queue takes more nodes than the machine has
    lows = draw(st.lists(st.integers(1, min(1000, most)), max_size=3))
    names = draw(st.lists(text, min_size=len(lows), max_size=len(lows), unique=True))
    queues = tuple(
        Queue(name=name, min_nodes=lo, max_nodes=draw(st.none() | st.integers(lo, most)),
              max_walltime_s=draw(st.none() | finite_positive),
              charge_multiplier=draw(st.floats(0, 100)))
        for name, lo in zip(names, lows, strict=True))  # a queue name given twice is refused
    spec = SystemSpec(name=draw(system_name).strip(), queues=queues,
                      notes=draw(st.none() | text), scheduler=draw(st.none() | text),
                      aliases=tuple(draw(st.lists(system_name, max_size=2))), **values)  # type: ignore[arg-type]
    return SystemSpec(**{**spec.__dict__,
                         "sources": {k: draw(text) for k in spec.sourced_fields()}})


@settings(max_examples=200, deadline=None)
@given(specs())
def test_toml_round_trip_property(spec: SystemSpec) -> None:
    assert parse_toml(to_toml(spec), "x.toml") == [spec]


@settings(max_examples=200, deadline=None)
@given(specs(), specs())
def test_an_entry_given_over_a_held_one_loses_no_fact(held: SystemSpec,
                                                      other: SystemSpec) -> None:
    """'systems add' of an entry naming a held one (:func:`merged`): each fact, with its
    source, is the given entry's where it states it, else the held one's, so no held fact
    is lost; every name of both finds it; the change says which facts were kept."""
    given_spec = SystemSpec(**{**other.__dict__, "name": held.name})
    stored = merged(held, given_spec)

    def facts(spec: SystemSpec) -> set[str]:
        return {f for f in FACT_FIELDS if getattr(spec, f) not in (None, ())}

    for field_name in FACT_FIELDS:
        source = given_spec if field_name in facts(given_spec) else held
        assert getattr(stored, field_name) == getattr(source, field_name)
        assert stored.sources.get(field_name) == source.sources.get(field_name)
    assert facts(held) | facts(given_spec) == facts(stored)
    assert all(stored.known_as(n) for n in (*held.aliases, *given_spec.aliases))
    change = change_to(held, given_spec, whole=False)
    if change.action == "updated":
        assert change.spec == stored and change.dropped == ()
        assert set(change.kept) == facts(held) - facts(given_spec)
    else:
        assert change.action == "unchanged" and stored == held


def test_a_queue_is_an_instance_of_its_class() -> None:
    """``Queue`` was wrapped in a cache left over from the name rule that moved to
    perfpredict.names: it built queues, but ``isinstance(queue, Queue)`` raised a
    TypeError and every queue ever read stayed in memory."""
    from perfpredict.catalog import Queue, bundled_systems

    queues = [queue for spec in bundled_systems() for queue in spec.queues]
    assert queues and all(isinstance(queue, Queue) for queue in queues)
    assert Queue(name="debug") is not Queue(name="debug")


#: How docs/catalog.md's "unknown" column names each field an entry leaves out (any of
#: the words; "bandwidths" covers the memory and network ones, "network" the latency).
_UNKNOWN_WORDS = {
    "nodes": ("nodes",), "cores_per_node": ("cores",), "gpus_per_node": ("gpus",),
    "peak_flops_per_node": ("peak",),
    "mem_bw_bytes_per_s_per_node": ("memory bandwidth", "bandwidths"),
    "node_memory_bytes": ("node memory",),
    "net_injection_bw_bytes_per_s": ("network", "bandwidths"),
    "net_latency_s": ("latency", "network"), "fs_bw_bytes_per_s": ("file system",),
    "charge_factor": ("charge",), "time_granularity_s": ("time granularity",),
    "scheduler": ("scheduler",), "queues": ("queues",),
}


def _documented_unknowns() -> dict[str, str]:
    """Each shipped system's "unknown" cell in docs/catalog.md, by the system's name."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "catalog.md").read_text()
    table = page.split("## Shipped systems", 1)[1]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0]]
    return {cells[0].split(" (")[0].strip(): cells[header.index("unknown")].strip().lower()
            for cells in rows[1:]}


@pytest.mark.parametrize("spec", bundled_systems(), ids=lambda s: s.name)
def test_the_catalog_page_names_every_field_a_shipped_entry_leaves_out(spec: SystemSpec) -> None:
    """El Capitan's row did not say its time granularity is unknown, nor Eos's and
    Selene's their scheduler and time granularity, nor opal's and Lichtenberg's their
    queues, though Aurora's, Polaris's and Fugaku's did: a reader took them for known."""
    said = _documented_unknowns()[spec.name]
    left_out = [field for field in _UNKNOWN_WORDS
                if getattr(spec, field) is None or getattr(spec, field) in ("", (), [])]
    if said.startswith("every number"):  # opal, Lichtenberg ("every number but ...")
        left_out = [field for field in left_out if field not in NUMERIC_FIELDS]
    assert [field for field in left_out
            if not any(word in said for word in _UNKNOWN_WORDS[field])] == []


def test_the_eos_note_keeps_eos_dfw_apart() -> None:
    """Eos's note gave MLPerf Training v3.1's 1,344 nodes as Eos's, but those runs are
    of the eos-dfw systems, whose hosts are another CPU than Eos's DGX H100 nodes (whose
    112 cores the entry gives): another machine. The note's numbers are the data set's."""
    import csv
    import gzip

    from tests.conftest import REPO

    with gzip.open(REPO / "datasets" / "mlperf_training" / "runs.csv.gz", "rt") as fh:
        runs = [row for row in csv.DictReader(fh) if row["system"].startswith("eos")]
    eos = [row for row in runs if row["system"].startswith("eos_")]
    dfw = [row for row in runs if row["system"].startswith("eos-dfw_")]
    assert {row["host_cpu"] for row in eos} == {"Intel(R) Xeon(R) Platinum 8480C"}
    assert {row["host_cpu"] for row in dfw} == {"Intel(R) Xeon(R) Platinum 8462Y+"}
    note = by_name("Eos").notes or ""
    assert f"reach {max(float(row['nodes']) for row in eos):g} nodes" in note
    dfw_nodes = sorted({float(row["nodes"]) for row in dfw})[-2:]
    assert "eos-dfw runs ({:,.0f} and {:,.0f} nodes) are not of this machine".format(
        *dfw_nodes) in note

"""A run's system linked to its catalog entry when the names differ only in case, spaces
or punctuation, and the entries issue 14 (item 20) asks for, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfpredict.catalog import bundled_systems, name_key


@pytest.fixture
def runs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "runs.csv"
    path.write_text("app,system,nodes,runtime_s\n"
                    "solver,JUWELS_Booster,2,100\n"
                    "solver,lumi c,2,90\n"
                    "solver,PERLMUTTER_CPU,2,80\n")
    return path


def test_runs_are_linked_to_the_catalog_entry_of_their_machine(cli, runs_csv: Path) -> None:  # type: ignore[no-untyped-def]
    ingested = cli("ingest", "csv", str(runs_csv))
    assert ingested.exit_code == 0, ingested.output
    assert "new systems" not in ingested.stdout
    exported = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert {run["system"] for run in exported} == {"JUWELS-Booster", "LUMI-C", "Perlmutter-CPU"}


def test_full_width_names_find_their_machine(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A name typed with full-width letters (an East Asian input method) was an unknown
    machine: 'systems show' said there was none, and ingest stored its runs under a new
    system beside Frontier's. Compared as the letters they stand for (NFKC), they find
    the entry, and the runs are stored under the catalog's name, not as typed; an entry
    so named is refused as the shipped machine's."""
    shown = json.loads(cli("systems", "show", "ＦＲＯＮＴＩＥＲ", "--format", "json").stdout)
    assert shown["name"] == "Frontier"
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nsolver,Ｆｒｏｎｔｉｅｒ,2,100\n"
                    "solver,ＬＵＭＩ,2,90\n", encoding="utf-8")
    ingested = cli("ingest", "csv", str(runs))
    assert ingested.exit_code == 0 and "new systems" not in ingested.stdout, ingested.output
    exported = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert {run["system"] for run in exported} == {"Frontier", "LUMI-G"}
    entry = tmp_path / "mine.toml"
    entry.write_text('name = "ＦＲＯＮＴＩＥＲ"\n', encoding="utf-8")
    refused = cli("systems", "add", str(entry))
    assert refused.exit_code == 2 and "with 'Frontier' in the catalog" in refused.stderr


def test_a_placeholder_from_before_does_not_hide_the_catalog_entry(cli, store) -> None:  # type: ignore[no-untyped-def]
    """A store where an older ingest made "JUWELS Booster" a system of its own (a
    placeholder holding nothing): the lookups of advice and 'systems show' find the
    catalog's JUWELS-Booster, with its facts, instead."""
    from perfpredict.catalog import SystemSpec, add_system

    add_system(store, SystemSpec(name="JUWELS Booster", origin="ingest"))
    shown = json.loads(cli("systems", "show", "JUWELS Booster", "--format", "json").stdout)
    assert shown["name"] == "JUWELS-Booster" and shown["nodes"] == 936


def test_close_names_of_different_machines_stay_apart() -> None:
    """Matching ignores case and punctuation only: no two shipped entries share a key, and
    Perlmutter's CPU and GPU halves (separate charge pools) never match each other."""
    keys = [name_key(n) for s in bundled_systems() for n in {s.name, *s.aliases}]
    owners = {}
    for spec in bundled_systems():
        for key in {name_key(n) for n in (spec.name, *spec.aliases)}:
            assert owners.setdefault(key, spec.name) == spec.name, key
    assert name_key("Perlmutter CPU") != name_key("Perlmutter-GPU")
    assert len(keys) >= len(bundled_systems())


def test_new_entries_with_queues_charge_units_and_sources(cli) -> None:  # type: ignore[no-untyped-def]
    lumi_c = json.loads(cli("systems", "show", "LUMI-C", "--format", "json").stdout)
    assert lumi_c["cores_per_node"] == 128 and lumi_c["charge_factor"] == 128.0
    assert lumi_c["allocation_unit"] == "LUMI CPU-core-hours"
    assert [(q["name"], q["max_nodes"], q["max_walltime_s"]) for q in lumi_c["queues"]] == [
        ("standard", 512, 172800.0), ("small", 4, 259200.0), ("debug", 4, 1800.0)]
    assert lumi_c["sources"]["queues"].startswith("https://docs.lumi-supercomputer.eu/")
    aurora = json.loads(cli("systems", "show", "aurora", "--format", "json").stdout)
    assert [q["max_walltime_s"] for q in aurora["queues"][:4]] == [21600, 43200, 64800, 86400]
    el_capitan = json.loads(cli("systems", "show", "el capitan", "--format", "json").stdout)
    assert el_capitan["gpus_per_node"] == 4 and el_capitan["nodes"] is None
    assert "left unknown" in el_capitan["notes"]
    for name in ("Perlmutter-CPU", "Perlmutter-GPU"):
        entry = json.loads(cli("systems", "show", name, "--format", "json").stdout)
        assert entry["allocation_unit"].endswith("node-hours")


def test_a_placeholder_holds_no_facts_a_log_does_not_give(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Ranks times threads per node is no node's core count (one rank per GPU)."""
    path = tmp_path / "runs.csv"
    path.write_text("app,system,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
                    "castro,newmachine,4,6,1,10\n")
    assert cli("ingest", "csv", str(path)).exit_code == 0
    shown = json.loads(cli("systems", "show", "newmachine", "--format", "json").stdout)
    assert shown["origin"] == "ingest" and shown["cores_per_node"] is None


def test_every_shipped_name_and_alias_finds_its_entry() -> None:
    """An estimate looks a machine up in the shipped files whose text holds its name
    (parsing all fifteen to find none cost every bundled estimate about 7 ms): each
    entry's name and aliases, spelled as users and logs spell them, must still find it."""
    from perfpredict.catalog import bundled_system

    for spec in bundled_systems():
        for name in (spec.name, *spec.aliases):
            for spelling in (name, name.upper(), name.replace("-", " "), f" {name}_"):
                found = bundled_system(spelling)
                assert found is not None and found.name == spec.name, (spelling, found)
    assert bundled_system("XE8545x4A100-SXM-40GB (Dell)") is None

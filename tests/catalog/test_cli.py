"""``perfpredict systems ...`` through the CLI runner, on SQLite and (in CI) PostgreSQL."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from perfpredict.catalog import bundled_system, bundled_systems


def test_list_shows_the_shipped_catalog(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("systems", "list", "--format", "json")
    assert result.exit_code == 0, result.output
    names = {entry["name"] for entry in json.loads(result.output)}
    assert names == {s.name for s in bundled_systems()}
    csv_result = cli("systems", "list", "--format", "csv")
    assert csv_result.output.splitlines()[0].startswith("name,nodes,cores_per_node,")


def test_show_formats(cli) -> None:  # type: ignore[no-untyped-def]
    shown = json.loads(cli("systems", "show", "frontier", "--format", "json").output)
    assert shown["name"] == "Frontier" and shown["queues"][0]["max_nodes"] == 91
    as_toml = cli("systems", "show", "Frontier", "--format", "toml").output
    assert tomllib.loads(as_toml)["name"] == "Frontier"
    assert "Frontier" in cli("systems", "show", "Frontier").output
    table = cli("systems", "show", "Lichtenberg").output
    assert "lichtenberg (tu darmstadt)" in table and "['" not in table  # a Python list's repr


def test_an_alias_repeating_a_name_is_dropped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Aliases that compare equal to the name or an earlier alias (case, spaces and
    punctuation aside) were kept and shown ("m1, M1, mach" for mach, LUMI-G's "lumi-g"
    and "lumig"): each finds nothing the first spelling does not, so they are dropped
    rather than refused, as the shipped entries list their own names among them."""
    mine = tmp_path / "mine.toml"
    mine.write_text('name = "mach"\naliases = ["m1", "M1", "mach", "m-2", "M_1", "m2"]\n',
                    encoding="utf-8")
    assert cli("systems", "add", str(mine)).exit_code == 0
    assert tomllib.loads(cli("systems", "show", "M 2", "--format", "toml").stdout)[
        "aliases"] == ["m1", "m-2"]
    assert "│ aliases" in (table := cli("systems", "show", "mach").stdout)
    assert "m1, m-2 " in table
    lumi = json.loads(cli("systems", "show", "lumig", "--format", "json").stdout)
    assert lumi["name"] == "LUMI-G" and lumi["aliases"] == ["lumi"]


def test_show_unknown_name_suggests_close_ones(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("systems", "show", "Frontiir")
    assert result.exit_code == 1
    assert "did you mean Frontier" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("text", "expected"), [
    ('name = "X"\nnodes = [1\n', "not valid TOML"),
    ('name = "X"\nnet_injection_bw_bytes_per_s = -1.0e9\n'
     '[sources]\nnet_injection_bw_bytes_per_s = "doc"\n', "key net_injection_bw_bytes_per_s"),
    ('name = "X"\nmystery = 1\n', "key mystery: unknown key"),
    # past any store's INTEGER: an internal OverflowError on SQLite, exit 1
    ('name = "X"\nnodes = 99999999999999999999\n[sources]\nnodes = "doc"\n',
     "key nodes: 99999999999999999999 is above 2147483647"),
    # fits SQLite but not PostgreSQL, which an export may be added to
    ('name = "X"\n[[queues]]\nname = "q"\nmax_nodes = 2147483648\n[sources]\nqueues = "doc"\n',
     "key queues[0].max_nodes: 2147483648 is above 2147483647"),
    # a copied [[queues]] block whose name was left: advice named 'q' for either limit
    ('name = "X"\n[[queues]]\nname = "q"\nmax_walltime_s = 3600\n[[queues]]\nname = "q"\n'
     'max_walltime_s = 86400\n[sources]\nqueues = "doc"\n',
     ":6: key queues[1].name: queue 'q' is also queues[0]"),
    # a fact written below [sources] was taken for a source, silently or with "quote it"
    ('name = "X"\n[sources]\nallocation_unit = "CU"\n',
     ":3: key sources.allocation_unit: gives a source for allocation_unit, which this entry "
     "does not set; keys below the [sources] header belong to it"),
    ('name = "X"\nnodes = 8\n[sources]\nnodes = "doc"\ncores_per_node = 64\n',
     ":5: key sources.cores_per_node: expected the URL or document title cores_per_node comes "
     "from, got int 64; keys below the [sources] header belong to it"),
    ('name = "X"\n[sources]\nqueues = "doc"\n', "add the [[queues]] blocks it documents"),
    ('name = "X"\n[[queues]]\nname = "q"\nnodes = 64\n[sources]\nqueues = "doc"\n',
     ":4: key queues[0].nodes: is a key of the entry, but below a [[queues]] header TOML reads "
     "it as that table's; move it above the entry's first [...] header"),
    # stored on SQLite (shown as "x y"), an internal error on PostgreSQL
    ('name = "x\\u0000y"\n', ":1: key name: holds a NUL character"),
    # punctuation only: a log's system '?' was stored as this machine
    ('name = "mine"\naliases = ["--"]\n', ":2: key aliases[0]: '--' has no letter or digit"),
    ('name = "++"\n', ":1: key name: '++' has no letter or digit"),
    # quoted already: "quote it" sent the user looking for missing quotes
    ('name = "  "\n', ":1: key name: is blank; give its text"),
    ('name = "X"\nnodes = 8\n[sources]\nnodes = ""\n',
     ":4: key sources.nodes: is empty; give its text"),
])
def test_add_bad_file_is_one_line_and_exit_2(cli, tmp_path: Path, text: str,  # type: ignore[no-untyped-def]
                                             expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = cli("systems", "add", str(path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}")
    assert expected in lines[0]


def test_add_reads_a_file_saved_with_a_byte_order_mark(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An editor's "UTF-8 with BOM" was refused as "not valid TOML (Invalid statement (at
    line 1, column 1)); fix the syntax at that spot", where nothing shows."""
    mine = tmp_path / "mine.toml"
    mine.write_text('name = "mycluster"\nnodes = 64\n[sources]\nnodes = "our wiki"\n',
                    encoding="utf-8-sig")
    result = cli("systems", "add", str(mine))
    assert result.exit_code == 0, result.output
    assert json.loads(cli("systems", "show", "mycluster", "--format", "json").output)[
        "nodes"] == 64


def test_export_is_re_addable(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mine = tmp_path / "mine.toml"
    mine.write_text('name = "mycluster"\nnodes = 64\n[sources]\nnodes = "our wiki"\n',
                    encoding="utf-8")
    assert cli("systems", "add", str(mine)).exit_code == 0
    exported = cli("systems", "export")
    assert exported.exit_code == 0
    path = tmp_path / "all.toml"
    path.write_text(exported.output, encoding="utf-8")
    added = cli("systems", "add", str(path))
    assert added.exit_code == 0, added.output
    assert added.stdout == (f"unchanged ARCHER2, Aurora, El Capitan, Eos, Frontier and "
                            f"{len(bundled_systems()) - 4} more ({len(bundled_systems()) + 1} "
                            "in all): every fact given is the one stored\n")
    assert cli("systems", "export").output == exported.output
    # nothing was written: the shipped entries still follow the shipped catalog
    listed = json.loads(cli("systems", "list", "--format", "json").stdout)
    assert {entry["name"] for entry in listed if entry["origin"] == "user"} == {"mycluster"}


def test_export_of_a_store_with_the_bundled_data_is_re_addable(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """MLPerf Training names 'AS-2124GQ-NART+ (Supermicro)' and 'as-2124gq-nart+
    (Supermicro)', two ingest placeholders; exported, they read back as the user's
    entries of one name ignoring case, and 'systems add' refused the whole export. The
    placeholders are left out of it: they hold nothing ingest does not make again."""
    assert cli("datasets", "load", "mlperf_training").exit_code == 0
    exported = cli("systems", "export")
    assert exported.exit_code == 0, exported.output
    assert "created by ingest" not in exported.stdout
    path = tmp_path / "all.toml"
    path.write_text(exported.stdout, encoding="utf-8")
    added = cli("systems", "add", str(path))
    assert added.exit_code == 0, added.output
    assert added.stdout.startswith("unchanged ARCHER2, ")
    listed = json.loads(cli("systems", "list", "--format", "json").stdout)
    assert {"AS-2124GQ-NART+ (Supermicro)", "as-2124gq-nart+ (Supermicro)"} <= {
        entry["name"] for entry in listed if entry["origin"] == "ingest"}


@pytest.mark.parametrize(("entry", "old", "new", "key"), [
    ("LUMI-C", "nodes = 2048\n", "nodes = -2048\n", "nodes"),
    ("Frontier", "max_walltime_s = 21600.0", "max_walltime_s = -1.0",
     "queues[1].max_walltime_s"),
    ("Polaris", 'name = "debug"\n', "", "queues[3].name"),
])
def test_a_mistake_in_an_edited_export_names_its_own_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, entry: str, old: str, new: str, key: str) -> None:
    """Errors named the line where the key was first set in the file: in an export of
    fifteen entries, LUMI-C's nodes pointed at ARCHER2's (line 3), and a queue's limit at
    the first queue's. A missing key points at its block's header."""
    text = cli("systems", "export").stdout
    index = [s["name"] for s in tomllib.loads(text)["systems"]].index(entry)
    start = text.index(f'name = "{entry}"')
    at = text.index(old, start)
    path = tmp_path / "all.toml"
    path.write_text(text[:at] + new + text[at + len(old):], encoding="utf-8")
    result = cli("systems", "add", str(path))
    assert result.exit_code == 2
    line_no = text.count("\n", 0, at) + 1 - (new == "")  # a removed key: its [[...]] header
    assert result.output.startswith(
        f"Error: {path}:{line_no}: key systems[{index}].{key}: "), result.output


@pytest.mark.parametrize(("text", "clash"), [
    ('name = "FRONTIER"\nnodes = 64\n[sources]\nnodes = "ours"\n', "'frontier' with 'Frontier'"),
    ('name = "mine"\naliases = ["Frontier"]\n', "'frontier' with 'Frontier'"),
    ('[[systems]]\nname = "a1"\naliases = ["shared"]\n'
     '[[systems]]\nname = "a2"\naliases = ["shared"]\n', "'shared' with 'a1'"),
    ('[[systems]]\nname = "shared"\n[[systems]]\nname = "shared"\n',
     "'shared' with 'shared' earlier in this file"),
])
def test_names_another_machine_has_are_refused(cli, tmp_path: Path, text: str,  # type: ignore[no-untyped-def]
                                               clash: str) -> None:
    """A second entry for a machine hid the first from every lookup; an alias two
    machines share found whichever came first. The same name is still stored over it."""
    path = tmp_path / "clash.toml"
    path.write_text(text, encoding="utf-8")
    result = cli("systems", "add", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {path}: system ") and clash in result.output
    assert "shared" not in cli("systems", "list").output
    same = tmp_path / "frontier.toml"
    same.write_text('name = "Frontier"\nnodes = 9000\n[sources]\nnodes = "ours"\n',
                    encoding="utf-8")
    assert cli("systems", "add", str(same)).exit_code == 0


def test_a_placeholder_with_runs_is_completed_under_its_own_name(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An entry taking, as an alias, the name of a system ingest made that holds runs
    split the machine in two: later runs naming it went to the entry's name, the earlier
    stayed under the log's, each with part of the curve. It is refused, naming the fix;
    the entry under the placeholder's name completes it, and later runs naming the other
    name join the earlier ones."""
    first = tmp_path / "first.csv"
    first.write_text("app,system,nodes,runtime_s\nc,lab7,1,100\nc,lab7,2,60\n")
    assert cli("ingest", "csv", str(first)).exit_code == 0
    entry = tmp_path / "lab.toml"
    entry.write_text('name = "Lab-Cluster-7"\naliases = ["lab7"]\nnodes = 64\n'
                     '[sources]\nnodes = "wiki"\n')
    refused = cli("systems", "add", str(entry))
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        f"Error: {entry}: system 'Lab-Cluster-7' takes the name 'lab7', which the store "
        "holds 2 runs under (a system ingest made for a log's name): runs ingested from "
        "now on would be stored under 'Lab-Cluster-7' and those stay under 'lab7', one "
        "machine split in two; name the entry 'lab7' (with 'Lab-Cluster-7' among its "
        "aliases) to complete that system")
    assert "Lab-Cluster-7" not in cli("systems", "list", "--format", "csv").stdout
    entry.write_text('name = "lab7"\naliases = ["Lab-Cluster-7"]\nnodes = 64\n'
                     '[sources]\nnodes = "wiki"\n')
    completed = cli("systems", "add", str(entry))
    assert completed.exit_code == 0
    assert completed.stdout == "completed lab7 (the placeholder ingest made for a log's name)\n"
    later = tmp_path / "later.csv"
    later.write_text("app,system,nodes,runtime_s\nc,Lab-Cluster-7,4,40\n")
    assert cli("ingest", "csv", str(later)).exit_code == 0
    stored = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert {run["system"] for run in stored} == {"lab7"}


def test_an_entry_naming_a_shipped_system_keeps_what_it_leaves_out(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """An entry correcting Frontier's node count replaced the whole shipped entry: its
    peak, bandwidths, queues and charge factor were gone (the roofline and the queue caps
    with them), and 'systems add' said "added 1 system(s)". The facts it gives go over
    the stored ones, the others are kept and named; --replace drops them, on request;
    'systems remove' brings the shipped entry back."""
    shipped = bundled_system("Frontier")
    assert shipped is not None and shipped.nodes == 9856 and shipped.fs_bw_bytes_per_s is None

    def frontier() -> dict:  # type: ignore[type-arg]
        return json.loads(cli("systems", "show", "Frontier", "--format", "json").stdout)

    mine = tmp_path / "frontier.toml"
    mine.write_text('name = "Frontier"\nnodes = 9000\nfs_bw_bytes_per_s = 1.0e13\n'
                    'aliases = ["olcf-frontier"]\n[sources]\nnodes = "our count"\n'
                    'fs_bw_bytes_per_s = "Orion"\n', encoding="utf-8")
    updated = cli("systems", "add", str(mine))
    assert updated.exit_code == 0, updated.output
    assert updated.stdout == (
        "updated Frontier: changed nodes 9856 -> 9000, fs_bw_bytes_per_s unknown -> 1e+13; "
        "added aliases olcf-frontier; kept cores_per_node, gpus_per_node, time_granularity_s, "
        "peak_flops_per_node, mem_bw_bytes_per_s_per_node, node_memory_bytes, "
        "net_injection_bw_bytes_per_s, charge_factor, allocation_unit, scheduler, queues, "
        "notes from the shipped catalog\n")
    stored = frontier()
    assert stored["origin"] == "user" and stored["nodes"] == 9000
    assert stored["peak_flops_per_node"] == shipped.peak_flops_per_node
    assert len(stored["queues"]) == len(shipped.queues) == 7
    assert stored["sources"] == {**shipped.sources, "nodes": "our count",
                                 "fs_bw_bytes_per_s": "Orion"}
    assert frontier() == json.loads(cli("systems", "show", "olcf frontier", "--format",
                                        "json").stdout)

    again = cli("systems", "add", str(mine))
    assert again.stdout == "unchanged Frontier: every fact given is the one stored\n"

    # a kept queue takes more nodes than the new count: refused naming both, nothing stored
    too_few = tmp_path / "too-few.toml"
    too_few.write_text('name = "Frontier"\nnodes = 50\n[sources]\nnodes = "typo"\n',
                       encoding="utf-8")
    refused = cli("systems", "add", str(too_few))
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"Error: {too_few}: system 'Frontier' with the facts kept from the stored entry: key "
        "queues[0].max_nodes: queue 'batch (bin 5)' takes up to 91 nodes, more than the "
        "machine's 50 (key nodes); fix the one that is wrong\n")
    assert frontier() == stored

    replaced = cli("systems", "add", "--replace", str(too_few))
    assert replaced.exit_code == 0, replaced.output
    assert replaced.stdout.startswith("replaced Frontier: changed nodes 9000 -> 50; dropped "
                                      "cores_per_node, gpus_per_node, ")
    assert replaced.stdout.endswith(", queues, notes, alias olcf-frontier\n")
    assert frontier()["peak_flops_per_node"] is None and frontier()["queues"] == []

    restored = cli("systems", "remove", "frontier")
    assert restored.exit_code == 0, restored.output
    assert restored.stdout.startswith("restored Frontier as shipped: changed nodes 50 -> 9856, ")
    assert {**frontier(), "origin": None} == {**shipped.to_dict(), "origin": None}
    assert frontier()["origin"] == "catalog"  # follows later releases' corrections again

    shipped_only = cli("systems", "remove", "Frontier")
    assert shipped_only.exit_code == 2
    assert shipped_only.stderr == (
        "Error: 'Frontier' is shipped with perfpredict and the store holds no entry added "
        "over it, so nothing is removed; correct its facts with 'perfpredict systems add "
        "FILE.toml'\n")


def test_remove_a_system_added_with_systems_add(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """'systems remove' takes out a machine 'systems add' stored, named by its name (not
    an alias: a removal names what it removes); one the store holds runs of is refused
    with their count and the fix, as its runs would lose the entry they are read with."""
    mine = tmp_path / "mine.toml"
    mine.write_text('name = "mycluster"\nnodes = 64\naliases = ["mc"]\n'
                    '[sources]\nnodes = "our wiki"\n', encoding="utf-8")
    assert cli("systems", "add", str(mine)).stdout == "added mycluster\n"
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nc,mc,1,100\nc,mycluster,2,60\n")
    assert cli("ingest", "csv", str(runs)).exit_code == 0

    def names() -> set[str]:
        return {entry["name"] for entry in json.loads(
            cli("systems", "list", "--format", "json").stdout)}

    with_runs = cli("systems", "remove", "MyCluster")
    assert with_runs.exit_code == 2
    assert with_runs.stderr == (
        "Error: system 'mycluster' holds 2 stored runs, which would lose the entry their "
        "estimates and advice read the machine from; delete them first ('perfpredict runs "
        "batches' lists the ingested files holding them, 'perfpredict runs delete --batch "
        "ID' deletes one), or correct the entry with 'perfpredict systems add FILE.toml'\n")
    assert "mycluster" in names()

    alias = cli("systems", "remove", "mc")
    assert alias.exit_code == 2
    assert alias.stderr == ("Error: 'mc' is an alias of 'mycluster'; give its name to remove "
                            "that entry\n")
    unknown = cli("systems", "remove", "mycluster2")
    assert unknown.exit_code == 1 and "did you mean mycluster?" in unknown.stderr

    assert cli("runs", "delete", "--batch", "1", "--yes").exit_code == 0
    removed = cli("systems", "remove", "MyCluster")
    assert removed.exit_code == 0, removed.output
    assert removed.stdout == "removed mycluster\n"
    assert names() == {spec.name for spec in bundled_systems()}
    assert cli("systems", "show", "mc").exit_code == 1


def test_add_reads_standard_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``systems export | perfpredict --db OTHER systems add -`` copies a catalog, as
    ``-`` reads standard input for ``ingest`` and ``estimate --input``: it was "-: no such
    file". A bad document names <stdin> and its line."""
    entry = 'name = "piped"\nnodes = 4\n[sources]\nnodes = "wiki"\n'
    result = cli("systems", "add", "-", input=entry)
    assert result.exit_code == 0, result.output
    assert result.stdout == "added piped\n"
    assert '"piped"' in cli("systems", "show", "piped", "--format", "toml").stdout
    bad = cli("systems", "add", "-", input='name = "piped"\nnodes = -1\n')
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: <stdin>:2: key nodes: -1 is below 1")
    clash = cli("systems", "add", "-", input='name = "FRONTIER"\n')
    assert clash.exit_code == 2 and clash.stderr.startswith("Error: <stdin>: system 'FRONTIER'")


#: What estimate and advise say of a blank --system: their queries name the option given.
GIVE_A_NAME = "--system is {}; give a system's name"
#: What reading a file says (ingest, advise walltime's input): its options, made from
#: Python too, name the system as the pipeline does where a format names none.
PASS_SYSTEM = "the system name is {}; pass --system NAME, the machine the jobs ran on"


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize(("args", "says"), [
    (("systems", "show", "{}"), "the system name is {}; give a system's name"),
    (("estimate", "--app", "bert", "--nodes", "8", "--system", "{}"), GIVE_A_NAME),
    (("advise", "--app", "bert", "--system", "{}"), GIVE_A_NAME),
    (("advise", "next-runs", "--app", "bert", "--system", "{}"), GIVE_A_NAME),
    (("ingest", "csv", "{csv}", "--system", "{}"), PASS_SYSTEM),
    (("advise", "walltime", "--input", "{csv}", "--input-format", "csv", "--system", "{}"),
     PASS_SYSTEM),
])
def test_a_blank_system_name_is_refused(sqlite_cli, tmp_path: Path, args: tuple[str, ...],  # type: ignore[no-untyped-def]
                                        says: str, name: str) -> None:
    """An empty or blank system name (an unset shell variable) was no system: estimate
    and advise answered from whichever system was best measured, ingest stored runs
    under a system of spaces, and 'systems show ""' said no such system (exit 1)."""
    runs = tmp_path / "runs.csv"
    runs.write_text("job_id,app,nodes,runtime_s,requested_walltime_s\n1,c,1,100,600\n")
    result = sqlite_cli(*(arg.format(name, csv=runs) for arg in args))
    assert result.exit_code == 2, result.output
    kind = "empty" if not name else "blank"
    assert result.output == (f"Error: {says.format(kind)} ('perfpredict systems list' shows "
                             "the catalog's)\n")
    assert sqlite_cli("runs", "stats").stdout.startswith("runs: 0,")

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

from perfpredict.catalog import bundled_systems


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
    assert f"added {len(bundled_systems()) + 1} system(s)" in added.output
    assert cli("systems", "export").output == exported.output


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
    assert f"added {len(bundled_systems())} system(s)" in added.output
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
    machines share found whichever came first. The same name still replaces."""
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
        "holds 2 run(s) under (a system ingest made for a log's name): runs ingested from "
        "now on would be stored under 'Lab-Cluster-7' and those stay under 'lab7', one "
        "machine split in two; name the entry 'lab7' (with 'Lab-Cluster-7' among its "
        "aliases) to complete that system")
    assert "Lab-Cluster-7" not in cli("systems", "list", "--format", "csv").stdout
    entry.write_text('name = "lab7"\naliases = ["Lab-Cluster-7"]\nnodes = 64\n'
                     '[sources]\nnodes = "wiki"\n')
    assert cli("systems", "add", str(entry)).exit_code == 0
    later = tmp_path / "later.csv"
    later.write_text("app,system,nodes,runtime_s\nc,Lab-Cluster-7,4,40\n")
    assert cli("ingest", "csv", str(later)).exit_code == 0
    stored = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert {run["system"] for run in stored} == {"lab7"}


def test_add_reads_standard_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``systems export | perfpredict --db OTHER systems add -`` copies a catalog, as
    ``-`` reads standard input for ``ingest`` and ``estimate --input``: it was "-: no such
    file". A bad document names <stdin> and its line."""
    entry = 'name = "piped"\nnodes = 4\n[sources]\nnodes = "wiki"\n'
    result = cli("systems", "add", "-", input=entry)
    assert result.exit_code == 0, result.output
    assert result.stdout == "added 1 system(s): piped\n"
    assert '"piped"' in cli("systems", "show", "piped", "--format", "toml").stdout
    bad = cli("systems", "add", "-", input='name = "piped"\nnodes = -1\n')
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: <stdin>:2: key nodes: -1 is below 1")
    clash = cli("systems", "add", "-", input='name = "FRONTIER"\n')
    assert clash.exit_code == 2 and clash.stderr.startswith("Error: <stdin>: system 'FRONTIER'")


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize(("args", "option"), [
    (("systems", "show", "{}"), "the system name"),
    (("estimate", "--app", "bert", "--nodes", "8", "--system", "{}"), "--system"),
    (("advise", "--app", "bert", "--system", "{}"), "--system"),
    (("advise", "next-runs", "--app", "bert", "--system", "{}"), "--system"),
    (("ingest", "csv", "{csv}", "--system", "{}"), "--system"),
    (("advise", "walltime", "--input", "{csv}", "--input-format", "csv", "--system", "{}"),
     "--system"),
])
def test_a_blank_system_name_is_refused(sqlite_cli, tmp_path: Path, args: tuple[str, ...],  # type: ignore[no-untyped-def]
                                        option: str, name: str) -> None:
    """An empty or blank system name (an unset shell variable) was no system: estimate
    and advise answered from whichever system was best measured, ingest stored runs
    under a system of spaces, and 'systems show ""' said no such system (exit 1)."""
    runs = tmp_path / "runs.csv"
    runs.write_text("job_id,app,nodes,runtime_s,requested_walltime_s\n1,c,1,100,600\n")
    result = sqlite_cli(*(arg.format(name, csv=runs) for arg in args))
    assert result.exit_code == 2, result.output
    kind = "empty" if not name else "blank"
    assert result.output == (f"Error: {option} is {kind}; give a system's name "
                             "('perfpredict systems list' shows the catalog's)\n")
    assert sqlite_cli("runs", "stats").stdout.startswith("runs: 0,")

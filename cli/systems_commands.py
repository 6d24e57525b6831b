"""``perfpredict systems list|show|add|remove|export``: the system catalog in the store."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from perfpredict.cli.render import TableFormat, TableFormatOption, print_json, print_rows

systems_app = typer.Typer(
    help="The system catalog: node counts, per-node peaks and bandwidths, queue limits and "
    "charge rules, each number with its source.",
    no_args_is_help=True,
)

#: Columns of ``systems list --format csv`` (stable; scripts rely on them).
CSV_COLUMNS = ["name", "nodes", "cores_per_node", "gpus_per_node", "peak_flops_per_node",
               "mem_bw_bytes_per_s_per_node", "node_memory_bytes",
               "net_injection_bw_bytes_per_s", "net_latency_s", "fs_bw_bytes_per_s",
               "charge_factor", "allocation_unit", "time_granularity_s", "scheduler",
               "n_queues", "origin"]
#: The narrower set a terminal table has room for.
TABLE_COLUMNS = ["name", "nodes", "cores_per_node", "gpus_per_node", "peak_flops_per_node",
                 "allocation_unit", "n_queues", "origin"]
QUEUE_COLUMNS = ["name", "min_nodes", "max_nodes", "max_walltime_s", "charge_multiplier"]


class ShowFormat(str, Enum):
    table = "table"
    json = "json"
    toml = "toml"


@systems_app.command("list")
def list_command(
    ctx: typer.Context,
    fmt: TableFormatOption = TableFormat.table,
) -> None:
    """Show every system, the store's and the shipped catalog's (json: whole entries)."""
    from perfpredict.catalog import list_systems

    specs = list_systems(ctx.obj.open_store())
    if fmt.value == "json":
        print_json([spec.to_dict() for spec in specs])
        return
    rows = [{**spec.to_dict(), "n_queues": len(spec.queues)} for spec in specs]
    print_rows(rows, fmt.value, CSV_COLUMNS if fmt.value == "csv" else TABLE_COLUMNS)


@systems_app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        metavar="NAME", help="System name or alias (case-insensitive).")],
    fmt: Annotated[ShowFormat, typer.Option(
        "--format", help="table: each field with its source; json; toml: an entry "
        "'systems add' reads back.")] = ShowFormat.table,
) -> None:
    """Show one system with its queues and the source of every number."""
    from perfpredict.catalog import require_system, to_toml

    spec = require_system(ctx.obj.open_store(), name)
    if fmt.value == "json":
        print_json(spec.to_dict())
    elif fmt.value == "toml":
        typer.echo(to_toml(spec), nl=False)
    else:
        facts = {**spec.to_dict(), "aliases": ", ".join(spec.aliases)}  # not "['lumi']"
        rows = [{"field": key, "value": facts[key], "source": spec.sources.get(key, "")}
                for key in facts if key not in {"queues", "sources"}]
        print_rows(rows, "table", ["field", "value", "source"], title=spec.name)
        if spec.queues:
            print_rows(facts["queues"], "table", QUEUE_COLUMNS,
                       title=f"queues (source: {spec.sources.get('queues', '')})")


@systems_app.command("add")
def add(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(
        metavar="FILE.toml", help="TOML file with one entry, or \\[\\[systems]] blocks as "
        "'systems export' writes them; - reads standard input.")],
    replace: Annotated[bool, typer.Option(
        "--replace", help="Store each entry whole: the facts the stored entry of its name "
        "has and the file leaves out are dropped, not kept.")] = False,
) -> None:
    """Add systems from a TOML file (see docs/catalog.md for the fields). An entry naming
    a system the store holds (a shipped one included) changes the facts it gives and keeps
    the others; one line per entry says which."""
    from perfpredict.catalog import add_systems_from_file
    from perfpredict.catalog.merge import summaries

    changes = add_systems_from_file(ctx.obj.open_store(write=True), path, replace=replace)
    typer.echo("\n".join(summaries(changes)))


@systems_app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        metavar="NAME", help="The system's name (case-insensitive; not an alias).")],
) -> None:
    """Remove a system added with 'systems add' or by ingest. One added over a shipped
    system gives way to the shipped entry; one with stored runs is refused."""
    from perfpredict.catalog import remove_system

    typer.echo(remove_system(ctx.obj.open_store(write=True), name).summary())


@systems_app.command("export")
def export(ctx: typer.Context) -> None:
    """Write every system of the catalog or added by you as TOML to stdout; 'systems add'
    reads it back. The placeholders ingest made for systems a log named are left out."""
    from perfpredict.catalog import export_systems

    typer.echo(export_systems(ctx.obj.open_store()), nl=False)


def register(app: typer.Typer) -> None:
    app.add_typer(systems_app, name="systems")

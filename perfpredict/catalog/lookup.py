"""The catalog entry of one machine as ``estimate`` reads it: the store's entry where it
has one (a machine ``systems add`` described, or a shipped one it corrected), else the
shipped one, by the rules ``advise`` reads the store's catalog by
(:func:`perfpredict.catalog.rows.with_shipped`, :func:`~perfpredict.catalog.rows.entry_named`),
without SQLAlchemy for a SQLite store: an estimate must stay fast."""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfpredict.catalog import bundled_system, name_key

#: The ``systems`` table's columns (a test holds them to the schema's), which
#: :func:`perfpredict.catalog.rows.row_to_spec` reads by name: named here, so that that
#: module, and the entries' dataclasses it makes, are imported only where a stored row
#: names the machine.
ROW_COLUMNS = ("name", "origin", "nodes", "cores_per_node", "gpus_per_node",
               "peak_flops_per_node", "mem_bw_bytes_per_s_per_node", "node_memory_bytes",
               "net_injection_bw_bytes_per_s", "net_latency_s", "fs_bw_bytes_per_s",
               "charge_factor", "allocation_unit", "time_granularity_s", "details")

if TYPE_CHECKING:
    from perfpredict.catalog.entries import SystemSpec


def system_entry(db_url: str | None, name: str) -> SystemSpec | None:
    """The entry of the system called ``name`` or having it as an alias, in the store at
    ``db_url`` (None: no store) and the shipped catalog together, as ``perfpredict
    systems show NAME`` shows it: the store's entry of a name wins over the shipped one
    of that name unless the store holds it as shipped by an earlier release or as an
    ingest placeholder. None where neither has one.

    Before, the roofline and the machine's size in an estimate read the shipped catalog
    alone (the size the store's entry of the exact name): a machine the user described
    with ``systems add`` got no roofline, and a shipped entry they corrected was read as
    shipped. Only the stored rows whose name or details hold the name so compared are
    read into entries: a store of MLPerf's hundreds of systems is one SELECT."""
    from perfpredict.store.reading import query_rows

    shipped = bundled_system(name)
    rows = None if db_url is None else query_rows(
        db_url, f"SELECT {', '.join(ROW_COLUMNS)} FROM systems")
    key = name_key(name)
    named = [row for row in rows or () if key in name_key(f"{row[0]} {row[-1]}")]
    if not named:  # most estimates: a machine the store holds no row of
        return shipped
    from perfpredict.catalog.rows import entry_named, row_to_spec, with_shipped

    stored = [row_to_spec(dict(zip(ROW_COLUMNS, row, strict=True))) for row in named]
    return entry_named(with_shipped(stored, [shipped] if shipped else []).values(), name)

"""The entry an estimate reads for its machine (:func:`system_entry`, through sqlite3
for a SQLite store) is the one ``systems show`` and ``advise`` read through the store
(:func:`get_system`): the store's entry wins over the shipped one of its name, a user's
over ingest's placeholder, by name or alias."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import update

from perfpredict.catalog import SystemSpec, add_system, bundled_system, get_system
from perfpredict.catalog.lookup import ROW_COLUMNS, system_entry
from perfpredict.catalog.rows import spec_to_row
from perfpredict.store.schema import systems
from tests.catalog.test_store_sync import insert_placeholder


def test_the_columns_read_are_the_tables() -> None:
    assert set(ROW_COLUMNS) == set(systems.c.keys())


def test_no_store_reads_the_shipped_entry() -> None:
    assert system_entry(None, "frontier") == bundled_system("Frontier")
    assert system_entry(None, "no-such-machine") is None


def test_an_estimate_reads_the_entry_advise_reads(store) -> None:  # type: ignore[no-untyped-def]
    url = store.url
    # a store nobody listed the catalog of yet holds no shipped rows: the shipped entry
    assert system_entry(url, "Frontier") == bundled_system("Frontier")
    # a user's correction of a shipped entry wins over it
    frontier = bundled_system("Frontier")
    assert frontier is not None and frontier.fs_bw_bytes_per_s is None
    edited = replace(frontier, fs_bw_bytes_per_s=1e13,
                     sources={**frontier.sources, "fs_bw_bytes_per_s": "OLCF: Orion"})
    add_system(store, edited)
    for name in ("Frontier", "FRONTIER"):
        got = system_entry(url, name)
        assert got == get_system(store, name) == edited, name
        assert got is not None and got.origin == "user"
    # a machine the catalog lacks: ingest's placeholder, then the user's entry naming
    # the logs' name as an alias, which wins over it
    insert_placeholder(store, "lab7")
    assert system_entry(url, "lab7") == get_system(store, "lab7")
    assert system_entry(url, "lab7").origin == "ingest"  # type: ignore[union-attr]
    lab = SystemSpec(name="Lab-Cluster-7", aliases=("lab7",), nodes=64,
                     fs_bw_bytes_per_s=1e10,
                     sources={"nodes": "wiki", "fs_bw_bytes_per_s": "IOR"})
    add_system(store, lab)
    assert system_entry(url, "lab7") == get_system(store, "lab7") == lab
    assert system_entry(url, "LAB-cluster 7") == lab


def test_a_shipped_entry_an_earlier_release_stored_is_read_as_shipped(store) -> None:  # type: ignore[no-untyped-def]
    """A stored row of origin ``catalog`` that differs from the shipped entry is an
    earlier release's, which the shipped one replaces on the next read of the store's
    catalog; an estimate reads the shipped one too, and writes nothing."""
    frontier = bundled_system("Frontier")
    assert frontier is not None
    get_system(store, "Frontier")  # seeds the store
    with store.engine.begin() as conn:
        conn.execute(update(systems).where(systems.c.name == "Frontier")
                     .values(**spec_to_row(replace(frontier, nodes=10))))
    assert system_entry(store.url, "Frontier") == frontier

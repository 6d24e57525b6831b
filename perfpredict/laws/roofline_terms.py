"""The roofline law's terms that turn a workload's volume into time with a number from
the system catalog, named once for the law, the queries that give the volumes and the
notes that say which terms an estimate used.

Kept apart from :mod:`perfpredict.laws.roofline` so that a query can name its volumes
without importing the law, which only the queries giving one need.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple


class RooflineTerm(NamedTuple):
    """One volume of a run, the catalog's number that turns it into time, and what the
    term is called where the estimate says it used it or could not."""

    #: the workload's field, per run (all nodes together), as a query names it
    volume: str
    #: the :class:`~perfpredict.catalog.entries.SystemSpec` attribute it is divided by
    machine: str
    #: that number in words, for notes
    machine_words: str
    #: what the term gives, for notes
    gives: str
    #: what holds without the machine's number
    without: str


TERMS = (
    RooflineTerm("io_bytes", "fs_bw_bytes_per_s", "file-system bandwidth", "I/O time",
                 "I/O time is inside the fitted terms"),
    RooflineTerm("net_bytes", "net_injection_bw_bytes_per_s", "network injection bandwidth",
                 "network time", "network volume time is inside the fitted terms"),
    RooflineTerm("flops", "peak_flops_per_node", "peak flop rate", "a compute roof",
                 "the on-node time has no compute roof"),
    RooflineTerm("mem_bytes", "mem_bw_bytes_per_s_per_node", "memory bandwidth",
                 "a memory roof", "the on-node time has no memory roof"),
)

#: The query fields the roofline turns into time, in :data:`TERMS`' order.
VOLUMES = tuple(term.volume for term in TERMS)


def fallbacks_for(given: Collection[str], machine: object,
                  catalog: str = "the catalog") -> list[str]:
    """The terms of the volumes ``given`` whose catalog number ``machine`` lacks (an
    attribute None or 0), and what holds instead: known from which volumes a workload
    gives and which numbers the machine has, not from their values or a fit, so an
    estimate says them without fitting the law. ``catalog`` names where ``machine``'s
    numbers were read (an estimate's: the shipped catalog, or the store's entry a user
    gave with ``systems add``)."""
    if not given:
        return ["no workload volume (I/O, network, flops, memory bytes) for this series: "
                "all its time is in the fitted serial, compute and communication terms"]
    return [f"{catalog} has no {term.machine_words} for this system: {term.without}"
            for term in TERMS
            if term.volume in given and not getattr(machine, term.machine, None)]


def sources_for(given: Collection[str], machine: object) -> list[str]:
    """The terms of the volumes ``given`` that ``machine``'s numbers turn into time, in
    words (``I/O time from its file-system bandwidth``)."""
    return [f"{term.gives} from its {term.machine_words}" for term in TERMS
            if term.volume in given and getattr(machine, term.machine, None)]

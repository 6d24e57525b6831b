"""Real public scaling measurements shipped with perfpredict, and their loaders.

Each data set is ``<name>/runs.csv.gz`` in the ``ingest csv`` vocabulary, with its
SOURCE.txt (repository, commit, what the columns mean) and LICENSE. ``prepare.py`` shows
how they were derived from the raw copies.

>>> from perfpredict import datasets
>>> datasets.NAMES[:4]
('mlperf_training', 'mlperf_hpc', 'relearn', 'lulesh_thicket')
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfpredict._listing import listing
from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.names import given_names
from perfpredict.store.handle import fills_store, takes_store

if TYPE_CHECKING:
    import pandas as pd

    from perfpredict.ingest.pipeline import BatchReport
    from perfpredict.model.series import Series
    from perfpredict.store import Store, StoreLike

NAMES = ("mlperf_training", "mlperf_hpc", "relearn", "lulesh_thicket", "castro_scaling",
         "pencilffts_jeanzay")
DESCRIPTIONS = {
    "mlperf_training": "MLPerf Training v0.7-v4.0 time-to-train, 1-1536 nodes (Apache-2.0)",
    "mlperf_hpc": "MLPerf HPC v0.7-v3.0, 2-16384 nodes per model trained, with data-staging "
                  "time (Apache-2.0)",
    "relearn": "RELeARN weak scaling, 32-512 ranks, 2 repetitions (BSD-3-Clause)",
    "lulesh_thicket": "LULESH 2.0.3 weak scaling, 27-343 ranks (MIT)",
    "castro_scaling": "Castro strong scaling on Summit and Frontier, 16-2048 nodes, time per "
                      "step or per evolution (BSD-3-Clause + LBNL clause)",
    "pencilffts_jeanzay": "PencilFFTs.jl and P3DFFT 3D FFTs on Jean-Zay, 128-16384 ranks, "
                          "time per transform pair (MIT)",
}
#: The sha256 of each release of a data set's file, oldest first; the last is the file
#: shipped. ``datasets load`` on a store that loaded an earlier release replaces its runs
#: (a corrected file would otherwise be stored beside the old one: rows without a job id
#: are keyed by the file they came from). ``prepare.py`` prints a new file's checksum.
RELEASES = {
    "mlperf_training": ("fd412ade786229d42ad986d4b8323d23aecb16483b4efbaab62703b5d5ba0c19",),
    "mlperf_hpc": (
        "4f96d950a755b5be40de9a152832d6101d652143e40090672369d837c9f9c9bc",
        "c60195bbabfadc0cb496244c44abf1f6cf1e427da0da4eb5be52da1b468fab20",
        # each run's scaling hint says it trains to a target (not only the first round's)
        "da1fec61c74fbafec789895f7935389bc0fe4c8e35b901de3d3747436728f24f",
    ),
    "relearn": (
        "616a0a0638fcd8696643980d3408edbb7ca45540303204bf5e7e4963060be197",
        "5050ad19572bd76ae3c46add66c15ad4d4724f8eb0cecd54252c541fe32a7fa0",
    ),
    "lulesh_thicket": (
        "b7bf78a87a33dd692c2606fefb76852ac7574f4d23cf8cd15bd27370ee525eb7",
        "7b22e80c7ea0cbff9ba96cbc5fbf0b4c01bae3d205007f36b718e197bc4f62a4",
    ),
    "castro_scaling": ("b2fdf9f7d9973aaf88e4a3b4f0ddbe4bc1af61e1b370b24d0b8d0b9c7e8b8b2d",),
    "pencilffts_jeanzay": ("1d61a8dd07a3e46d956adc77aed12d4f1189675304fc5dc1e65a4b60bb94ddc5",),
}
_HERE = Path(__file__).resolve().parent
__all__ = ["DESCRIPTIONS", "NAMES", "RELEASES", "describe", "ingest", "load", "named", "path",
           "releases_in", "runs_frame", "series"]
__dir__ = listing(globals(), __all__)


def path(name: str) -> Path:
    """The CSV file of the bundled data set ``name``."""
    if name not in NAMES:
        raise NotFoundError(f"no bundled data set {name!r}; choose one of: {', '.join(NAMES)}")
    return _HERE / name / "runs.csv.gz"


def named(names: str | Iterable[str]) -> list[str]:
    """The data sets ``names`` names, each checked (:func:`path`): one name is one data
    set, not its letters (``ingest(store, "castro_scaling")`` was "no bundled data set
    'c'"), as :func:`perfpredict.store.queries.named_apps` reads applications."""
    wanted = given_names(names, "names", "a data set's name", "['castro_scaling']")
    for name in wanted:
        path(name)
    return wanted


def load(name: str) -> pd.DataFrame:
    """One data set's file as a DataFrame (one row per run, its CSV's columns), read
    without a store. The command of the same name, ``perfpredict datasets load``, stores
    data sets: that is :func:`ingest`, which a notebook following the command reached
    for here and was told "no bundled data set Store(url=...)"."""
    import pandas as pd

    if not isinstance(name, str):
        raise BadInputError(
            f"load reads one data set's file by its name (load('castro_scaling')), not a "
            f"{type(name).__name__}; to store data sets, as the command 'datasets load' "
            "does, call perfpredict.datasets.ingest(store, names); runs_frame(names) gives "
            "several as a store holds them")
    return pd.read_csv(path(name))


@fills_store
def ingest(store: Store, names: str | Iterable[str] = NAMES) -> list[BatchReport]:
    """Store the bundled data sets ``names`` (one name or several; :func:`named`),
    idempotently (a second call stores nothing), each replacing the runs of its earlier
    releases where the store holds one."""
    from perfpredict.ingest.pipeline import ingest_file

    return [ingest_file(store, "csv", path(n), replaces=RELEASES[n][:-1])
            for n in named(names)]


def runs_frame(names: str | Iterable[str] = NAMES) -> pd.DataFrame:
    """The runs of the bundled data sets ``names`` as
    ``perfpredict.store.queries.runs_frame`` gives a store's, without storing them.

    They are ingested into a throwaway store, so they pass the same parser and field
    rules, and are grouped into the same series, as after ``datasets load``.
    """
    import tempfile

    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame as store_runs_frame

    with tempfile.TemporaryDirectory(prefix="perfpredict-datasets-") as tmp:
        with open_store(f"sqlite:///{tmp}/datasets.db") as bundled:
            ingest(bundled, names)
            return store_runs_frame(bundled)


def series(names: str | Iterable[str] = NAMES) -> list[Series]:
    """The series of the bundled data sets ``names`` (:func:`runs_frame`), grouped as an
    ingested copy's would be: what ``train`` and ``evaluate`` add to a store's for
    ``--with-bundled`` and for the calibration of a store of few applications."""
    from perfpredict.model.series import build_series

    wanted = named(names)
    return build_series(runs_frame(wanted)) if wanted else []


@takes_store
def releases_in(store: Store) -> dict[str, str]:
    """For each bundled data set ``store`` holds (the very files ingested, by checksum),
    ``"current"`` or ``"earlier"``: which release of its file it loaded. An earlier
    release's runs are the data set's too, which ``datasets load`` replaces."""
    from perfpredict.store.queries import ingested_sha256s

    held = ingested_sha256s(store)
    found = {}
    for name in NAMES:
        if RELEASES[name][-1] in held:
            found[name] = "current"
        elif held.intersection(RELEASES[name][:-1]):
            found[name] = "earlier"
    return found


def describe(store: StoreLike | None = None) -> list[dict[str, Any]]:
    """Name, description and file of each data set, and with ``store`` (open, or named
    by its URL or path, as every call takes one) whether it holds the data set: ``yes``,
    ``an earlier release`` (``datasets load`` replaces it) or ``no``."""
    held = releases_in(store) if store is not None else {}
    in_store = {"current": "yes", "earlier": "an earlier release"}
    return [{"name": n,
             **({"in_store": in_store.get(held.get(n, ""), "no")} if store is not None else {}),
             "description": DESCRIPTIONS[n], "path": str(path(n))} for n in NAMES]

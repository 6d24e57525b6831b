"""Ingest time and peak memory against the database's own bulk load of the same file,
raw: sqlite3's ``.import``, or with ``--pg URL`` psql's ``\\copy``.

For each file, two child processes run side by side in the same loop:

* reference: the sqlite3 shell loading the file into one table as it is (``.import``;
  ``|``-separated for sacct, ``--csv`` for CSV, one text column per line for SWF, whose
  gzip is expanded first, outside the timing); with ``--pg``, psql creating that table
  (a text column per field) and loading the file into it with ``\\copy``, in a fresh
  database on the server at URL;
* perfpredict: ``ingest_file`` into a fresh store (checksum, parse, fold steps, natural
  keys, insert in one transaction): a SQLite file, or a fresh database on that server.

Figures are the perfpredict/reference time ratio, perfpredict's rows/s, and each
child's peak resident memory with their ratio, so machine noise cancels out of the
ratios. A child's peak is GNU time's (``/usr/bin/time -f %M``, the child's own
``ru_maxrss``), not this script's ``os.wait4`` of it: Linux carries the high-water mark
of the process that starts a child into it across ``exec``, so every child of this
script peaked at no less than the script (the ``--grown`` file's lines, a generated
document), a sqlite3 ``.import`` of a few MiB included. With ``--pg`` the server's own
work (COPY, indexes) is in both times and in neither memory figure.

``sacct-json`` (not in the default ``--formats``) is measured against Python's own
``json.load`` of the same file in a child, there being no bulk load of a JSON document
into a table: a daily ``sacct --json`` export of a center (756 MB) took 3.3 GB resident
loaded whole. Without ``--sacct-json`` a document of ``--sacct-json-mb`` MB is written
from the real Slurm 25.05-shape log's jobs, repeated with fresh job ids.

SWF is measured twice: on the real KTH-SP2 log (28.5k lines, where start-up weighs
most) and on a 1M-job log written by bench/generate_swf.py.

With ``--readers`` it measures instead what splits the sacct dump into fields, each in
its own child beside sqlite3's ``.import`` of the same file (issue 15: is the hand-written
tokenizer worth keeping against the C readers that already do the job?):

* handwritten: perfpredict's numpy tokenizer (``_text.blocks.line_blocks`` +
  ``split_fields``), every column of every line gathered as the parser gathers them;
  "split only": the fields found (byte offsets), not gathered;
* pandas: ``read_csv(engine="c", sep="|", dtype=str)`` in chunks of 50k lines;
* pyarrow: ``pyarrow.csv.open_csv`` (streaming, 4 MB blocks, every column a string),
  on one thread (as the others) and with its default thread pool; "adapter": on one
  thread, every Arrow column gathered into the byte matrices the column readers take,
  so that it compares with "handwritten" as "pyarrow" compares with "split only".

Each reader yields the same fields (the time of reading the file into columns, not of
converting them); the figure is the reader's time over ``.import``'s.

With ``--split-share`` the ingest child also sums the time it spends reading blocks of
lines, splitting them and gathering columns: the most a faster splitter could save.
With ``--pyarrow-split`` the sacct ingest is measured ``--repeat`` times as it is and
with pyarrow splitting its blocks, in alternating order.

Run: python -m bench.ingest_benchmark [--sacct FILE] [--swf FILE] [--csv FILE]
     [--sacct-json FILE] [--sacct-json-mb MB] [--formats sacct,swf,csv,sacct-json]
     [--pg URL] [--readers] [--repeat N] [--split-share]
     [--pyarrow-split]
     (without --sacct a 1M-line dump is generated with bench/generate_sacct.py)
"""

from __future__ import annotations

import argparse
import csv as csv_module
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.generate_sacct import write_dump
from bench.generate_swf import write_log

#: The real logs beside the repository (``PERFPREDICT_SHARED``, as the tests find them).
SHARED_LOGS = Path(os.environ.get("PERFPREDICT_SHARED",
                                  Path(__file__).resolve().parents[2] / "shared")) / "logs"
KTH_SWF = SHARED_LOGS / "swf/KTH-SP2-1996-2.1-cln.swf.gz"
SACCT_JSON_LOG = SHARED_LOGS / "slurm/sarc-generated-sacct-json-v0.0.43-mila_1714003200.json"
#: The reference of ``sacct-json``: the document loaded whole by Python's own reader.
_JSON_LOAD = """
import json, sys
with open(sys.argv[1], "rb") as fh:
    json.load(fh)
"""

_INGEST = """
import sys
from perfpredict.ingest.pipeline import ingest_file
from perfpredict.ingest.records import IngestOptions
from perfpredict.store import open_store

store = open_store(sys.argv[1])
report = ingest_file(store, sys.argv[2], sys.argv[3], IngestOptions(system=sys.argv[4]))
print(report.n_stored + report.n_duplicates + report.n_attached)
"""

#: The same ingest, with the time spent in the tokenizer's parts summed: what a faster
#: splitter could save of the whole (argv as _INGEST's).
_SPLIT_SHARE = """
import sys, time
from perfpredict.ingest._text import blocks
from perfpredict.ingest.sacct import columns as sacct_columns
from perfpredict.ingest.swf import columns as swf_columns
import perfpredict.ingest.sacct as sacct, perfpredict.ingest.swf as swf

spent = {"reading lines": 0.0, "splitting": 0.0, "gathering columns": 0.0}

def timed(part, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[part] += time.perf_counter() - start
    return wrapper

def timed_blocks(path, block_bytes=None):
    blocks_ = blocks.line_blocks(path, block_bytes)
    while True:
        start = time.perf_counter()
        block = next(blocks_, None)
        spent["reading lines"] += time.perf_counter() - start
        if block is None:
            return
        yield block

sacct.line_blocks = swf.line_blocks = timed_blocks
sacct_columns.split_fields = timed("splitting", blocks.split_fields)
swf_columns.split_whitespace = timed("splitting", blocks.split_whitespace)
blocks.gather = timed("gathering columns", blocks.gather)
start = time.perf_counter()
""" + _INGEST + """
total = time.perf_counter() - start
print(" ".join(f"{part}={seconds:.2f}s" for part, seconds in
               [("whole", total), *spent.items()]))
"""

#: An Arrow string column as the field ends (offsets) into its data buffer, padded as
#: ``LineBlock.padded_codes`` is, so that ``gather`` never copies the buffer.
_ARROW_BUFFERS = """
import numpy as np
from perfpredict.ingest._text.blocks import MAX_FIELD_BYTES, gather

def arrow_buffers(array):
    _, offsets, data = array.buffers()
    ends = np.frombuffer(offsets, np.int32)[array.offset:array.offset + len(array) + 1]
    codes = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return ends.astype(np.int64), np.concatenate([codes, np.zeros(MAX_FIELD_BYTES + 1, np.uint8)])
"""

#: The same ingest with pyarrow's CSV reader splitting each block in place of
#: ``split_fields``, its string columns gathered into the column readers' byte matrices
#: (the adapter a replacement needs). A what-if for a clean dump only: it does not set
#: aside the lines pyarrow rejects, as the replacement would have to (issue 15).
_PYARROW_SPLIT = _ARROW_BUFFERS + """
import pyarrow as pa
from pyarrow import csv
from perfpredict.ingest._text.blocks import ByteColumn
from perfpredict.ingest.sacct import columns as sacct_columns


class ArrowTable:
    '''``lines``: block line indices; ``starts``: the rows of the Arrow batch.'''

    def __init__(self, block, lines, starts, ends, arrays=None):
        # read_block rebuilds the table for a block's later lines: same block, same arrays
        self.block, self.lines, self.starts, self.ends = block, lines, starts, ends
        self.arrays = arrays if arrays is not None else ArrowTable.last.arrays

    def column(self, j, rows):
        if j is None:
            return ByteColumn(np.zeros((len(rows), 1), np.uint8), np.zeros(len(rows), np.int64))
        ends, codes = self.arrays[j]
        rows = self.starts[rows]
        return gather(codes, ends[rows], ends[rows + 1] - ends[rows])


def arrow_split(block, delimiter, n_columns, trailing):
    table = csv.read_csv(pa.py_buffer(block.data),
                         read_options=csv.ReadOptions(use_threads=False,
                                                      autogenerate_column_names=True,
                                                      block_size=len(block.data) + 1),
                         parse_options=csv.ParseOptions(delimiter=delimiter.decode(),
                                                        quote_char=False),
                         convert_options=csv.ConvertOptions(column_types={
                             f"f{j}": pa.string() for j in range(n_columns)}))
    arrays = [arrow_buffers(table.column(j).combine_chunks()) for j in range(n_columns)]
    rows = np.arange(table.num_rows)
    ArrowTable.last = ArrowTable(block, rows, rows, rows, arrays)
    return ArrowTable.last


sacct_columns.split_fields = arrow_split
sacct_columns.FieldTable = ArrowTable
""" + _INGEST

#: Each reader splits the file (argv[1]) into per-column fields and prints the line count.
_READERS = {
    "handwritten": """
import sys
from pathlib import Path
import numpy as np
from perfpredict.ingest._text.blocks import line_blocks, split_fields

n_lines = 0
n_columns = None
for block in line_blocks(Path(sys.argv[1])):
    if n_columns is None:
        n_columns = block.text(0).count("|") + 1
    table = split_fields(block, b"|", n_columns, False)
    if sys.argv[2] != "split only":
        rows = np.arange(len(table.lines))
        columns = [table.column(j, rows) for j in range(n_columns)]
    n_lines += len(table.lines)
print(n_lines)
""",
    "pandas": """
import csv, sys
import pandas as pd

n_lines = 0
for chunk in pd.read_csv(sys.argv[1], sep="|", dtype=str, engine="c", keep_default_na=False,
                         quoting=csv.QUOTE_NONE, chunksize=50_000):
    columns = [chunk[name].to_numpy() for name in chunk.columns]
    n_lines += len(chunk)
print(n_lines + 1)
""",
    "pyarrow": """
import sys
import pyarrow as pa
from pyarrow import csv

with open(sys.argv[1], "rb") as fh:
    names = fh.readline().decode().rstrip().split("|")
threads = sys.argv[2] == "threads"
reader = csv.open_csv(sys.argv[1], read_options=csv.ReadOptions(block_size=4 << 20,
                                                                use_threads=threads),
                      parse_options=csv.ParseOptions(delimiter="|", quote_char=False),
                      convert_options=csv.ConvertOptions(
                          column_types={name: pa.string() for name in names}))
n_lines = 0
for batch in reader:
    columns = batch.columns
    if sys.argv[2] == "adapter":
        columns = [arrow_column(array) for array in columns]
    n_lines += batch.num_rows
print(n_lines + 1)
""",
}
#: What replacing the tokenizer by pyarrow needs on top of reading: each Arrow string
#: column turned into the zero-padded byte matrix the column readers take.
_ARROW_ADAPTER = _ARROW_BUFFERS + """
def arrow_column(array):
    ends, codes = arrow_buffers(array)
    return gather(codes, ends[:-1], np.diff(ends))
"""


def _run(argv: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes and stdout of one child, its peak measured by GNU
    time, a process of a few MiB between this script and the child (see the module doc:
    ``os.wait4`` here gave no child less than this script's own peak)."""
    gnu_time = shutil.which("time", path="/usr/bin:/bin") or shutil.which("time")
    if gnu_time is None:
        raise SystemExit("GNU time measures each child's peak memory: apt-get install time")
    with tempfile.NamedTemporaryFile(prefix="peak-", suffix=".kib") as peak:
        start = time.perf_counter()
        done = subprocess.run([gnu_time, "-f", "%M", "-o", peak.name, *argv],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(f"{argv[:3]} failed: {done.stderr.strip()}")
        return elapsed, int(Path(peak.name).read_text().split()[-1]) * 1024, done.stdout


def _sqlite_import(fmt: str, path: Path, db: Path) -> list[str]:
    sqlite3 = shutil.which("sqlite3")
    if sqlite3 is None:
        raise SystemExit("the sqlite3 shell is needed as the reference: apt-get install sqlite3")
    mode = {"sacct": [".separator |"], "csv": [],
            "swf": [".separator \x1f"]}[fmt]  # SWF: a unit separator, so a line is one column
    import_ = f".import --csv {path} t" if fmt == "csv" else f".import {path} t"
    return [sqlite3, str(db), *mode, import_]


#: psql's ``\\copy`` options per format, as sqlite3 reads each in :func:`_sqlite_import`:
#: the header names the fields (one text column per line for SWF, as a unit separator
#: splits none).
_COPY_OPTIONS = {"sacct": "FORMAT csv, DELIMITER '|', HEADER", "csv": "FORMAT csv, HEADER",
                 "swf": "FORMAT text, DELIMITER E'\\x1f'"}


def _psql_copy(fmt: str, path: Path, url: str) -> list[str]:
    """psql creating one text column per field of ``path`` in the database at ``url`` and
    loading the file with ``\\copy`` (COPY FROM STDIN, the file read by psql)."""
    psql = shutil.which("psql")
    if psql is None:
        raise SystemExit("psql is needed as the reference: apt-get install postgresql-client")
    with path.open(encoding="utf-8", newline="") as text:
        header = next(csv_module.reader(text, delimiter="|" if fmt == "sacct" else ","))
    n_columns = 1 if fmt == "swf" else len(header)
    columns = ", ".join(f"c{i} text" for i in range(n_columns))
    quoted = str(path).replace("'", "''")
    return [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", _libpq_url(url),
            "-c", f"CREATE TABLE t ({columns})",
            "-c", f"\\copy t FROM '{quoted}' WITH ({_COPY_OPTIONS[fmt]})"]


def _libpq_url(url: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://...``) as libpq (psql) takes it."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.partition('+')[0]}://{rest}"


@contextmanager
def _server_database(server: str) -> Iterator[str]:
    """The URL of a fresh database on the PostgreSQL server at ``server`` (the URL of any
    database there), dropped afterwards."""
    from sqlalchemy import create_engine, text

    name = f"pp_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield f"{server.rsplit('/', 1)[0]}/{name}"
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def measure(fmt: str, path: Path, system: str, workdir: Path, child: str = _INGEST,
            label: str = "", server: str | None = None) -> dict[str, object]:
    """One file: the reference and perfpredict (the ingest script ``child``), each in a
    fresh database: SQLite files in ``workdir``, or databases on the PostgreSQL server
    at ``server``."""
    raw = path
    if path.suffix == ".gz":  # the reference reads plain text; expanding it is not timed
        raw = workdir / path.stem
        with gzip.open(path, "rb") as src, raw.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    with ExitStack() as databases:
        if server is None:
            ref_db, store_db = workdir / f"ref-{raw.name}.db", workdir / f"store-{raw.name}.db"
            store = f"sqlite:///{store_db}"
            if fmt != "sacct-json":
                reference = _sqlite_import(fmt, raw, ref_db)

            def remove_files() -> None:  # the next round starts from empty ones
                for db in workdir.glob(f"*-{raw.name}.db*"):
                    db.unlink()

            databases.callback(remove_files)
        else:
            if fmt != "sacct-json":
                reference = _psql_copy(fmt, raw,
                                       databases.enter_context(_server_database(server)))
            store = databases.enter_context(_server_database(server))
        if fmt == "sacct-json":  # no table to bulk-load a document into: Python's reader
            reference = [sys.executable, "-c", _JSON_LOAD, str(raw)]
        ref_s, ref_rss, _ = _run(reference)
        ours_s, ours_rss, out = _run([sys.executable, "-c", child, store, fmt, str(path),
                                      system])
    runs, _, parts = out.partition("\n")
    n_lines = sum(1 for _ in raw.open("rb"))
    return {"format": label or fmt, "file": path.name, "lines": n_lines, "runs": int(runs),
            "parts": parts.strip(),
            "reference_s": ref_s, "perfpredict_s": ours_s, "ratio": ours_s / ref_s,
            "lines_per_s": n_lines / ours_s, "peak_mib": ours_rss / 2**20,
            "reference_peak_mib": ref_rss / 2**20, "peak_ratio": ours_rss / ref_rss}


def measure_readers(path: Path, workdir: Path, repeat: int) -> list[dict[str, object]]:
    """Each reader's time to split the sacct dump ``path`` into fields, against sqlite3's
    ``.import`` run right before it, ``repeat`` times in turn (so load drifts hit all)."""
    rows = []
    for attempt in range(repeat):
        for name, code, mode in [*[(name, code, "") for name, code in _READERS.items()],
                                 ("handwritten", _READERS["handwritten"], "split only"),
                                 ("pyarrow", _READERS["pyarrow"], "threads"),
                                 ("pyarrow", _ARROW_ADAPTER + _READERS["pyarrow"], "adapter")]:
            ref_db = workdir / f"ref-{name}-{attempt}.db"
            ref_s, _, _ = _run(_sqlite_import("sacct", path, ref_db))
            ref_db.unlink()
            ours_s, rss, out = _run([sys.executable, "-c", code, str(path), mode])
            name = f"{name} ({mode})" if mode else name
            rows.append({"reader": name, "lines": int(out), "sqlite3_import_s": ref_s,
                         "reader_s": ours_s, "ratio": ours_s / ref_s, "peak_mib": rss / 2**20})
    return rows


def write_csv(path: Path, n_rows: int) -> None:
    """Benchmark rows as ``ingest csv`` reads them (no job ids: keyed by content)."""
    with path.open("w", encoding="utf-8") as out:
        out.write("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,"
                  "io_bytes,note\n")
        for i in range(n_rows):
            nodes = 2 ** (i % 9)
            out.write(f"app{i % 997},sys{i % 7},size{i // 9 % 50},{nodes},{8 * (1 + i % 4)},"
                      f"{1 + i % 2},{1000.0 / nodes + i % 13 * 0.37:.3f},{i * 4096},r{i}\n")


def write_sacct_json(path: Path, n_bytes: int, log: Path = SACCT_JSON_LOG) -> None:
    """A ``sacct --json`` document of about ``n_bytes``, indented as sacct writes it: the
    jobs of the real ``log`` over and over, each with a job id of its own so that every
    finished one is a run of its own."""
    document = json.loads(log.read_bytes())
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n  "meta": ' + json.dumps(document.get("meta", {}), indent=2)
                  + ',\n  "jobs": [\n')
        n_written = n_jobs = 0
        while n_written < n_bytes:
            for job in document["jobs"]:
                text = ",\n" * bool(n_jobs) + json.dumps(dict(job, job_id=1000 + n_jobs),
                                                         indent=2)
                out.write(text)
                n_written += len(text)
                n_jobs += 1
        out.write('\n  ],\n  "warnings": [],\n  "errors": []\n}\n')


def measure_grown(workdir: Path, n_rows: int, repeat: int) -> list[dict[str, object]]:
    """A results CSV of ``n_rows`` ingested when it held half of them, then again once the
    rest were appended (the nightly ingest of a file a benchmark script appends to),
    against an ingest of the appended rows alone, as a file of their own, into a copy of
    the same store, run right before it; and the scan that finds the file's earlier
    version in it (:func:`~perfpredict.ingest._text.lines.line_prefix_sha256s`), timed
    alone in this process. ``repeat`` rounds."""
    from perfpredict.ingest._text.lines import file_sha256, line_prefix_sha256s

    full = workdir / "full.csv"
    write_csv(full, n_rows)
    lines = full.read_bytes().splitlines(keepends=True)
    cut = 1 + n_rows // 2
    results, added = workdir / "results.csv", workdir / "added.csv"
    added.write_bytes(lines[0] + b"".join(lines[cut:]))
    rows = []
    for _ in range(repeat):
        grown_db, added_db = workdir / "grown.db", workdir / "added.db"
        for db in (grown_db, added_db):
            db.unlink(missing_ok=True)
        results.write_bytes(b"".join(lines[:cut]))
        earlier = file_sha256(results)
        _run([sys.executable, "-c", _INGEST, f"sqlite:///{grown_db}", "csv", str(results),
              "bench"])
        shutil.copyfile(grown_db, added_db)
        ref_s, ref_rss, _ = _run([sys.executable, "-c", _INGEST, f"sqlite:///{added_db}",
                                  "csv", str(added), "bench"])
        shutil.copyfile(full, results)
        ours_s, rss, out = _run([sys.executable, "-c", _INGEST, f"sqlite:///{grown_db}",
                                 "csv", str(results), "bench"])
        start = time.perf_counter()
        assert line_prefix_sha256s(results, {earlier}) == {earlier}
        scan_s = time.perf_counter() - start
        rows.append({"lines": len(lines), "added_alone_s": ref_s, "grown_s": ours_s,
                     "ratio": ours_s / ref_s, "scan_s": scan_s, "peak_mib": rss / 2**20,
                     "peak_ratio": rss / ref_rss})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sacct", type=Path)
    parser.add_argument("--swf", type=Path, default=KTH_SWF)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--csv-rows", type=int, default=500_000)
    parser.add_argument("--swf-jobs", type=int, default=1_000_000,
                        help="jobs of the generated SWF log (0: measure only --swf)")
    parser.add_argument("--sacct-json", type=Path)
    parser.add_argument("--sacct-json-mb", type=int, default=500,
                        help="size of the generated sacct --json document")
    parser.add_argument("--formats", default="sacct,swf,csv",
                        help="comma-separated subset of sacct,swf,csv,sacct-json to measure")
    parser.add_argument("--pg", metavar="URL",
                        help="ingest into PostgreSQL against psql's \\copy: fresh databases on "
                             "the server of URL (postgresql+psycopg://USER@HOST:PORT/DB)")
    parser.add_argument("--readers", action="store_true",
                        help="compare the readers that split the sacct dump into fields")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds of --readers and --pyarrow-split")
    parser.add_argument("--split-share", action="store_true",
                        help="time the tokenizer's parts inside each ingest (adds a column)")
    parser.add_argument("--pyarrow-split", action="store_true",
                        help="sacct: --repeat rounds of the ingest as it is and with pyarrow "
                             "splitting, interleaved")
    parser.add_argument("--grown", action="store_true",
                        help="csv: a file of --csv-rows ingested at half, then grown; "
                             "--repeat rounds")
    args = parser.parse_args()
    formats = set(args.formats.split(","))
    child = _SPLIT_SHARE if args.split_share else _INGEST
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.readers:
            sacct = args.sacct or work / "sacct.txt"
            if args.sacct is None:
                write_dump(sacct)
            print("| reader | lines | sqlite3 .import s | reader s | ratio | peak MiB |\n"
                  "|---|---:|---:|---:|---:|---:|")
            for r in measure_readers(sacct, work, args.repeat):
                print(f"| {r['reader']} | {r['lines']} | {r['sqlite3_import_s']:.2f} | "
                      f"{r['reader_s']:.2f} | {r['ratio']:.2f} | {r['peak_mib']:.0f} |")
            return
        if args.grown:
            print("| lines | appended rows alone s | grown file s | ratio | prefix scan s | "
                  "peak MiB | peak ratio |\n|---:|---:|---:|---:|---:|---:|---:|")
            for r in measure_grown(work, args.csv_rows, args.repeat):
                print(f"| {r['lines']} | {r['added_alone_s']:.2f} | {r['grown_s']:.2f} | "
                      f"{r['ratio']:.2f} | {r['scan_s']:.2f} | {r['peak_mib']:.0f} | "
                      f"{r['peak_ratio']:.2f} |")
            return
        if "sacct" in formats:
            sacct = args.sacct or work / "sacct.txt"
            if args.sacct is None:
                write_dump(sacct)
            variants = [("sacct", child)] + ([("sacct, pyarrow split", _PYARROW_SPLIT)]
                                             if args.pyarrow_split else [])
            for attempt in range(args.repeat if args.pyarrow_split else 1):
                for label, code in variants[::-1] if attempt % 2 else variants:
                    rows.append(measure("sacct", sacct, "frontier", work, code, label, args.pg))
        if "swf" in formats:
            rows.append(measure("swf", args.swf, "kth-sp2", work, child, server=args.pg))
            if args.swf_jobs:
                generated = work / "generated.swf"
                write_log(generated, args.swf_jobs)
                rows.append(measure("swf", generated, "generated", work, child,
                                        server=args.pg))
        if "csv" in formats:
            csv = args.csv or work / "runs.csv"
            if args.csv is None:
                write_csv(csv, args.csv_rows)
            rows.append(measure("csv", csv, "bench", work, server=args.pg))
        if "sacct-json" in formats:
            sacct_json = args.sacct_json or work / "sacct.json"
            if args.sacct_json is None:
                write_sacct_json(sacct_json, args.sacct_json_mb * 10**6)
            rows.append(measure("sacct-json", sacct_json, "mila", work, child,
                                "sacct-json (reference: json.load)", args.pg))
    reference = "psql \\copy" if args.pg else "sqlite3 .import"
    print(f"| format | file | lines | runs stored | {reference} s | perfpredict s | ratio |"
          " lines/s | peak MiB | reference peak MiB | peak ratio |"
          + (" inside the ingest |" if args.split_share else "")
          + "\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          + ("---|" if args.split_share else ""))
    for r in rows:
        print(f"| {r['format']} | {r['file']} | {r['lines']} | {r['runs']} | "
              f"{r['reference_s']:.2f} | {r['perfpredict_s']:.2f} | {r['ratio']:.2f} | "
              f"{r['lines_per_s']:,.0f} | {r['peak_mib']:.0f} | {r['reference_peak_mib']:.0f} | "
              f"{r['peak_ratio']:.1f} |"
              + (f" {r['parts']} |" if args.split_share else ""))


if __name__ == "__main__":
    main()

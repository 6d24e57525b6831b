"""Darshan I/O logs (``.darshan``): the I/O volume of a job, attached to its scheduler run.

Read through the ``darshan`` package (``pip install 'perfpredict[darshan]'``), which
bundles libdarshan-util and so handles every log format, endianness and compression
(FORMATS.md §9). A log is binary: the whole file is one record.

What is taken: ``nprocs`` -> total ranks, ``run_time`` -> runtime, ``jobid`` -> job id,
and I/O bytes by the §9.3 rules: POSIX + STDIO bytes read and written ("bytes that hit
the file system"); MPI-IO is a layered view of the same bytes and is never added on
top. When POSIX is *partial* (its record limit was hit) it undercounts, so each direction
takes the larger of POSIX + STDIO and MPI-IO, a lower bound, flagged in ``extra``. A log
without POSIX and STDIO modules says nothing about file-system traffic: I/O is None
(not instrumented), not 0.

Records are "attach" records: the pipeline adds the log's I/O bytes and details to the
stored scheduler job of the same system and job id that it ran inside, or stores the log
as a run of its own (application = basename of the executable) until that job's
accounting comes and takes it over (:mod:`perfpredict.store.io_first`).

libdarshan-util aborts the process on some damaged logs (a failed assertion or double
free while closing), which no ``try`` can catch. Each log is therefore read in a child
Python process; a crash there is one bad record naming the log, not a dead ingest.
It also reads only the regions asked for: a log cut short in a module perfpredict does
not read (DXT traces, APMPI) opens without complaint, so its header's region lengths are
held against the file's size (:func:`_check_complete`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perfpredict._imports import require
from perfpredict.ingest import fields
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import (
    DARSHAN_DETAILS,
    BadRecord,
    IngestOptions,
    ParsedItem,
    RunRecord,
    darshan_log_key,
)

DESCRIPTION = "Darshan .darshan I/O logs (needs the darshan extra), attached to their job"
#: A log's job record has no machine name, and the job it attaches to is found by system
#: and job id: ``--system`` is asked for before the file is read
#: (:func:`~perfpredict.ingest.registry.names_system`).
NAMES_SYSTEM = False
#: The log's file name keys a log without a start time and is kept with its run: a pipe's
#: copy has a temporary name, so the log file itself is asked for
#: (:func:`~perfpredict.ingest.registry.reads_stream`).
READS_STREAM = False

#: A log that takes longer than this to read is treated as damaged.
READ_TIMEOUT_S = 120.0
#: Modules whose byte counters are read, with their counter prefix.
_LAYERS = {"POSIX": "POSIX", "STDIO": "STDIO", "MPI-IO": "MPIIO"}
_RESULT_MARKER = "perfpredict-darshan-summary:"


class _DamagedLog(Exception):
    """A log the library opens that is not whole; its message is the reason given."""


def _check_complete(path: str, modules: dict[str, dict[str, Any]]) -> None:
    """Refuse a log shorter than its header's module regions (compressed bytes on disk):
    a partial copy whose cut region is one perfpredict does not read would otherwise be
    stored, and a whole copy of it later counted as a second log of the job."""
    region_bytes = sum(int(info.get("len") or 0) for info in modules.values())
    file_bytes = os.path.getsize(path)
    if region_bytes > file_bytes:
        raise _DamagedLog(f"the log is truncated: its header lists {region_bytes} bytes of "
                          f"module data, the file has {file_bytes} bytes in all")


def _summary(path: str) -> dict[str, Any]:
    """What perfpredict needs from one log, as JSON-ready data (runs in the child)."""
    import darshan

    with darshan.DarshanReport(path, read_all=False) as report:
        _check_complete(path, report.modules)
        layers: dict[str, dict[str, Any]] = {}
        for module, prefix in _LAYERS.items():
            if module not in report.modules:
                continue
            report.mod_read_all_records(module, dtype="numpy")
            names = list(report.counters[module]["counters"])
            read_at = names.index(f"{prefix}_BYTES_READ")
            written_at = names.index(f"{prefix}_BYTES_WRITTEN")
            read = written = 0
            # Shared-file records (rank -1) are already reduced: sum every record once.
            for record in report.records[module]:
                counters = record["counters"]
                read += max(int(counters[read_at]), 0)
                written += max(int(counters[written_at]), 0)
            layers[module] = {"read": read, "written": written,
                              "partial": bool(report.modules[module].get("partial_flag"))}
        return {
            "job": report.metadata["job"],
            "exe": report.metadata.get("exe") or "",
            "modules": sorted(report.modules),
            "partial_modules": sorted(m for m, info in report.modules.items()
                                      if info.get("partial_flag")),
            "layers": layers,
        }


def _read_isolated(path: Path) -> dict[str, Any] | str:
    """The log's summary, or the reason it could not be read."""
    try:
        child = subprocess.run(
            [sys.executable, "-m", __name__, str(path)], capture_output=True, text=True,
            errors="replace", timeout=READ_TIMEOUT_S, check=False,
        )
    except subprocess.TimeoutExpired:
        return f"darshan did not finish reading the log within {READ_TIMEOUT_S:g} s"
    errors = [line.strip() for line in child.stderr.splitlines() if line.strip()]
    # libdarshan-util's own lines, without its "Error: " and full stop, as the reason is
    # one clause of perfpredict's error line
    library_errors = [line.removeprefix("Error:").strip().rstrip(".")
                      for line in errors if line.startswith("Error:")]
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        detail = f" ({library_errors[0]})" if library_errors else ""
        return f"darshan crashed reading the log ({name}){detail}"
    if child.returncode != 0:
        first = (library_errors or errors)[:1]
        return first[0] if first else f"darshan failed with exit code {child.returncode}"
    if library_errors:
        # libdarshan-util reports damaged regions on stderr and carries on with partial data.
        return f"darshan reported {library_errors[0]!r}"
    for line in child.stdout.splitlines():
        if line.startswith(_RESULT_MARKER):
            summary: dict[str, Any] = json.loads(line[len(_RESULT_MARKER):])
            return summary
    return "darshan returned no summary"


def _io_bytes(layers: dict[str, dict[str, Any]]) -> tuple[float | None, str | None]:
    """Bytes that hit the file system, and how they were derived (FORMATS.md §9.3).

    A partial POSIX module misses the files past its record limit, so each direction is
    at least the larger of POSIX + STDIO and MPI-IO (whose bytes went through POSIX too):
    taken whole, MPI-IO's total dropped the reads POSIX saw outside MPI-IO
    (imbalanced-io: POSIX read 53.8 GB, MPI-IO 52.9 GB, while MPI-IO wrote 79.5 GB)."""
    fs_layers = [layers[m] for m in ("POSIX", "STDIO") if m in layers]
    if not fs_layers:
        return None, None
    read = sum(layer["read"] for layer in fs_layers)
    written = sum(layer["written"] for layer in fs_layers)
    posix, mpiio = layers.get("POSIX"), layers.get("MPI-IO")
    if (posix is not None and posix["partial"] and mpiio is not None
            and (mpiio["read"] > read or mpiio["written"] > written)):
        return (float(max(read, mpiio["read"]) + max(written, mpiio["written"])),
                "the larger of POSIX + STDIO and MPI-IO each way (POSIX partial: it "
                "undercounts; the volume is at least this)")
    return float(read + written), "POSIX + STDIO"


def _record(path: Path, summary: dict[str, Any], options: IngestOptions) -> RunRecord:
    job = summary["job"]
    nprocs = fields.count("nprocs", job.get("nprocs"), zero_is_none=True)
    if nprocs is None:
        raise FieldError("the log's job header says 0 processes; the log is damaged")
    job_id = fields.count("jobid", job.get("jobid"))
    if job_id is None:
        raise FieldError("the log has no job id")
    run_time = job.get("run_time")
    start = fields.epoch_s("start_time", job.get("start_time_sec"))
    end = fields.epoch_s("end_time", job.get("end_time_sec"))
    if start is not None:
        start += (job.get("start_time_nsec") or 0) * 1e-9
    if end is not None:
        end += (job.get("end_time_nsec") or 0) * 1e-9
    layers = summary["layers"]
    io_bytes, io_source = _io_bytes(layers)
    exe = str(summary["exe"]).strip()
    argv0 = exe.split()[0] if exe else ""
    details: dict[str, Any] = {
        "log": path.name,
        "log_version": job.get("log_ver"),
        "exe": exe[:500],
        "uid": job.get("uid"),
        "nprocs": nprocs,
        # when it ran, so that a job's logs that ran side by side add their ranks up
        "start_epoch_s": start,
        "end_epoch_s": end,
        "modules": summary["modules"],
        "partial_modules": summary["partial_modules"],
        "io_bytes_source": io_source,
        "posix_partial": bool(layers.get("POSIX", {}).get("partial")),
    }
    for module, layer in layers.items():
        prefix = _LAYERS[module].lower()
        details[f"{prefix}_bytes_read"] = layer["read"]
        details[f"{prefix}_bytes_written"] = layer["written"]
    return RunRecord(
        app=fields.app_name(os.path.basename(argv0), None, options),
        total_ranks=nprocs,
        io_bytes=io_bytes,
        runtime_s=(None if run_time is None
                   else fields.check_duration_s("run_time", float(run_time))),
        job_id=str(job_id),
        start_epoch_s=start,
        end_epoch_s=end,
        extra={DARSHAN_DETAILS: details},
        key=darshan_log_key(str(job_id), start, path.name),
        mode="attach",
    )


def _unreadable(path: Path, reason: str) -> str:
    """Why the log at ``path`` is refused, and what to do: a log of a format the library
    does not read says so by the version its header starts with, as re-copying it would
    not help."""
    try:
        with path.open("rb") as log_file:
            version = log_file.read(8).rstrip(b"\0").decode("ascii")
    except (OSError, UnicodeDecodeError):
        version = ""
    major = version.partition(".")[0]
    if "incompatible darshan file" in reason and major.isdigit():
        import darshan

        fix = ("a log of Darshan 2 is read by Darshan 2's own darshan-parser"
               if int(major) < 3 else "a newer darshan may read it: pip install -U darshan")
        return (f"not a readable Darshan log: its header says log format {version}, which "
                f"the installed darshan package ({darshan.__version__}) does not read; {fix}")
    return (f"not a readable Darshan log: {reason}; re-copy it, or check it with "
            "'python -m darshan info'")


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """One attach record for the log at ``path``, or one bad record saying why not."""
    require("darshan", "darshan")
    options.check_app_from()
    summary = _read_isolated(path)
    if isinstance(summary, str):
        yield BadRecord(None, path.name, _unreadable(path, summary), whole_file=True)
        return
    try:
        yield _record(path, summary, options)
    except (FieldError, KeyError, TypeError, ValueError) as exc:
        yield BadRecord(None, path.name, f"the Darshan log's job data is unusable: {exc}",
                        whole_file=True)


if __name__ == "__main__":  # the isolated reader behind _read_isolated
    try:
        result = _summary(sys.argv[1])
    except _DamagedLog as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the parent
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
    print(_RESULT_MARKER + json.dumps(result, default=str))

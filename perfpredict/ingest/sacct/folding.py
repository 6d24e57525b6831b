"""Folding sacct step rows into their jobs, block after block.

A step belongs to the latest allocation row with its job id among the
:data:`MAX_OPEN_JOBS` job rows before it. sacct prints steps right after their job, so
one would do; the margin tolerates lightly shuffled dumps, and a step whose job is
further back (or absent) is a bad record: the dump was cut or reordered. The last
:data:`MAX_OPEN_JOBS` jobs of a block stay open for the next block's steps (a job's steps
may straddle the boundary); the others are finished and leave as runs. Steps add MaxRSS
(the max over steps), I/O bytes (``fs/disk`` read + written, summed; None when no step
reports it) and ranks: tasks of the step with the most tasks, per node of that step (or of
the job when the step does not say). A job with a step line that cannot be read is not a
run: stored without that step, its ranks, memory or I/O could be wrong while it looked
whole, so under ``--on-error skip`` the step line is rejected naming its job, and the job
is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfpredict.ingest.field_columns import nullable_floats, nullable_ints
from perfpredict.ingest.records import RunBatch
from perfpredict.ingest.sacct.columns import JOB_FIELDS, Columns, is_set

MAX_OPEN_JOBS = 256
#: What the steps add to a job, NaN until a step says.
_STEP_TOTALS = ("max_rss_bytes", "io_bytes", "top_tasks", "top_nodes")
# Job sequence numbers stay below this, so that (job id code, sequence) packs in an int64.
_SEQUENCE_LIMIT = 1 << 40


@dataclass
class FoldedBlock:
    """The runs a block finished, and its steps that are bad records: indices into the
    block's step table, with the reason (None: no job row shortly before it)."""

    runs: RunBatch | None
    bad_steps: list[tuple[int, str | None]]


class StepFolder:
    """The open jobs between blocks, and the folding of each block's steps into them."""

    def __init__(self) -> None:
        self.open: Columns | None = None
        self.n_jobs = 0  # job rows seen so far: the next one's sequence number

    def add(self, jobs: Columns, steps: Columns) -> FoldedBlock:
        """Fold a block's job and step rows (in line order) into the open jobs."""
        n_new = len(jobs["line_no"])
        jobs = dict(jobs, sequence=self.n_jobs + np.arange(n_new, dtype=np.int64))
        for name in _STEP_TOTALS:
            jobs[name] = np.full(n_new, np.nan)
        jobs["left_out"] = np.zeros(n_new, dtype=bool)
        if self.open is not None:
            jobs = {name: np.concatenate([self.open[name], jobs[name]]) for name in jobs}
        steps_before = self.n_jobs + steps["jobs_before"]
        self.n_jobs += n_new
        owner = _owners(jobs, steps, steps_before)
        bad = [(int(i), steps["reason"][i]) for i in np.flatnonzero(owner < 0)]
        of_run = np.flatnonzero(owner >= 0)
        of_run = of_run[jobs["is_run"][owner[of_run]].astype(bool)]
        failed = is_set(steps["reason"][of_run])
        jobs["left_out"][owner[of_run[failed]]] = True
        bad += [(int(i), _left_out_reason(steps["reason"][i], steps["raw_id"][i], jobs, owner[i]))
                for i in of_run[failed]]
        _add_steps(jobs, steps, of_run[~failed], owner[of_run[~failed]])
        open_from = self.n_jobs - MAX_OPEN_JOBS
        closing = jobs["sequence"] < open_from
        self.open = {name: values[~closing] for name, values in jobs.items()}
        return FoldedBlock(_runs(jobs, closing), sorted(bad))

    def finish(self) -> RunBatch | None:
        """The jobs still open at the end of the file."""
        if self.open is None:
            return None
        jobs, self.open = self.open, None
        return _runs(jobs, np.ones(len(jobs["line_no"]), dtype=bool))


def _owners(jobs: Columns, steps: Columns, steps_before: np.ndarray) -> np.ndarray:
    """Index of each step's job row, -1 where it has none in the window."""
    n_jobs = len(jobs["line_no"])
    if not n_jobs:
        return np.full(len(steps_before), -1, dtype=np.int64)
    codes = pd.factorize(np.concatenate([jobs["base"], steps["base"]]))[0].astype(np.int64)
    job_codes, step_codes = codes[:n_jobs], codes[n_jobs:]
    job_keys = job_codes * _SEQUENCE_LIMIT + jobs["sequence"]
    order = np.argsort(job_keys, kind="stable")
    found = np.searchsorted(job_keys[order], step_codes * _SEQUENCE_LIMIT + steps_before) - 1
    owner = order[np.maximum(found, 0)]
    ok = ((found >= 0) & (job_codes[owner] == step_codes)
          & (jobs["sequence"][owner] >= steps_before - MAX_OPEN_JOBS))
    return np.where(ok, owner, -1)


def _add_steps(jobs: Columns, steps: Columns, rows: np.ndarray, owner: np.ndarray) -> None:
    """Add the steps ``rows`` (in line order) to their jobs ``owner``, in place."""
    np.fmax.at(jobs["max_rss_bytes"], owner, steps["max_rss_bytes"][rows])
    # read then written, step after step: the order the bytes are summed in
    disk = np.column_stack([steps["disk_in_bytes"][rows], steps["disk_out_bytes"][rows]]).ravel()
    disk_owner = np.repeat(owner, 2)
    said = ~np.isnan(disk)
    io = jobs["io_bytes"]
    known = ~np.isnan(io)
    known[disk_owner[said]] = True
    total = np.nan_to_num(io)
    np.add.at(total, disk_owner[said], disk[said])
    jobs["io_bytes"] = np.where(known, total, np.nan)
    counted = ~np.isnan(steps["tasks"][rows])
    rows, owner = rows[counted], owner[counted]
    tasks = steps["tasks"][rows]
    order = np.lexsort((rows, -tasks, owner))  # per job: most tasks, first such step
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]] if len(order) else order
    job, best = owner[first], tasks[first]
    larger = np.isnan(jobs["top_tasks"][job]) | (best > jobs["top_tasks"][job])
    jobs["top_tasks"][job[larger]] = best[larger]
    jobs["top_nodes"][job[larger]] = steps["nodes"][rows[first]][larger]


def _left_out_reason(reason: str, step_id: str, jobs: Columns, job: int) -> str:
    """Why a step line is bad, and that its job is not stored: what the step would have
    added (ranks, MaxRSS, I/O bytes) is unknown, and a job stored without it would look
    whole while its ranks or I/O are wrong."""
    return (f"{reason} (step {step_id}; its job {jobs['base'][job]}, line "
            f"{jobs['line_no'][job]}, is left out with it: a job is stored with all its "
            "steps or not at all)")


def _runs(jobs: Columns, closing: np.ndarray) -> RunBatch | None:
    """The closing jobs that are runs, with what their steps add; a job with a step
    line that could not be read is left out (:func:`_left_out_reason`)."""
    chosen = closing & jobs["is_run"].astype(bool) & ~jobs["left_out"]
    if not chosen.any():
        return None
    columns = {name: jobs[name][chosen].tolist() for name in JOB_FIELDS}
    columns["line_no"] = jobs["line_no"][chosen].tolist()
    tasks = jobs["top_tasks"][chosen]
    job_nodes = np.array([np.nan if n is None else n for n in columns["nodes"]], dtype=float)
    step_nodes = jobs["top_nodes"][chosen]
    nodes = np.where(step_nodes > 0, step_nodes, job_nodes)
    per_node = np.where(nodes > 0, tasks / np.where(nodes > 0, nodes, 1.0), np.nan)
    columns["total_ranks"] = nullable_ints(tasks)
    columns["ranks_per_node"] = nullable_floats(per_node)
    columns["max_rss_bytes"] = nullable_floats(jobs["max_rss_bytes"][chosen])
    columns["io_bytes"] = nullable_floats(jobs["io_bytes"][chosen])
    return RunBatch(columns)

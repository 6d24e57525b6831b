"""A block of ``sacct -P`` lines read column by column.

The rules are those of :mod:`.rows`: fields with few distinct values (state, exit
code, partition, TRES, job name...) go through the scalar rule once per distinct value,
ids, times, elapsed seconds and step usage through the column readers of
:mod:`.field_columns`. A row any of them cannot read, and every line that does not split
cleanly, is read whole by :func:`.sacct_rows.read_line`; so the result is the same as
reading every line alone, only faster.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from perfpredict.ingest._text.blocks import ByteColumn, FieldTable, LineBlock, split_fields
from perfpredict.ingest.field_columns import (
    DistinctMap,
    Factorized,
    RuleMemo,
    all_digits,
    key_values,
    local_epochs_s,
    map_distinct,
    sizes_bytes,
    whole_numbers,
)
from perfpredict.ingest.fields import SLURM_UNFINISHED_STATES
from perfpredict.ingest.records import BadRecord, IngestOptions, RunRecord, job_key
from perfpredict.ingest.sacct import rows as sacct_rows
from perfpredict.ingest.sacct.rows import JobLine, Layout, PendingTasksLine, StepLine

#: The run fields an allocation row gives; its steps add the rest (see .folding).
JOB_FIELDS = ("app", "system", "nodes", "gpus", "runtime_s", "requested_walltime_s", "state",
              "exit_code", "user", "account", "partition", "job_id", "submit_epoch_s",
              "start_epoch_s", "end_epoch_s", "censored", "extra", "key")
STEP_VALUES = ("max_rss_bytes", "disk_in_bytes", "disk_out_bytes", "tasks", "nodes")

Columns = dict[str, np.ndarray]


@dataclass
class BlockRows:
    """What the lines of a block say, each table in line order: ``jobs`` has ``base``,
    ``line_no``, ``is_run`` and :data:`JOB_FIELDS`; ``steps`` has ``base``, ``raw_id``,
    ``line_index`` (in the block), ``line_no``, ``jobs_before`` (job rows of the block
    before it), ``reason`` (why it cannot be read) and :data:`STEP_VALUES` (NaN: None)."""

    jobs: Columns
    steps: Columns
    bad: list[BadRecord] = field(default_factory=list)
    #: Jobs not finished (pending, running...) and pending array remainders: skipped.
    n_unfinished: int = 0


def is_set(values: np.ndarray) -> np.ndarray:
    """Which entries of an object array are not None."""
    return np.array([value is not None for value in values], dtype=bool)


def _nullable(values: np.ndarray) -> np.ndarray:
    """Floats with NaN for None as an object array of floats and None."""
    out = values.astype(object)
    out[np.isnan(values)] = None
    return out


@dataclass
class _Ids:
    """The id columns of a block's rows: which read as ``123`` or ``123.step``, the base
    id, the step name, whether the row is an allocation row, and the JobID and JobIDRaw
    fields (gathered once, for the parts of the block that need them)."""

    fast: np.ndarray
    base: ByteColumn
    step: ByteColumn
    is_job: np.ndarray
    display: ByteColumn
    raw: ByteColumn


class _BlockReader:
    """Reads the cleanly split rows of one block; ``scalar`` collects the rows it cannot."""

    def __init__(self, table: FieldTable, layout: Layout, zone: ZoneInfo,
                 options: IngestOptions, memos: dict[tuple[str, ...], RuleMemo]) -> None:
        self.table, self.layout, self.zone, self.options = table, layout, zone, options
        #: Each rule's results over the file so far, by its column names (in this module
        #: one combination of columns has one rule).
        self.memos = memos
        self.scalar = np.zeros(len(table.lines), dtype=bool)
        #: Row sets (jobs, steps) whose columns are factorized once for every rule.
        self.groups: dict[str, np.ndarray] = {}
        self.factorized: dict[tuple[str, str], Factorized] = {}
        #: Allocation rows read here whose job has not finished.
        self.n_unfinished = 0

    def column(self, name: str, rows: np.ndarray) -> ByteColumn:
        return self.table.column(self.layout.index(name), rows)

    def distinct(self, rule: Callable[[sacct_rows.Row], Any], names: tuple[str, ...],
                 group: str, positions: np.ndarray,
                 ) -> tuple[Callable[[int | None], np.ndarray], np.ndarray]:
        """``rule`` per distinct combination of the named columns on the rows
        ``groups[group][positions]``: a getter of its results (or their element ``part``)
        per row, and which rows it failed on."""
        rows = self.groups[group]
        if not len(positions):
            return DistinctMap([], positions, np.zeros(0, dtype=bool)).column, np.zeros(0, bool)
        present = tuple(name for name in names if name in self.layout.columns)
        for name in present:
            if (name, group) not in self.factorized:
                self.factorized[name, group] = Factorized.of(self.column(name, rows))
        columns = [self.factorized[name, group] for name in present]
        if not columns:  # none of the columns in this file: one value for every row
            columns = [Factorized(np.zeros(len(rows), np.int64), [""])]
        # with no column present, zip drops the one placeholder column
        mapped = map_distinct(lambda *texts: rule(dict(zip(present, texts, strict=False))),
                              columns, positions, self.memos.setdefault(names, {}))
        return mapped.column, mapped.failed

    def ids(self) -> _Ids:
        """The ids of every row, and which read as ``123`` or ``123.step``."""
        rows = np.arange(len(self.table.lines))
        display = self.column("jobid", rows)
        raw = self.column("jobidraw", rows) if "jobidraw" in self.layout.columns else display
        pending, _ = display.find(b"_[")
        dots, dot = raw.find(b".")
        base_end = np.where(dots == 1, dot, raw.lengths)
        base = raw.slice(np.zeros_like(base_end), base_end)
        step = raw.slice(base_end + 1, np.where(dots == 1, raw.lengths, base_end))
        base_ok = all_digits(base)
        matrix = step.matrix
        alnum = (((matrix >= ord("0")) & (matrix <= ord("9")))
                 | ((matrix | 0x20 >= ord("a")) & (matrix | 0x20 <= ord("z"))))
        inside = np.arange(matrix.shape[1]) < step.lengths[:, None]
        step_ok = (dots == 0) | ((step.lengths > 0) & np.all(alnum | ~inside, axis=1))
        fast = (pending == 0) & (dots <= 1) & base_ok & step_ok
        self.scalar |= ~fast
        return _Ids(fast, base, step, dots == 0, display, raw)

    def jobs(self, rows: np.ndarray, base: np.ndarray, display: np.ndarray) -> Columns:
        """Allocation rows: the run fields of those that finished."""
        options = self.options
        self.groups["jobs"] = rows
        keep_unfinished = not options.require_runtime
        state, failed = self.distinct(partial(sacct_rows.state, keep_unfinished=keep_unfinished),
                                      ("state",), "jobs", np.arange(len(rows)))
        is_run = is_set(state(0))
        self.n_unfinished = int(np.count_nonzero(~is_run & ~failed))
        self.scalar[rows[failed]] = True
        run_positions = np.flatnonzero(is_run & ~failed)
        runs = rows[run_positions]
        out: Columns = {name: np.full(len(rows), None, dtype=object) for name in JOB_FIELDS}
        ok = np.ones(len(runs), dtype=bool)

        def mapped(rule: Callable[[sacct_rows.Row], Any], *names: str) -> Callable[..., Any]:
            getter, rule_failed = self.distinct(rule, names, "jobs", run_positions)
            ok[rule_failed] = False
            return getter

        values: dict[str, np.ndarray] = {"state": state(0)[is_run & ~failed]}
        values["exit_code"] = mapped(sacct_rows.exit_code, "exitcode")(0)
        epochs = {}
        for name in ("submit", "start", "end"):
            epochs[name], time_ok = local_epochs_s(self.column(name, runs), self.zone)
            ok &= time_ok
        ok &= ~(epochs["end"] < epochs["start"])
        if sacct_rows.ELAPSED_COLUMNS & set(self.layout.columns):
            values["runtime_s"] = self.runtime_s(runs, run_positions, ok)
        else:
            values["runtime_s"] = _nullable(epochs["end"] - epochs["start"])
        if keep_unfinished:  # a pending or running job has no runtime yet
            values["runtime_s"][np.isin(values["state"], list(SLURM_UNFINISHED_STATES))] = None
        for name in ("submit", "start", "end"):
            values[f"{name}_epoch_s"] = _nullable(epochs[name])
        app_extra = mapped(lambda row: sacct_rows.app_and_extra(row, options), "state",
                           "exitcode", "jobname", "comment", "ncpus", "alloccpus", "qos",
                           "reqmem")
        values["app"], values["extra"] = app_extra(0), app_extra(1)
        values["nodes"] = mapped(sacct_rows.nodes, "nnodes", "allocnodes")(None)
        values["gpus"] = mapped(sacct_rows.gpus, "alloctres")(None)
        values["requested_walltime_s"] = mapped(sacct_rows.requested_walltime_s,
                                                "timelimitraw", "timelimit")(None)
        for name in ("user", "account", "partition", "cluster"):
            values[name] = mapped(partial(sacct_rows.text_or_none, name=name), name)(None)
        job_ids = base[is_run & ~failed]
        values["job_id"] = job_ids
        values["system"] = values.pop("cluster")
        values["censored"] = values["state"] == "TIMEOUT"
        # Array tasks and het components: a dict of their own. A dump without JobID
        # (jobstats') has an empty display id on every row, which says nothing more.
        run_display = display[is_run & ~failed]
        renamed = np.flatnonzero((run_display != job_ids) & (run_display != "") & ok)
        key_ids = job_ids.copy()
        for i in renamed:
            values["extra"][i] = {**values["extra"][i], **sacct_rows.job_id_extra(
                run_display[i].strip(), job_ids[i])}
            key_ids[i] = sacct_rows.key_id(run_display[i].strip(), job_ids[i])
        values["key"] = np.array([job_key(job_id, submit) for job_id, submit in zip(
            key_ids, values["submit_epoch_s"], strict=True)], dtype=object)
        self.scalar[runs[~ok]] = True
        placed = np.flatnonzero(is_run & ~failed)
        for name in JOB_FIELDS:
            out[name][placed] = values[name]
        out["is_run"] = is_run & ~failed
        return out

    def runtime_s(self, runs: np.ndarray, run_positions: np.ndarray,
                  ok: np.ndarray) -> np.ndarray:
        """ElapsedRaw where it is plain digits, else the scalar rule (Elapsed)."""
        runtime = np.full(len(runs), np.nan)
        digits = np.zeros(len(runs), dtype=bool)
        if "elapsedraw" in self.layout.columns:
            runtime, read = whole_numbers(self.column("elapsedraw", runs))
            digits = read & ~np.isnan(runtime)
        getter, failed = self.distinct(sacct_rows.runtime_s, ("elapsedraw", "elapsed"), "jobs",
                                       run_positions[~digits])
        out = _nullable(runtime)
        out[~digits] = getter(None)
        ok[np.flatnonzero(~digits)[failed]] = False
        return out

    def steps(self, rows: np.ndarray, step: ByteColumn) -> Columns:
        """Step rows: MaxRSS, I/O bytes, and tasks and nodes of the largest."""
        rss, ok = sizes_bytes(self.column("maxrss", rows))
        values = {"max_rss_bytes": rss}
        for name, column in (("disk_in_bytes", "tresusageintot"),
                             ("disk_out_bytes", "tresusageouttot")):
            disk, present, read = key_values(self.column(column, rows), b"fs/disk")
            size, size_ok = sizes_bytes(disk)
            values[name] = np.where(present, np.nan_to_num(size), np.nan)
            ok &= read & (~present | size_ok)
        tasks, tasks_ok = whole_numbers(self.column("ntasks", rows))
        extern = step.equals(b"extern")
        counted = (tasks > 0) & ~extern
        values["tasks"] = np.where(counted, tasks, np.nan)
        self.groups["steps"] = rows
        nodes, nodes_failed = self.distinct(sacct_rows.nodes, ("nnodes", "allocnodes"), "steps",
                                            np.arange(len(rows)))
        node_values = np.array([np.nan if v is None else v for v in nodes(None)], dtype=float)
        values["nodes"] = np.where(counted, node_values, np.nan)
        ok &= tasks_ok & ~(counted & nodes_failed)
        self.scalar[rows[~ok]] = True
        return {name: values[name] for name in STEP_VALUES}


def _decoded(column: ByteColumn) -> np.ndarray:
    """The fields as an object array of str. Joined into one bytes object and split as
    text, they cost half of numpy's conversion to str and then to objects (the fields are
    ASCII without NUL or line feed: such lines never reach the columns)."""
    out = np.empty(len(column.lengths), dtype=object)
    if len(out):
        out[:] = b"\n".join(column.values.tolist()).decode("ascii").split("\n")
    return out


def read_block(block: LineBlock, layout: Layout, first_line: int, zone: ZoneInfo,
               options: IngestOptions, memos: dict[tuple[str, ...], RuleMemo]) -> BlockRows:
    """The jobs, steps and bad records of the block's lines from index ``first_line`` on;
    ``memos`` keeps the rules' results from block to block (empty for a file's first)."""
    table = split_fields(block, layout.delimiter.encode(), len(layout.columns),
                         layout.trailing_delimiter)
    if first_line:
        keep = table.lines >= first_line
        table = FieldTable(block, table.lines[keep], table.starts[keep], table.ends[keep])
    reader = _BlockReader(table, layout, zone, options, memos)
    ids = reader.ids()
    base = _decoded(ids.base)
    all_rows = np.arange(len(table.lines))
    job_rows = all_rows[ids.fast & ids.is_job]
    jobs = reader.jobs(job_rows, base[job_rows], _decoded(ids.display.take(job_rows)))
    step_rows = all_rows[ids.fast & ~ids.is_job]
    steps = reader.steps(step_rows, ids.step.take(step_rows))
    step_raw_ids = _decoded(ids.raw.take(step_rows))

    good_jobs = ~reader.scalar[job_rows]
    good_steps = ~reader.scalar[step_rows]
    job_table: Columns = {name: values[good_jobs] for name, values in jobs.items()}
    job_table["base"] = base[job_rows][good_jobs]
    job_table["line_no"] = block.line_nos[table.lines[job_rows][good_jobs]]
    step_table: Columns = {name: values[good_steps] for name, values in steps.items()}
    step_lines = table.lines[step_rows][good_steps]
    step_table.update(base=base[step_rows][good_steps], raw_id=step_raw_ids[good_steps],
                      line_index=step_lines, reason=np.full(len(step_lines), None, object))

    clean = np.zeros(len(block.starts), dtype=bool)
    clean[:first_line] = True
    clean[table.lines[~reader.scalar]] = True
    scalar_jobs: list[JobLine] = []
    scalar_steps: list[StepLine] = []
    bad: list[BadRecord] = []
    # (a job row the columns could not read is re-read below, and counted there)
    n_unfinished = reader.n_unfinished
    for index in np.flatnonzero(~clean):
        line_no = block.first_line_no + int(index)
        for item in sacct_rows.read_line(block.text(int(index)), line_no, layout, zone, options):
            if isinstance(item, PendingTasksLine):
                n_unfinished += 1
            elif isinstance(item, JobLine):
                n_unfinished += item.unfinished
                scalar_jobs.append(item)
            elif isinstance(item, StepLine):
                scalar_steps.append(item)
            else:
                bad.append(item)
    job_table = _with_scalar_jobs(job_table, scalar_jobs)
    step_table = _with_scalar_steps(step_table, scalar_steps, block.first_line_no)
    step_table["line_no"] = block.first_line_no + step_table["line_index"]
    step_table["jobs_before"] = np.searchsorted(job_table["line_no"], step_table["line_no"])
    return BlockRows(job_table, step_table, bad, n_unfinished)


def _objects(values: list[Any]) -> np.ndarray:
    """A 1-d object array, also of dicts or tuples (which np.array would unpack)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def _ordered(table: Columns, line_nos: np.ndarray) -> Columns:
    order = np.argsort(line_nos, kind="stable")
    return {name: values[order] for name, values in table.items()}


def _with_scalar_jobs(table: Columns, lines: list[JobLine]) -> Columns:
    if not lines:  # the usual block: the table is in line order already
        return table
    records: list[RunRecord | None] = [line.record for line in lines]
    added: Columns = {name: _objects([None if r is None else getattr(r, name) for r in records])
                      for name in JOB_FIELDS}
    added["is_run"] = np.array([r is not None for r in records], dtype=bool)
    added["base"] = _objects([line.base for line in lines])
    added["line_no"] = np.array([line.line_no for line in lines], dtype=np.int64)
    merged = {name: np.concatenate([table[name], added[name]]) for name in table}
    return _ordered(merged, merged["line_no"])


def _with_scalar_steps(table: Columns, lines: list[StepLine], first_line_no: int) -> Columns:
    if not lines:
        return table

    def value(line: StepLine, name: str) -> float:
        found = None if line.usage is None else getattr(line.usage, name)
        return np.nan if found is None else float(found)

    added: Columns = {name: np.array([value(line, name) for line in lines], dtype=float)
                      for name in STEP_VALUES}
    added.update(
        base=_objects([line.base for line in lines]),
        raw_id=_objects([line.raw_id for line in lines]),
        line_index=np.array([line.line_no - first_line_no for line in lines], dtype=np.int64),
        reason=_objects([line.reason for line in lines]))
    merged = {name: np.concatenate([table[name], added[name]]) for name in table}
    return _ordered(merged, merged["line_index"])

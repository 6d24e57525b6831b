"""Slurm accounting from ``sacct --parsable2`` (``-P``): one run per job, steps folded in.

Reads output with a header line (``sacct -P --format ...``) and headerless dumps
(``--noheader``), whose fields come from ``options.columns`` or, when neither is given,
from the 26-column order Open XDMoD documents for its exports. ``-p``'s trailing ``|``
and ``--delimiter='^|^'`` (safe when job names contain ``|``) are recognised.

Folding (FORMATS.md §1.4): a job is its allocation row plus the step rows that follow it,
grouped by ``JobIDRaw`` before the first ``.``. The allocation row gives runtime, time
limit, state, submit/start/end, CPUs and nodes; the steps give tasks (ranks per node =
NTasks / NNodes of the step with the most tasks, the ``extern`` step excluded), MaxRSS
(max over steps) and I/O bytes (``fs/disk`` of ``TRESUsageInTot`` + ``TRESUsageOutTot``,
summed over steps; None when no step reports it).

Not runs, skipped without a bad record but counted (:class:`~.records.Skipped`): jobs
still pending or running (and their steps), and pending array remainders such as
``4103947_[1-3]``; with ``require_runtime`` False (jobs to advise a walltime for) the
jobs are read, without a runtime. A TIMEOUT job is kept as ``censored``: it ran at least
its limit.

Runtime is ElapsedRaw, else Elapsed; a dump with neither (jobstats' ``sacct -P -X -o
jobidraw,start,end,...``) gives End - Start. Times are local ``YYYY-MM-DDTHH:MM:SS`` read
in ``--timezone``, or epoch seconds (``SLURM_TIME_FORMAT=%s``), which are UTC.

Fields: ``-P`` lines have one field per column; ``-p`` lines have the same and end with
the delimiter. A line with any other count is a bad record, never shifted.

The file is read in blocks of lines (:mod:`perfpredict.ingest._text.blocks`), each
converted column by column (:mod:`.columns`, with the per-row rules of :mod:`.rows` for
whatever the column readers cannot vouch for) and its steps folded into the open jobs
(:mod:`.folding`), so memory stays bounded on dumps of any size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from perfpredict.ingest import fields
from perfpredict.ingest._text.blocks import LineBlock, line_blocks
from perfpredict.ingest.field_columns import RuleMemo
from perfpredict.ingest.records import (
    BadRecord,
    BatchItem,
    IngestOptions,
    ParsedItem,
    Skipped,
    expand_batches,
)
from perfpredict.ingest.sacct.columns import read_block
from perfpredict.ingest.sacct.folding import MAX_OPEN_JOBS, StepFolder
from perfpredict.ingest.sacct.rows import XDMOD_COLUMNS, Layout, detect_layout

__all__ = ["DESCRIPTION", "MAX_OPEN_JOBS", "XDMOD_COLUMNS", "parse", "parse_batches"]

DESCRIPTION = "Slurm 'sacct -P' output (header line, or --columns / XDMoD order), steps folded"


def _layout(block: LineBlock, options: IngestOptions) -> tuple[Layout, int] | BadRecord | None:
    """The layout from the block's first non-blank line and the index of the first line
    to read as a job or step (after the header); None when the block is blank."""
    for index in range(len(block.starts)):
        text = block.text(index)
        if text.strip():
            if fields.looks_binary(text):
                return BadRecord(block.first_line_no + index, "", fields.BINARY_FILE,
                                 whole_file=True)
            if text.lstrip().startswith("JobId="):
                return BadRecord(block.first_line_no + index, text, (
                    "this is Slurm's job completion log (jobcomp/filetxt), not sacct "
                    f"output; read it with {options.read_as('jobcomp')}"), whole_file=True)
            if text.lstrip().startswith(("{", "[")) and "|" not in text:
                return BadRecord(block.first_line_no + index, text, (
                    "this is JSON (sacct --json output), not sacct -P text; read it "
                    f"with {options.read_as('sacct-json')}"), whole_file=True)
            if "|" not in text and any(sep in text for sep in ",;\t"):
                return BadRecord(block.first_line_no + index, text, (
                    "the fields are not separated by '|' (sacct -P writes them so): "
                    "export with sacct -P (--parsable2); a table of jobs or runs is read "
                    f"with {options.read_as('csv')}"), whole_file=True)
            layout, is_header = detect_layout(text, options)
            if not {"jobidraw", "jobid"} & set(layout.columns) or "state" not in layout.columns:
                return BadRecord(block.first_line_no + index, text, (
                    "the columns need JobIDRaw (or JobID) and State; export with sacct -P "
                    "--format JobID,JobIDRaw,State,..."), whole_file=True)
            given_by = "--columns" if options.columns else "the header"
            if (twice := fields.named_twice(layout.columns, given_by)) is not None:
                return BadRecord(block.first_line_no + index, text,
                                 f"{twice} (export each field once with sacct --format)",
                                 whole_file=True)
            return layout, index + 1 if is_header else index
    return None


def parse_batches(path: Path, options: IngestOptions) -> Iterator[BatchItem]:
    """Runs of ``path`` in batches, one per finished job, and a bad record per unreadable
    line (each block's bad records before its runs)."""
    zone = options.zone()
    options.check_app_from()
    layout: Layout | None = None
    folder = StepFolder()
    memos: dict[tuple[str, ...], RuleMemo] = {}
    for block in line_blocks(path):
        first_line = 0
        if layout is None:
            found = _layout(block, options)
            if found is None:
                continue
            if isinstance(found, BadRecord):
                yield found
                return
            layout, first_line = found
        rows = read_block(block, layout, first_line, zone, options, memos)
        folded = folder.add(rows.jobs, rows.steps)
        steps = rows.steps
        bad = rows.bad + [
            BadRecord(int(steps["line_no"][i]), block.text(int(steps["line_index"][i])),
                      reason or f"step {steps['raw_id'][i]} has no job row {steps['base'][i]} "
                      "shortly before it; sacct prints every job's steps right after it, so "
                      "the dump was cut or reordered")
            for i, reason in folded.bad_steps]
        if (whole_file := next((b for b in bad if b.whole_file), None)) is not None:
            yield whole_file  # a header naming other fields: no line after it reads right
            return
        yield from sorted(bad, key=lambda b: b.line_no or 0)
        if rows.n_unfinished:
            yield Skipped(rows.n_unfinished)
        if folded.runs is not None:
            yield folded.runs
    if (last := folder.finish()) is not None:
        yield last


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of ``path``, one per finished job, or a bad record per unreadable line."""
    return expand_batches(parse_batches(path, options))

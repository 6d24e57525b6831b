"""A block of SWF data lines read column by column.

A line whose 18 fields are all plain decimals (``-1`` for missing), whole where the
format wants whole numbers, with a job number and a status of 0, 1, 5 or -1, is read
here: numbers by :func:`~.field_columns.decimals`, the epochs and limits with numpy, and
names, states and extra fields by the rules of :mod:`.rows` once per distinct
combination. Every other line (comments, partial-execution records, whose keys count
earlier records of their job, and anything odd) goes to
:meth:`.rows.LineReader.read`, in order; so the result is the one of reading every
line alone, only faster.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from perfpredict.ingest._text.blocks import FieldTable, LineBlock, split_whitespace
from perfpredict.ingest.field_columns import (
    Factorized,
    decimals,
    map_distinct,
    nullable_floats,
    nullable_ints,
)
from perfpredict.ingest.records import (
    BatchItem,
    ParsedItem,
    RunBatch,
    in_line_order,
)
from perfpredict.ingest.swf.rows import (
    ABSOLUTE_EPOCH_MIN_S,
    N_FIELDS,
    LineReader,
    app_name,
    extra_fields,
    identity_digests,
    job_key,
    number_text,
    state_of,
)

#: Fields the format defines as whole numbers (0-based): job, processors, status, ids...
_WHOLE_FIELDS = [0, 4, 7, 10, 11, 12, 13, 14, 15, 16]
#: Statuses read here; 2, 3 and 4 (partial records) are keyed by the line reader.
_PLAIN_STATUSES = (0, 1, 5)


def _numbers(table: FieldTable) -> tuple[np.ndarray, np.ndarray]:
    """The fields as an ``(18, rows)`` float array (NaN: missing) and which rows the
    column readers vouch for."""
    values, read = decimals(table.cells())
    read &= (values >= 0) | (values == -1)
    numbers = np.where(values == -1, np.nan, values).reshape(-1, N_FIELDS).T
    ok = np.all(read.reshape(-1, N_FIELDS), axis=1)
    whole = numbers[_WHOLE_FIELDS]
    ok &= np.all(np.isnan(whole) | (whole == np.floor(whole)), axis=0)
    status = numbers[10]
    ok &= ~np.isnan(numbers[0]) & (np.isnan(status) | np.isin(status, _PLAIN_STATUSES))
    return numbers[:, ok], ok


def _runs(numbers: np.ndarray, line_nos: np.ndarray, reader: LineReader) -> RunBatch:
    (job, submit, wait, run, alloc, cpu, mem, req_procs, req_time, req_mem, status, user,
     group, exe, queue, part, prev, think) = numbers
    header = reader.header
    if header.unix_start_time_s is not None:
        submit_epoch, offset = header.unix_start_time_s + submit, np.full(len(job), np.nan)
    else:
        absolute = submit >= ABSOLUTE_EPOCH_MIN_S
        submit_epoch = np.where(absolute, submit, np.nan)
        offset = np.where(absolute, np.nan, submit)
    start = submit_epoch + wait
    requested = np.where(req_procs > 0, req_procs, np.nan)
    requested_walltime = np.where(req_time > 0, req_time, np.nan)
    rows = np.arange(len(job))

    def distinct(rule: Any, *columns: Factorized) -> Any:
        return map_distinct(rule, list(columns), rows).column

    def whole(values: np.ndarray) -> Factorized:
        return Factorized.of_numbers(values, whole=True)

    reached = run >= requested_walltime  # NaN compares False: no limit, no run time
    state = distinct(state_of, whole(status), Factorized(reached.astype(np.int64), [False, True]))
    censored = state(1).astype(bool)
    extra = distinct(
        lambda *values: extra_fields(header, *values) or None, Factorized.of_numbers(offset),
        whole(np.where(censored, status, np.nan)), whole(part), Factorized.of_numbers(cpu),
        Factorized.of_numbers(mem), whole(requested), Factorized.of_numbers(req_mem),
        whole(prev), Factorized.of_numbers(think))
    job_ids = [str(number) for number in nullable_ints(job)]
    submits = nullable_floats(submit_epoch)
    digests = iter(identity_digests(numbers[:, np.isnan(submit_epoch)]))
    columns: dict[str, list[Any]] = {
        "app": distinct(app_name, whole(exe))(None).tolist(),
        "system": [reader.system] * len(job),
        "total_ranks": nullable_ints(np.where(alloc > 0, alloc, requested)),
        "runtime_s": nullable_floats(run),
        "requested_walltime_s": nullable_floats(requested_walltime),
        "state": state(0).tolist(),
        "censored": censored.tolist(),
        "user": distinct(number_text, whole(user))(None).tolist(),
        "account": distinct(number_text, whole(group))(None).tolist(),
        "partition": distinct(header.queue_name, whole(queue))(None).tolist(),
        "job_id": job_ids,
        "submit_epoch_s": submits,
        "start_epoch_s": nullable_floats(start),
        "end_epoch_s": nullable_floats(start + run),
        "extra": extra(None).tolist(),
        "line_no": line_nos.tolist(),
        "key": [job_key(job_id, submit, digests.__next__)
                for job_id, submit in zip(job_ids, submits, strict=True)],
    }
    return RunBatch(columns)


def read_block(block: LineBlock, first: int, reader: LineReader) -> Iterator[BatchItem]:
    """The runs and bad records of the block's lines from index ``first`` on (after the
    header), in line order."""
    table = split_whitespace(block, N_FIELDS)
    keep = (table.lines >= first) & (not reader.needs_system)
    table = FieldTable(block, table.lines[keep], table.starts[keep], table.ends[keep])
    numbers, ok = _numbers(table)
    plain = np.zeros(len(block.starts), dtype=bool)
    plain[:first] = True
    plain[table.lines[ok]] = True
    items: list[ParsedItem] = []
    for index in np.flatnonzero(~plain).tolist():
        item = reader.read(block.text(index), block.first_line_no + index)
        if item is not None:
            items.append(item)
    batch = _runs(numbers, block.line_nos[table.lines[ok]], reader) if ok.any() else None
    yield from in_line_order(batch, items)

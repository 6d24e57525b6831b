"""Standard Workload Format (SWF, Parallel Workloads Archive, v2.2): one job per line.

A data line holds 18 whitespace-separated numbers; ``-1`` means missing in every field and
several fields may be fractional. Header comments (``; Key: value``) come before the first
data line; the parser reads:

* ``UnixStartTime``: epoch of time 0. Submit times are offsets from it, so
  ``submit_epoch_s = UnixStartTime + field 2``, ``start = submit + wait``,
  ``end = start + run``. ``UnixStartTime`` is UTC already (KTH: 843480031 is
  1996-09-23 12:00:31 UTC, its ``StartTime`` 14:00:31 CEST); ``TimeZoneString``
  (``Europe/Stockholm``) says where local time is and is kept as the ``timezone`` extra
  field so that time-of-day can be computed locally. Without ``UnixStartTime``, submit
  times of 1e8 or more are taken as absolute epochs (the Alea variant); smaller ones are
  relative to an unknown origin: the epochs stay unknown and the offset is kept as the
  ``swf_submit_offset_s`` extra field.
* ``Computer`` and ``Installation``: when ``--system`` is not given, the system is named
  ``"<Computer> at <Installation>"`` (``IBM SP2 at Swedish Royal Institute of Technology
  (KTH)``). Both are required: many installations ran the same computer, and a name from
  the computer alone would merge their job numbers. ``--system`` always wins.
* ``Queue:`` and ``Partition:`` lines (``;  0  interactive``) name queue and partition
  numbers; otherwise the numbers are kept as text.

Mapping: job number -> ``job_id`` and key (with the submit epoch, or, without
``UnixStartTime``, a digest of the job's fields: :func:`.rows.job_key`); run time ->
``runtime_s``; allocated processors (field 5, else the requested field 8) ->
``total_ranks``; requested time (field 9) ->
``requested_walltime_s``; status (field 11) -> ``state`` (1 COMPLETED, 0 FAILED, 5
CANCELLED, 2/3/4 PARTIAL, -1 unknown); user (12) -> ``user``; group (13) -> ``account``;
executable number (14) -> ``app`` (``exe-17``, or ``unknown``); queue (15) -> ``partition``;
partition (16), CPU time, memory, requested processors, preceding job and think time ->
extra fields. SWF has no node count.

Run time may exceed the requested time (KTH: 475 jobs): schedulers allowed a grace period,
so a job that *completed* past its request is an ordinary measurement. A job that failed or
was cancelled at or past its request was stopped by the limit: its run time is a lower
bound, so it is stored as ``state="TIMEOUT"``, ``censored=True`` (the log's status is kept
as the ``swf_status`` extra field).

Partial-execution records (status 2, 3, 4: checkpointed or swapped jobs) repeat their job's
number; they are keyed ``<job>.<k>`` (k-th partial record of the job) so they never replace
the job's summary line.

A line without exactly 18 fields is bad input. With ``--swf-allow-extra-fields``
(``IngestOptions.swf_allow_extra_fields``) a line with more fields (Alea's extended format
adds a node list, a queue name and a PBS resource spec) is read from its first 18 and the
rest is kept as the ``swf_extra_fields`` extra field.

The header is read line by line, the data lines in blocks
(:mod:`perfpredict.ingest._text.blocks`) whose plain lines are converted column by column
(:mod:`.columns`); every other line is read by :class:`.rows.LineReader`, which defines
the rules, so memory stays bounded and each rule has one definition.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from perfpredict.ingest._text.blocks import line_blocks
from perfpredict.ingest.records import (
    BadRecord,
    BatchItem,
    IngestOptions,
    ParsedItem,
    expand_batches,
)
from perfpredict.ingest.swf.columns import read_block
from perfpredict.ingest.swf.rows import LineReader

DESCRIPTION = "Standard Workload Format (Parallel Workloads Archive), 18 fields per job"


def parse_batches(path: Path, options: IngestOptions) -> Iterator[BatchItem]:
    """Runs of ``path`` in batches and single items, in line order: the header line by
    line, then blocks of lines read as columns (:mod:`.columns`)."""
    reader = LineReader(options)
    for block in line_blocks(path):
        first = 0
        while reader.in_header and first < len(block.starts):
            item = reader.read(block.text(first), block.first_line_no + first)
            if item is not None:
                yield item
                if isinstance(item, BadRecord) and item.whole_file:
                    return  # no line of the file can be read: one reject says so
            first += 1
        yield from read_block(block, first, reader)


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of ``path``, one per data line, or a bad record per unreadable line."""
    return expand_batches(parse_batches(path, options))

"""What parsers produce: one :class:`RunRecord` per job or benchmark run, or a
:class:`BadRecord` saying which line could not be read and why.

Parsers normalise units at this boundary: seconds, bytes, epoch seconds UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(slots=True)
class RunRecord:
    app: str
    system: str | None = None  # None: the --system option supplies it
    problem_size: str | None = None
    problem_size_num: float | None = None
    nodes: int | None = None
    ranks_per_node: float | None = None
    threads_per_rank: int | None = None
    total_ranks: int | None = None
    gpus: int | None = None
    io_bytes: float | None = None
    runtime_s: float | None = None
    requested_walltime_s: float | None = None
    state: str | None = None
    exit_code: int | None = None
    user: str | None = None
    account: str | None = None
    partition: str | None = None
    job_id: str | None = None
    submit_epoch_s: float | None = None
    start_epoch_s: float | None = None
    end_epoch_s: float | None = None
    max_rss_bytes: float | None = None
    censored: bool = False
    extra: dict[str, Any] | None = None
    line_no: int | None = None
    #: Identity within its system (scheduler job id, JobIDRaw...). None: a benchmark row,
    #: identified by its content instead.
    key: str | None = None
    #: "insert" stores a new run; "attach" merges ``attach_fields`` into the stored run with
    #: the same key (Darshan I/O onto its scheduler job) and inserts only when none exists.
    mode: Literal["insert", "attach"] = "insert"
    attach_fields: tuple[str, ...] = field(default_factory=tuple)


@dataclass(slots=True)
class BadRecord:
    line_no: int | None
    raw: str
    reason: str


ParsedItem = RunRecord | BadRecord


@dataclass
class IngestOptions:
    """Options every parser receives; each reads the ones it understands."""

    system: str | None = None
    on_error: Literal["fail", "skip"] = "fail"
    timezone: str = "UTC"
    columns: list[str] | None = None  # sacct dumps without a header line
    app_from: str = "jobname"  # sacct: jobname | comment | regex:PATTERN
    swf_allow_extra_fields: bool = False
    #: False for jobs not run yet (walltime advice input): a missing runtime is allowed.
    require_runtime: bool = True

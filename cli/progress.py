"""A progress counter on a terminal, silence when piped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def record_counter(enabled: bool) -> Iterator[Callable[[int], None] | None]:
    if not enabled:
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.completed:,} records"),
                  TimeElapsedColumn(), transient=True) as bar:
        task = bar.add_task("ingest", total=None)
        yield lambda n: bar.advance(task, n)

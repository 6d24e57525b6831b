"""A progress counter, or a spinner with the time elapsed, on a terminal; silence when
piped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

T = TypeVar("T")


class RecordCounter:
    """Advances the spinner's count of records; called with each block's count."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar = bar
        self._task = task

    def __call__(self, n_records: int) -> None:
        self.bar.advance(self._task, n_records)

    def printing(self, show: Callable[[T], None]) -> Callable[[T], None]:
        """``show`` with the spinner taken off the terminal while it prints: ``typer.echo``
        writes past rich's redirection of stdout, so its line would start on the spinner's
        and keep that frame ("⠼ 0 records 0:00:01FILE: 500 records, ...")."""
        def paused(item: T) -> None:
            self.bar.stop()
            try:
                show(item)
            finally:
                self.bar.start()
        return paused


@contextmanager
def record_counter(enabled: bool) -> Iterator[RecordCounter | None]:
    if not enabled:
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.completed:,} records"),
                  TimeElapsedColumn(), transient=True) as bar:
        yield RecordCounter(bar, bar.add_task("ingest", total=None))


@contextmanager
def elapsed_spinner(enabled: bool, label: str) -> Iterator[None]:
    """A spinner and the time elapsed on stderr, for a command that cannot count its work
    (``train``: a minute or more on a center's store, said nothing until it was done).
    Drawn on stderr, where a warning written meanwhile is printed above it; stdout is
    left alone, so nothing may print there until the block ends."""
    if not enabled:
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn(label), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True, redirect_stdout=False) as bar:
        bar.add_task(label, total=None)  # a row to draw: a Progress draws one per task
        yield

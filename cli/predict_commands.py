"""Commands of this group are added as their library functions land."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass

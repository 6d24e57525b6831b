"""``perfpredict advise walltime``."""

from __future__ import annotations

import typer


def register(advise_app: typer.Typer) -> None:
    pass

"""``perfpredict advise``: node counts and proposal tables (the group's own callback),
``advise walltime`` and ``advise next-runs``."""

from __future__ import annotations

import typer

advise_app = typer.Typer(
    help="Advice from predictions: node counts, walltimes, allocation tables.",
    invoke_without_command=True,
)


def register(app: typer.Typer) -> None:
    from perfpredict.cli import walltime_commands

    walltime_commands.register(advise_app)
    app.add_typer(advise_app, name="advise")

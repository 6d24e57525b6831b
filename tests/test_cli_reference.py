"""docs/cli-reference.md is generated from --help; this fails when it has drifted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "generate_cli_reference.py"


def test_cli_reference_is_up_to_date(tmp_path: Path) -> None:
    generated = tmp_path / "cli-reference.md"
    # A fresh interpreter, so no Typer setting of this test session leaks into the help.
    env = {**os.environ, "PERFPREDICT_HOME": str(tmp_path / "home"), "COLUMNS": "80"}
    subprocess.run([sys.executable, str(SCRIPT), "--output", str(generated)], check=True,
                   env=env, cwd=ROOT, capture_output=True, text=True)
    committed = ROOT / "docs" / "cli-reference.md"
    assert committed.exists(), (
        "docs/cli-reference.md is missing; generate it with: "
        "python docs/generate_cli_reference.py")
    assert generated.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
        "docs/cli-reference.md is out of date with the commands' --help; regenerate it with: "
        "python docs/generate_cli_reference.py")


def test_reference_covers_every_command() -> None:
    text = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    for command in ("ingest", "train", "estimate", "evaluate", "runs list", "runs stats",
                    "runs export", "datasets load", "advise walltime", "systems show",
                    "db upgrade"):
        assert f"## `perfpredict {command}`" in text, command

"""docs/cli-reference.md is generated from --help; this fails when it has drifted."""

from __future__ import annotations

import os
import re
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


def test_the_readme_table_names_every_command_the_reference_has() -> None:
    """A newcomer learns the commands from the README's table: 'advise next-runs', 'db
    status' and 'db upgrade' were in the reference and nowhere in it. A group's commands
    may be listed in braces (`perfpredict runs {list,stats}`)."""
    reference = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set()
    for words in re.findall(r"^\| `perfpredict ([^`|]+?)(?: [\[-][^`]*)?`", readme, re.M):
        group, _, rest = words.partition(" ")
        names = rest.split("}")[0].lstrip("{").split(",") if rest.startswith("{") else [rest]
        listed |= {group, *(f"{group} {name}".strip() for name in names)}
    commands = re.findall(r"^## `perfpredict (\S[^`]*)`", reference, re.M)
    leaves = [c for c in commands if not any(o.startswith(c + " ") for o in commands)]
    assert [c for c in leaves if c not in listed] == []

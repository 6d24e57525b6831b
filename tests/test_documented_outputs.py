"""Outputs the docs quote, as the tool prints them now. A retrained predictor or a changed
rule moves such numbers, and a quote must move with them: the allocation proposal's row
had gone stale in the user guide and in example 03 while every test passed."""

from __future__ import annotations

from tests.conftest import REPO

MASKRCNN = ["--app", "maskrcnn", "--system", "XE8545x4A100-SXM-40GB (Dell)",
            "--problem-size", "v2.0", "--runs", "50", "--format", "markdown"]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_allocation_proposal_row_is_quoted_as_printed(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("advise", *MASKRCNN)
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines()
              if line.startswith("| production (recommended)")]
    assert row in (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    example = (REPO / "examples" / "03_allocation_proposal.py").read_text(encoding="utf-8")
    assert _words(row.strip("| ")) in _words(example)  # wrapped in its docstring

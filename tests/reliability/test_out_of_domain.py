"""Out of domain (issue 6): unknown applications get suggestions, far extrapolation is
flagged with a wider interval, and nonsense inputs are bad input (exit 2, one line)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from tests.reliability._data import APPS, NODES


def _run(url: str, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["--db", url, *args])


def _one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("typo", ["luleshh", "LULESH2", "hac", "nek-rs"])
def test_unknown_application_suggests_the_closest_names(trained_url: str, typo: str) -> None:
    result = _run(trained_url, "estimate", "--app", typo, "--nodes", "8")
    assert result.exit_code == 1
    line = _one_error_line(result)
    assert "did you mean" in line
    close = {"luleshh": "lulesh", "LULESH2": "lulesh", "hac": "hacc", "nek-rs": "nekrs"}[typo]
    assert close in line


def test_unrelated_application_lists_known_ones(trained_url: str) -> None:
    result = _run(trained_url, "estimate", "--app", "zzzzzz", "--nodes", "8")
    assert result.exit_code == 1
    line = _one_error_line(result)
    assert all(name in line for name in APPS)


def test_far_extrapolation_is_flagged_and_the_interval_widens(trained_url: str) -> None:
    largest = max(NODES)
    widths, flagged = [], []
    for nodes in (largest, largest * 4, largest * 64, largest * 4096):
        result = _run(trained_url, "estimate", "--app", APPS[0], "--nodes", str(nodes),
                      "--format", "json")
        assert result.exit_code == 0, result.output
        est = json.loads(result.stdout)
        widths.append((est["upper_runtime_s"] - est["lower_runtime_s"])
                      / est["predicted_runtime_s"])
        flagged.append((est["beyond_measured_range"], est["beyond_calibration"]))
        if est["beyond_calibration"]:
            assert any("widened" in note for note in est["notes"])
    assert widths == sorted(widths) and widths[-1] > widths[0] * 1.5, widths
    assert flagged[0] == (False, False)
    assert all(beyond for beyond, _ in flagged[1:])
    assert flagged[-1] == (True, True)


@pytest.mark.parametrize("args", [
    ("--nodes", "0"), ("--nodes", "-4"),
    ("--nodes", "8", "--io-bytes", "-1"), ("--nodes", "8", "--ranks-per-node", "0"),
    ("--nodes", "8", "--threads-per-rank", "nan"), ("--nodes", "8", "--confidence", "1.5"),
    ("--nodes", "8", "--confidence", "0"), ("--nodes", "8", "--confidence", "nan"),
], ids=" ".join)
def test_nonsense_inputs_are_bad_input(trained_url: str, args: tuple[str, ...]) -> None:
    result = _run(trained_url, "estimate", "--app", APPS[0], *args)
    assert result.exit_code == 2, result.output
    _one_error_line(result)


@pytest.mark.parametrize("nodes", ["nan", "inf", "4.5"])
def test_a_node_count_is_a_whole_number(trained_url: str, nodes: str) -> None:
    """Refused while parsing, as a usage error, before anything is read."""
    result = _run(trained_url, "estimate", "--app", APPS[0], "--nodes", nodes)
    assert result.exit_code == 2
    assert f"Invalid value for '--nodes': '{nodes}' is not a valid int" in result.stderr

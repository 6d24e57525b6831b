"""``advise walltime --input``: jobs not run yet from sacct, the format told by the file
(issue 14, item 10). Ingest still skips those jobs, and says so."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from perfpredict.errors import BadInputError
from perfpredict.ingest.registry import sniff_format

REPO = Path(__file__).resolve().parents[2]
HISTORY = REPO / "examples" / "data" / "synthetic_sacct.psv"
HEADER = ("JobID|JobIDRaw|Cluster|Partition|Account|User|JobName|Submit|Start|End|Elapsed|"
          "Timelimit|State|ExitCode|NNodes|NCPUS|NTasks|ReqTRES|AllocTRES|MaxRSS|"
          "TRESUsageInTot|TRESUsageOutTot")
PENDING = f"""{HEADER}
4190001|4190001|demo-cluster|cpu|neuro|alice|relearn|2024-06-01T09:00:00|Unknown|Unknown|00:00:00|02:00:00|PENDING|0:0|4|128||billing=128,cpu=128,node=4||||
4190002|4190002|demo-cluster|large|neuro|bob|relearn|2024-06-01T09:00:00|Unknown|Unknown|00:00:00|08:00:00|PENDING|0:0|16|512||billing=512,cpu=512,node=16||||
4190003_[1-4%2]|4190003|demo-cluster|cpu|eng|dave|openfoam|2024-06-01T09:05:00|Unknown|Unknown|00:00:00|12:00:00|PENDING|0:0|4|192||billing=192,cpu=192,node=4||||
"""


def test_pending_sacct_jobs_get_advice_and_are_skipped_by_ingest(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "sacct", str(HISTORY)).exit_code == 0
    pending = tmp_path / "squeue-today.txt"  # no telling name: read by its first line
    pending.write_text(PENDING)
    result = cli("advise", "walltime", "--input", str(pending), "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["job_id"] for row in rows] == ["4190001", "4190002", "4190003_[1-4%2]"]
    assert [row["requested_walltime_s"] for row in rows] == ["7200.0", "28800.0", "43200.0"]
    assert all(0 < float(row["walltime_s"]) <= float(row["requested_walltime_s"])
               for row in rows)

    result = cli("ingest", "sacct", str(pending))
    assert result.exit_code == 0
    assert "0 records, 0 stored" in result.stdout
    assert "3 non-terminal jobs skipped" in result.stdout


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("jobs.swf.gz", "", "swf"),
    ("jobs.json", "", "sacct-json"),
    ("jobs", "; Version: 2.2\n1 0 10 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n", "swf"),
    ("jobs", "\n1 0 10 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n", "swf"),
    ("jobs", "JobID|State\n", "sacct"),
    ("jobs", "job_id,app,system\n", "csv"),
])
def test_the_format_is_told_by_name_then_content(tmp_path: Path, name: str, text: str,
                                                  expected: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert sniff_format(path) == expected


def test_an_unknown_format_asks_for_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """By the option that names it, with its values ("pass it by name" named neither)."""
    path = tmp_path / "jobs.txt"
    path.write_text("just words\n")
    with pytest.raises(BadInputError, match="pass --input-format swf, sacct or csv$"):
        sniff_format(path, ("swf", "sacct", "csv"))
    result = cli("advise", "walltime", "--input", str(path))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {path}: cannot tell the format of the file from its "
                             "name or first line; pass --input-format swf, sacct or csv\n")

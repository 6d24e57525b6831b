"""``advise walltime --input``: jobs not run yet from sacct, the format told by the file
(issue 14, item 10). Ingest still skips those jobs, and says so."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest

from perfpredict.errors import BadInputError
from perfpredict.ingest.registry import sniff_format
from tests.conftest import nasa_jobs, shared_path

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
    ("jobs", "04/10/2024 09:00:00;E;17.pbs01;user=ann queue=batch start=1712739600\n", "pbs"),
    ("jobs", '"JOB_FINISH" "10.108" 1712739600 17 4242 33554434 64 1712736000 0 0\n', "lsf"),
    # cpu, mem and io (fields 37 to 39) written as Grid Engine writes them, with "%f"
    ("jobs", "# Version: 8.1.9\n#\n" + ":".join(
        ["all.q", "node7", "staff", "ann", "relax", "17", "sge", "0", "1712736000",
         "1712736060", "1712739600"] + ["0"] * 25 + ["0.000000"] * 3 + ["0"] * 6) + "\n",
     "sge"),
])
def test_the_format_is_told_by_name_then_content(tmp_path: Path, name: str, text: str,
                                                  expected: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert sniff_format(path) == expected


@pytest.mark.parametrize("fmt", ["pbs", "lsf", "sge", "uge"])
def test_real_pbs_lsf_and_grid_engine_logs_are_told_by_their_first_line(fmt: str) -> None:
    """Accounting logs have no telling name (``20240410``, ``lsb.acct``, ``accounting``);
    Univa's, with times in milliseconds, is read as Grid Engine's."""
    path = shared_path("logs", fmt, "xdmod-accounting-logs.log")
    assert sniff_format(path) == {"uge": "sge"}.get(fmt, fmt)


def test_an_unknown_format_asks_for_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """By the option that names it, with its values ("pass it by name" named neither)."""
    path = tmp_path / "jobs.txt"
    path.write_text("just words\n")
    with pytest.raises(BadInputError, match="pass --input-format swf, sacct or csv$"):
        sniff_format(path, ("swf", "sacct", "csv"))
    result = cli("advise", "walltime", "--input", str(path))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {path}: cannot tell the format of the file from its "
                             "name or first line; pass --input-format csv, sacct, "
                             "sacct-json, jobcomp, swf, pbs, lsf or sge\n")


def test_a_log_read_in_another_format_names_the_option_that_reads_it(  # type: ignore[no-untyped-def]
        cli) -> None:
    path = shared_path("logs", "sge", "xdmod-accounting-logs.log")
    result = cli("advise", "walltime", "--input", str(path), "--input-format", "pbs",
                 "--system", "hpc")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {path}:1: the file looks like Grid Engine (sge), not "
                             "pbs; read it with --input-format sge\n")


def _pending_json_job(job_id: int, user: str, app: str, nodes: int, limit_min: int) -> dict:  # type: ignore[type-arg]
    """A PENDING job as ``sacct --json`` (Slurm 23.11) writes it: nothing allocated, no
    start or end, the nodes asked for in ``allocation_nodes``."""
    return {"job_id": job_id, "name": app, "user": user, "account": "neuro",
            "partition": "cpu", "cluster": "demo-cluster",
            "state": {"current": ["PENDING"], "reason": "Priority"},
            "time": {"submission": 1717232400, "start": 0, "end": 0, "elapsed": 0,
                     "limit": {"set": True, "infinite": False, "number": limit_min}},
            "allocation_nodes": nodes, "tres": {"allocated": [], "requested": [
                {"type": "node", "name": "", "id": 4, "count": nodes}]},
            "steps": [], "exit_code": {"status": ["SUCCESS"], "return_code": 0}}


def test_pending_sacct_json_jobs_get_advice_and_are_skipped_by_ingest(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """``sacct --json --state PENDING`` was "no jobs in the file": its reader skipped
    jobs not finished even when they were the jobs to advise."""
    assert cli("ingest", "sacct", str(HISTORY)).exit_code == 0
    pending = tmp_path / "pending.json"
    pending.write_text(json.dumps({"meta": {}, "errors": [], "warnings": [], "jobs": [
        _pending_json_job(4190001, "alice", "relearn", 4, 120),
        _pending_json_job(4190002, "bob", "relearn", 16, 480)]}))
    result = cli("advise", "walltime", "--input", str(pending), "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["job_id"] for row in rows] == ["4190001", "4190002"]
    assert [row["requested_walltime_s"] for row in rows] == ["7200.0", "28800.0"]
    assert all(0 < float(row["walltime_s"]) <= float(row["requested_walltime_s"])
               for row in rows)
    result = cli("ingest", "sacct-json", str(pending))
    assert result.exit_code == 0
    assert "0 records, 0 stored" in result.stdout and "2 non-terminal jobs skipped" in result.stdout


def test_a_running_job_of_a_real_sacct_json_log_is_read_without_a_runtime() -> None:
    """Slurm 23.11's export of a RUNNING job: ingest skips it; read as a job to advise,
    it is kept, without the elapsed time sacct wrote for it (102,228,976 s)."""
    from perfpredict.ingest.records import IngestOptions, RunRecord
    from perfpredict.ingest.sacct_json import parse

    path = shared_path("logs", "slurm", "sarc-sacct-json-slurm_23_11_5.json")
    assert not [item for item in parse(path, IngestOptions()) if isinstance(item, RunRecord)]
    (job,) = parse(path, IngestOptions(require_runtime=False))
    assert isinstance(job, RunRecord)
    assert (job.state, job.runtime_s, job.requested_walltime_s) == ("RUNNING", None, 432000.0)


@pytest.mark.parametrize(("fmt", "jobs"), [
    # the PBS log writes job 6's E record twice; LSF and Grid Engine each one job twice
    ("pbs", ["6", "6464684", "2994", "2995", "7904", "10711", "10712", "3073070"]),
    ("lsf", ["404717"]),
    ("sge", ["22947"]),
])
def test_pbs_lsf_and_grid_engine_accounting_are_advised_once_per_job(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, fmt: str, jobs: list[str]) -> None:
    """A PBS, LSF or Grid Engine center backtests the advice on its own accounting log,
    its format told by its first line (before, --input-format took swf, sacct or csv
    only, and then had to name these); a job its log records twice is
    one job, as ingest stores it once. The history: the NASA iPSC log's first 400 jobs
    (1993), all ended before these logs' jobs were submitted."""
    history = nasa_jobs(tmp_path, 400)
    assert cli("ingest", "swf", str(history), "--system", "hpc").exit_code == 0
    path = shared_path("logs", fmt, "xdmod-accounting-logs.log")
    result = cli("advise", "walltime", "--input", str(path), "--system", "hpc",
                 "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["job_id"] for row in rows] == jobs
    assert all(float(row["walltime_s"]) > 0 for row in rows)
    assert f"{len(jobs)} job" in result.stderr


#: The one line ``ingest sacct -`` refuses a cut stream with, before its ingest-only
#: "nothing from this file was stored" (tests/ingest/test_streams.py).
CUT_SACCT_STREAM = (
    "Error: <stdin>:4: the stream ends inside this line, and sacct ends every line with a "
    "newline: the command writing it stopped early (killed, or its connection lost), so "
    "this line is cut and the jobs after it are missing; run it again (under set -o "
    "pipefail the pipeline fails with it), or give a saved file that only lacks its last "
    "newline by its name")


@pytest.mark.parametrize("compress", [False, True])
def test_a_sacct_stream_cut_inside_its_last_line_is_refused_as_ingest_refuses_it(  # type: ignore[no-untyped-def]
        sqlite_cli, compress: bool) -> None:
    """``sacct ... | perfpredict advise walltime --input - --input-format sacct`` whose
    sacct was killed inside the last job's JobName ('allocation' as 'alloca') was
    advised, the cut job with it, and the jobs never written missing without a word;
    'ingest sacct -' refused the same stream. Told by its content too; a saved file is
    read whole, newline or not, as ingest reads one."""
    dump = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    assert sqlite_cli("ingest", "sacct", str(dump)).exit_code == 0
    cut = dump.read_bytes()[:-5]
    assert cut.endswith(b"|alloca")
    for given in (("--input-format", "sacct"), ()):
        result = sqlite_cli("advise", "walltime", "--input", "-", *given,
                            input=gzip.compress(cut) if compress else cut)
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [CUT_SACCT_STREAM]
    ingested = sqlite_cli("ingest", "sacct", "-", input=cut)
    assert ingested.stderr.startswith(CUT_SACCT_STREAM + "; nothing from this file was stored")


def test_a_job_script_piped_in_is_refused_at_its_directive(sqlite_cli) -> None:  # type: ignore[no-untyped-def]
    """As the file is (tests/advise/test_walltime.py), and as 'ingest csv -' refuses it."""
    script = "#!/bin/bash\n#SBATCH --nodes=4\nsrun ./a,b\n"
    result = sqlite_cli("advise", "walltime", "--input", "-", input=script)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: <stdin>:2: the file is a batch job script ('#SBATCH "
                           "--nodes=4'), not a log of jobs"), line
    assert line.endswith("read that with --input-format csv"), line


@pytest.mark.parametrize("piped", [False, True])
def test_a_scheduler_log_whose_last_line_is_being_written_is_advised_up_to_it(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path, piped: bool) -> None:
    """A PBS log read while its server wrote job 3073070's E record was refused, with
    ingest's fix ("ingest the log itself (its last line is left for the next ingest...)"),
    which advises nothing. As ingest reads it, the jobs up to its last newline are
    advised, and a warning on stderr says the last line was not read; gzip copies of
    such a log stay refused, as ingest refuses them."""
    history = nasa_jobs(tmp_path, 400)
    assert sqlite_cli("ingest", "swf", str(history), "--system", "hpc").exit_code == 0
    whole = shared_path("logs", "pbs", "xdmod-accounting-logs.log").read_bytes()
    being_written = whole[:-40]
    log = tmp_path / "20201207"
    log.write_bytes(being_written)
    where, name = ("-", "<stdin>") if piped else (str(log), str(log))
    result = sqlite_cli("advise", "walltime", "--input", where, "--input-format", "pbs",
                        "--system", "hpc", "--format", "csv",
                        input=being_written if piped else None)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["job_id"] for row in rows] == ["6", "6464684", "2994", "2995", "7904",
                                               "10711", "10712"]
    assert result.stderr.strip().splitlines()[-1] == (
        f"Warning: {name}: the last line has no newline: not read, as the scheduler may "
        "still be writing it")
    compressed = tmp_path / "20201207.gz"
    compressed.write_bytes(gzip.compress(being_written))
    refused = sqlite_cli("advise", "walltime", "--input", str(compressed), "--input-format",
                         "pbs", "--system", "hpc")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"Error: {compressed}:9: the last line has no newline")


def test_a_scheduler_log_rotated_inside_a_record_is_advised_from_its_line_2(  # type: ignore[no-untyped-def]
        sqlite_cli, tmp_path: Path) -> None:
    """A PBS log that logrotate's copytruncate emptied while job 6's E record was
    written starts with the rest of it: refused as not a record, as ingest refused it;
    its jobs after it are advised, that line left with ingest's warning."""
    history = nasa_jobs(tmp_path, 400)
    assert sqlite_cli("ingest", "swf", str(history), "--system", "hpc").exit_code == 0
    text = shared_path("logs", "pbs", "xdmod-accounting-logs.log").read_text()
    log = tmp_path / "accounting"
    log.write_text(text[text.index("\n") // 2:])
    result = sqlite_cli("advise", "walltime", "--input", str(log), "--input-format", "pbs",
                        "--system", "hpc", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["job_id"] for row in rows] == ["6", "6464684", "2994", "2995", "7904",
                                               "10711", "10712", "3073070"]
    assert result.stderr.strip().splitlines()[-1].startswith(
        f"Warning: {log}: line 1 is not a record of PBS / Torque / PBS Pro accounting logs, "
        "where line 2 and those after it are: it is the rest of a record the rotated file "
        "holds")

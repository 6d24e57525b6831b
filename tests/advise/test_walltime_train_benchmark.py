"""Issue 14 item 7: the walltime advisor trains on 1M jobs within 60 s and 2 GiB."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.bench
def test_advisor_trains_on_a_million_jobs_within_a_minute_and_2_gib(tmp_path: Path) -> None:
    from bench.walltime_train_benchmark import LIMIT_BYTES, LIMIT_S, measure, prepare

    result = measure(prepare(tmp_path, 1_000_000), 1_000_000)
    assert result.peak_rss_bytes <= LIMIT_BYTES, result.line()
    assert result.wall_s <= LIMIT_S, result.line()

"""Tests on ../shared skip on a user's fresh clone, and fail where the data must be (CI)."""

from __future__ import annotations

import pytest

from tests.conftest import REQUIRE_SHARED_ENV, shared_path


def test_a_missing_shared_path_skips_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SHARED_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="is not here"):
        shared_path("no-such-data-set")


def test_a_missing_shared_path_fails_where_shared_is_required(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SHARED_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_SHARED_ENV}=1 says"):
        shared_path("no-such-data-set")

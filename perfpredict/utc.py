"""Moments as a user reads them in a message: minutes, in UTC, whatever the log's zone."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_text(epoch_s: float) -> str:
    """``2026-11-28 04:46 UTC`` for an epoch in seconds."""
    return datetime.fromtimestamp(epoch_s, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def iso_utc(epoch_s: float | None) -> str | None:
    """``2026-11-28T04:46:07Z`` for an epoch in seconds (None for None): the time a
    script reads back, in an export or a listing."""
    if epoch_s is None:
        return None
    return datetime.fromtimestamp(epoch_s, tz=timezone.utc).isoformat().replace("+00:00", "Z")

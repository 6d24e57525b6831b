"""Moments as a user reads them in a message: minutes, in UTC, whatever the log's zone."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_text(epoch_s: float) -> str:
    """``2026-11-28 04:46 UTC`` for an epoch in seconds."""
    return datetime.fromtimestamp(epoch_s, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

"""Run and job ids that sort by time: YYYYMMDD-HHMMSS-<6 hex> (files.md §7)."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

ID_RE = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")


def new_id(now: datetime | None = None) -> str:
    """A new time-sortable id."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def timestamp(now: datetime | None = None) -> str:
    """Compact UTC timestamp for backup suffixes: YYYYMMDDHHMMSS."""
    return f"{(now or datetime.now(UTC)):%Y%m%d%H%M%S}"


def utc_now_iso() -> str:
    """ISO-8601 UTC time with a Z suffix, second precision."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")

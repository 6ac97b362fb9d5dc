"""Library side of `agentopt cache stats|clear`: read and prune the cache file."""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import ConfigDict, Field

from agentopt.core.errors import InputError
from agentopt.core.lazy_model import LazyModel
from agentopt.core.paths import STATE_DIR
from agentopt.models.cache_sql import connect

_AGE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class ModelCacheStats(LazyModel):
    """Cache entries of one provider/model."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    """Provider type (openai, azure, local, ...)."""
    model: str
    kind: str
    """"chat" or "embed"."""
    entries: int
    hits: int
    """Times these entries answered a call (flushed when a run ends)."""
    payload_bytes: int


class CacheStats(LazyModel):
    """What `agentopt cache stats` shows."""

    model_config = ConfigDict(extra="forbid")

    path: str
    exists: bool
    entries: int = 0
    size_bytes: int = 0
    """The database file plus its WAL and shared-memory files."""
    hits: int = 0
    """Hits on the entries now in the cache: the sum of `by_model` (one tally, the rows)."""
    misses: int = 0
    """Calls the cache could not answer, since the file was created or last cleared."""
    lifetime_hits: int = 0
    """Hits since the file was created or last cleared, on entries since removed (`clear
    --older-than`) or rewritten too: never less than `hits`."""
    oldest: datetime | None = None
    newest: datetime | None = None
    by_model: list[ModelCacheStats] = Field(default_factory=list)


def project_cache_file(project_dir: Path) -> Path:
    """`.agentopt/cache.sqlite` of a project, without creating anything."""
    return Path(project_dir) / STATE_DIR / "cache.sqlite"


def parse_age(value: str | float | timedelta) -> timedelta:
    """`--older-than` values: a timedelta, seconds, or "90s" / "30m" / "12h" / "7d" / "2w"."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float):
        return timedelta(seconds=float(value))
    match = _AGE_RE.match(value)
    if not match:
        raise InputError.at(
            "", "--older-than", f"expected an age like 30m, 12h, 7d or 2w, found {value!r}"
        )
    return timedelta(seconds=float(match.group(1)) * _AGE_UNITS[match.group(2).lower()])


def _disk_size(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        f = path.with_name(path.name + suffix)
        if f.exists():
            total += f.stat().st_size
    return total


def _ts(value: float | None) -> datetime | None:
    return datetime.fromtimestamp(value, UTC) if value is not None else None


def cache_stats(project_dir: Path) -> CacheStats:
    """Entries, size on disk, hits/misses and a per-model breakdown of a project's cache."""
    path = project_cache_file(project_dir)
    if not path.exists():
        return CacheStats(path=str(path), exists=False)
    conn = connect(path)
    try:
        entries, oldest, newest = conn.execute(
            "SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM entries"
        ).fetchone()
        counters = dict(conn.execute("SELECT name, value FROM counters").fetchall())
        rows = conn.execute(
            "SELECT provider, model, kind, COUNT(*), SUM(hits), SUM(LENGTH(payload)) "
            "FROM entries GROUP BY provider, model, kind ORDER BY COUNT(*) DESC, provider, model"
        ).fetchall()
        units, unit_bytes = conn.execute(
            "SELECT COUNT(*), SUM(LENGTH(payload)) FROM units"
        ).fetchone()
    finally:
        conn.close()
    return CacheStats(
        path=str(path),
        exists=True,
        entries=int(entries),
        size_bytes=_disk_size(path),
        hits=sum(int(r[4] or 0) for r in rows),
        misses=int(counters.get("misses", 0)),
        lifetime_hits=max(int(counters.get("hits", 0)), sum(int(r[4] or 0) for r in rows)),
        oldest=_ts(oldest),
        newest=_ts(newest),
        by_model=[
            ModelCacheStats(
                provider=p,
                model=m,
                kind=k,
                entries=int(n),
                hits=int(h or 0),
                payload_bytes=int(b or 0),
            )
            for p, m, k, n, h, b in rows
        ]
        + (
            # Units a rerun may replay (workflows/run/unit_replay.py): not model answers.
            [
                ModelCacheStats(
                    provider="agentopt",
                    model="eval run units",
                    kind="unit",
                    entries=int(units),
                    hits=0,
                    payload_bytes=int(unit_bytes or 0),
                )
            ]
            if units
            else []
        ),
    )


def cache_clear(project_dir: Path, older_than: str | float | timedelta | None = None) -> int:
    """Delete cache entries (all, or those created more than `older_than` ago); returns how many.

    Clearing all also forgets the servers' remembered capabilities (structured-output mode,
    tool calling), so the next call probes again.

    A damaged cache file is removed as a whole (its entry count is then unknown: returns 0).
    """
    path = project_cache_file(project_dir)
    if not path.exists():
        return 0
    age = parse_age(older_than) if older_than is not None else None
    try:
        conn = connect(path)
    except sqlite3.DatabaseError:
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        return 0
    try:
        conn.execute("BEGIN IMMEDIATE")
        if age is None:
            removed = conn.execute("DELETE FROM entries").rowcount
            conn.execute("DELETE FROM units")
            conn.execute("DELETE FROM counters")
            # What servers were found to accept is re-probed after a full clear (a server
            # upgraded since then may accept more).
            conn.execute("DELETE FROM capabilities")
        else:
            cutoff = time.time() - age.total_seconds()
            removed = conn.execute("DELETE FROM entries WHERE created_at < ?", (cutoff,)).rowcount
            conn.execute("DELETE FROM units WHERE created_at < ?", (cutoff,))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    finally:
        conn.close()
    return int(removed)

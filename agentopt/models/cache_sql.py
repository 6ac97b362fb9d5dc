"""The cache file's tables and the statements that write them (`cache.py` reads and writes
through these; `cache_admin.py` opens the file with `connect`).

`entries` holds model answers (chat and embeddings), `capabilities` what servers were found to
accept, `units` the journal lines of units a rerun may replay (`workflows/run/unit_replay.py`):
kept apart from the answers so that the keys the cache holds in memory (`cache_index`) and
`cache stats`' hits stay those of model calls.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic_core import PydanticSerializationError, to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    last_hit_at REAL
);
CREATE INDEX IF NOT EXISTS entries_created ON entries(created_at);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS capabilities (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    feature TEXT NOT NULL,
    value TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS units (
    key TEXT PRIMARY KEY,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
BUSY_TIMEOUT_S = 30.0


def payload_json(payload: dict[str, Any]) -> str:
    """A payload as stored: any JSON `json.loads` reads back (only keys need the canonical
    form), by pydantic-core's serialiser (a third of `json.dumps`'s time). What it refuses is
    a lone surrogate (JSON may spell one, `"\\ud800"`, so a server's answer may hold one):
    escaped as JSON spells it, since SQLite takes no text that is not UTF-8."""
    try:
        return to_json(payload, inf_nan_mode="constants").decode("utf-8")
    except PydanticSerializationError:
        return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) a cache database in WAL mode with a busy timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in filter(None, (s.strip() for s in SCHEMA.split(";"))):
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        raise
    return conn


def open_reader(path: Path) -> sqlite3.Connection | None:
    """A connection for the event loop's reads, or None while the file has no table yet:
    the writer thread is creating it, and there is nothing to read.

    It takes no write lock on a file that has every table: creating the schema in a write
    transaction waited for the writer thread's batch in progress (2.4-9 ms on the event
    loop's thread at the first model calls of a bench run). Nor does it switch a new file to
    WAL while the writer does: of two connections doing so at once, SQLite answered one
    "database is locked" at once, busy timeout or not (10 of 500 tries), and that turned the
    cache off for the whole run. A file of an older version, with some of the tables, is
    completed as `connect` does."""
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        names = _names(conn)
    except BaseException:
        conn.close()
        raise
    if names >= _SCHEMA_NAMES:
        return conn
    conn.close()
    return connect(path) if names else None


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting out another connection switching the same new file: SQLite
    answers that one "database is locked" at once, without calling the busy handler."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _names(conn: sqlite3.Connection) -> set[str]:
    """The tables and indexes the file has (a read: no write lock)."""
    return {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}


_SCHEMA_NAMES = set(re.findall(r"IF NOT EXISTS (\w+)", SCHEMA))
"""The tables and indexes `SCHEMA` creates."""


Row = tuple[str, str, str, str, dict[str, Any]]
"""(key, kind, provider, model, payload)."""
Capability = tuple[str, str, str, str, str, str]
"""(provider, base_url, model, feature, value, reason)."""


class Entry(NamedTuple):
    """A row as the writer thread inserts it: the payload already JSON, so that thread runs
    almost no Python beside the event loop's, whose process is CPU-bound. With no cache
    writes at all, an optimize run of the bench's `tool-descriptions` world took 6-9% less
    time (three rounds of ten seeds), far more than the ~3 ms the ~300 payloads take to
    serialise. Serialising here instead was within the noise (0.94-1.03x in two A/Bs)."""

    key: str
    kind: str
    provider: str
    model: str
    payload: str
    created_at: float


class UnitRow(NamedTuple):
    """A unit's kept journal line, as the writer thread inserts it."""

    key: str
    payload: str
    created_at: float


ENTRY_COLUMNS = ("key", "kind", "provider", "model", "payload", "created_at")
CAPABILITY_COLUMNS = (
    "key", "provider", "base_url", "model", "feature", "value", "reason", "created_at",
)  # fmt: skip
UNIT_COLUMNS = ("key", "payload", "created_at")
ROWS_PER_INSERT = 64
"""Most rows one INSERT carries (8 parameters at most each: under SQLite's oldest limit of 999);
a power of two, as every chunk is (see `inserts`)."""


def inserts(
    table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[tuple[str, list[Any]]]:
    """INSERT OR REPLACE statements carrying 64, 32, ... or 1 rows each.

    One statement per chunk rather than `executemany`'s one step per row: each step lets go
    of the GIL and takes it back, and the writer thread waiting to take it back stalls the
    event loop's thread, which this process keeps busy. In the bench's `tool-descriptions`
    world (two rounds of ten seeds, load 1.1) the run's CPU per model call went from 1.39 to
    1.28 ms and its wall time by 9%; without any cache writes it went 11% down.

    Chunks are powers of two, so a table has seven statement texts whatever the batch sizes.
    Each distinct text is a prepared statement `sqlite3` keeps (128 per connection): chunks of
    any size from 1 to 100 (two tables, 30,000 rows each in batches of random size, one
    connection) left 7.7 MB more resident, where these leave 2.5 MB (SQLite's page cache is
    2 MB), and took 0.74-0.78 s of CPU against 0.66 s. A 100,000-task `eval run`'s peak grew
    with the number of distinct sizes its batches happened to have.
    """
    head = f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES "
    marks = "(" + ",".join("?" * len(columns)) + ")"
    out: list[tuple[str, list[Any]]] = []
    start = 0
    while start < len(rows):
        size = min(ROWS_PER_INSERT, 1 << ((len(rows) - start).bit_length() - 1))
        chunk = rows[start : start + size]
        out.append((head + ",".join([marks] * size), [v for row in chunk for v in row]))
        start += size
    return out


KEYS_PER_SELECT = 512


def key_chunks(keys: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """The `IN (...)` placeholders and parameters of each chunk of `keys`, up to 512 a chunk,
    each padded to a power of two with its last key (a key named twice is one row): a lookup
    has ten statement texts whatever the number of keys, for the reason `inserts` has seven."""
    for start in range(0, len(keys), KEYS_PER_SELECT):
        chunk = list(keys[start : start + KEYS_PER_SELECT])
        size = 1 << (len(chunk) - 1).bit_length()
        chunk += [chunk[-1]] * (size - len(chunk))
        yield ",".join("?" * size), chunk

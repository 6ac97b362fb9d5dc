"""The response cache: SQLite in WAL mode at `.agentopt/cache.sqlite` (models.md §3).

Keys are SHA-256 digests of the canonical JSON (sorted keys, no whitespace) of the fields that
define an answer — provider type, base URL, model, messages, tools, tool_choice, temperature,
top_p, seed, max tokens, response_format, stop, and the repeat index — never timeouts or
credentials (style.md rule 8). Values are JSON, never pickle.

Concurrency: reads run on the caller's thread (the event loop) on their own connection — a WAL
reader never waits for a writer, and a primary-key lookup costs less than the thread hop it
replaces — and a key that the file's keys, kept in memory, rule out reads nothing
(`cache_index`). Writes are queued and committed in batches by one writer thread on a second
connection, every batch one multi-row INSERT (a short `BEGIN IMMEDIATE` transaction when it
takes more: `cache_sql.inserts`, `core.batch_writer`), and a row waiting for its batch is
already served to reads. A 30 s busy timeout lets several processes share the file. Nothing
here binds the cache to one loop or process: the writer thread starts wherever the cache is
used (a Ray coordinator included). A cache that cannot be opened or read is disabled for the
run with one warning: a cache problem never fails a run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentopt.core.batch_writer import LINGER_S, BatchWriter
from agentopt.core.paths import cache_path
from agentopt.core.redaction import redact
from agentopt.models.cache_index import KeyIndex
from agentopt.models.cache_key import canonical_json
from agentopt.models.cache_sql import (
    CAPABILITY_COLUMNS,
    ENTRY_COLUMNS,
    UNIT_COLUMNS,
    Capability,
    Entry,
    Row,
    UnitRow,
    connect,
    inserts,
    key_chunks,
    open_reader,
    payload_json,
)

log = logging.getLogger("agentopt.models")

Head = tuple[str, str, str, str]
"""A row's key, kind, provider and model (a `Row` less its payload)."""


class CacheSurface:
    """The cache surface `CallLayer` uses: one-key `get` and `put` over the batch reads and
    writes a cache implements (this file's `ResponseCache`, and the cluster's stand-in that
    the coordinator serves)."""

    async def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    async def put_many(self, rows: list[Row]) -> None:
        raise NotImplementedError

    async def get(self, key: str) -> dict[str, Any] | None:
        return (await self.get_many([key])).get(key)

    async def put(
        self,
        key: str,
        *,
        kind: str,
        provider: str,
        model: str,
        payload: dict[str, Any] | None = None,
        text: str | None = None,
    ) -> None:
        """One row: its `payload`, or its `text` (the payload serialised), or both."""
        if payload is None and text is None:
            raise ValueError("a cache row needs its payload or its text")
        await self._put_row((key, kind, provider, model), payload, text)

    async def _put_row(self, head: Head, payload: dict[str, Any] | None, text: str | None) -> None:
        """One row stored through `put_many`; a cache that can use `text` overrides this."""
        data = payload if payload is not None else json.loads(text or "null")
        await self.put_many([(*head, data)])


class ResponseCache(CacheSurface):
    """Async-friendly access to the cache file of one project."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._reader: sqlite3.Connection | None = None
        self._writer_conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._disabled = False
        self._pending_hits: Counter[str] = Counter()
        self._flushed_misses = 0
        self._unwritten: dict[str, dict[str, Any] | str] = {}
        """Rows queued for the writer thread and not yet committed (served to reads): the
        payload, or its text as stored."""
        self._writer: BatchWriter[Entry | UnitRow | Capability] | None = None
        self._index = KeyIndex()

    @classmethod
    def for_project(cls, project_dir: Path) -> ResponseCache:
        return cls(cache_path(project_dir))

    @property
    def disabled(self) -> bool:
        return self._disabled

    async def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Payloads of the keys that are cached (missing keys are absent from the result)."""
        if self._disabled or not keys:
            return {}
        found: dict[str, dict[str, Any]] = {}
        for key in keys:
            queued = self._unwritten.get(key)  # the writer thread may drop it meanwhile
            if queued is not None:
                found[key] = json.loads(queued) if isinstance(queued, str) else queued
        rest = [k for k in keys if k not in found]
        if rest:
            found.update(self._read(rest))
        self.hits += len(found)
        self.misses += (len(keys) if len(keys) == 1 else len(set(keys))) - len(found)
        if found:
            self._pending_hits.update(found.keys())
        return found

    async def present(self, keys: list[str]) -> set[str]:
        """Which of `keys` are cached, their answers not read (a replayed unit does not use
        them again); each counts as a hit of its row, as a read would. The key index answers
        when it holds the whole file (a cached rerun of 10,000 units spent 31 ms of SQL
        here): a row another process deletes during the run is then still counted, the race
        any lookup has with a delete that follows it."""
        if self._disabled or not keys:
            return set()
        found = {key for key in keys if key in self._unwritten}
        rest = [key for key in keys if key not in found]
        if rest:
            found.update(self._read(rest, payloads=False))
        self.hits += len(found)
        self._pending_hits.update(found)
        return found

    async def put_many(self, rows: list[Row]) -> None:
        """Store `(key, kind, provider, model, payload)` rows (committed by the writer thread,
        readable at once)."""
        if self._disabled or not rows:
            return
        writer = self._writer_queue()
        now = time.time()
        for key, kind, provider, model, payload in rows:
            self._unwritten[key] = payload
            self._index.add(key)
            writer.submit(Entry(key, kind, provider, model, payload_json(payload), now))

    async def _put_row(self, head: Head, payload: dict[str, Any] | None, text: str | None) -> None:
        """`text`, when the caller has it, is the payload as stored (the call layer writes
        a response once, to scan it for secrets and to store it, and has no dump of it: a
        read before the writer commits parses the text)."""
        if text is None:
            assert payload is not None
            await self.put_many([(*head, payload)])
            return
        if self._disabled:
            return
        writer = self._writer_queue()
        key, kind, provider, model = head
        self._unwritten[key] = payload if payload is not None else text
        self._index.add(key)
        writer.submit(Entry(key, kind, provider, model, text, time.time()))

    async def units(self, keys: list[str]) -> dict[str, str]:
        """What is kept of the units of `keys` (`unit_replay`: where each one's journal line
        is), as stored, by key: read from the file alone (a unit is kept after it is played and
        looked up before, never both in one run), never through the keys held in memory."""
        if self._disabled or not keys or not self.path.exists():
            return {}
        if self._reader is None and not self._open_reader():
            return {}
        reader = self._reader
        assert reader is not None

        def run() -> dict[str, str]:
            out: dict[str, str] = {}
            for marks, chunk in key_chunks(keys):
                sql = f"SELECT key, payload FROM units WHERE key IN ({marks})"
                out.update(reader.execute(sql, chunk).fetchall())
            return out

        return self._guard("read", run) or {}

    def keep_unit(self, key: str, payload: str) -> None:
        """Keep what `unit_replay` needs of a unit (committed with the writer's next batch)."""
        if not self._disabled:
            self._writer_queue().submit(UnitRow(key, payload, time.time()))

    async def get_capabilities(self, provider: str, base_url: str, model: str) -> dict[str, str]:
        """What a server was found to accept (feature → value), e.g. structured_output."""
        if self._disabled or (self._reader is None and not self._open_reader()):
            return {}
        reader = self._reader
        assert reader is not None
        base_url = redact(base_url)  # stored masked: a `?sig=` in it is a secret (put_capability)
        rows = self._guard(
            "read",
            lambda: reader.execute(
                "SELECT feature, value FROM capabilities"
                " WHERE provider = ? AND base_url = ? AND model = ?",
                (provider, base_url, model),
            ).fetchall(),
        )
        return {str(f): str(v) for f, v in rows or []}

    async def put_capability(
        self, provider: str, base_url: str, model: str, feature: str, value: str, reason: str
    ) -> None:
        """Remember one finding (the probe is then paid once per cache file, not per call);
        committed by the writer thread with the next batch of rows."""
        if self._disabled:
            return
        row = (provider, redact(base_url), model, feature, value, redact(reason))
        self._writer_queue().submit(row)

    async def aclose(self) -> None:
        """Write what is queued, flush hit counters and close the connections."""
        await asyncio.to_thread(self._close)

    # -- reads, on the caller's thread --------------------------------------------------------
    def _read(self, keys: list[str], *, payloads: bool = True) -> dict[str, dict[str, Any]]:
        """The rows of `keys` the file holds: their payloads, or (`payloads=False`) only
        that they are there (an empty dict each)."""
        column = "payload" if payloads else "''"

        def run(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
            out: dict[str, dict[str, Any]] = {}
            for marks, chunk in key_chunks(keys):
                rows = conn.execute(
                    f"SELECT key, {column} FROM entries WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, payload in rows:
                    try:
                        out[key] = json.loads(payload) if payloads else {}
                    except ValueError:
                        continue
            return out

        index = self._index
        if not index.loaded and not self._open_reader():
            return {}
        if index.due() and self.path.exists() and (self._reader or self._open_reader()):
            reader = self._reader
            assert reader is not None
            self._guard("read", lambda: index.refresh(reader))
        keys = [key for key in keys if index.may_hold(key)]
        if not payloads and index.whole:
            return {key: {} for key in keys}
        if not keys or self._disabled or (self._reader is None and not self._open_reader()):
            return {}
        reader = self._reader
        assert reader is not None
        return self._guard("read", lambda: run(reader)) or {}

    def _open_reader(self) -> bool:
        """Open the reader and load the key index; a file that does not exist yet is not
        created here but by the writer thread with its first batch (its creation took 7 ms
        of fsyncs on the loop's thread at the start of a run): until then there is nothing
        to read, and the index is empty."""
        if not self.path.exists():
            if not self._index.loaded:
                self._index.load_empty()
            return False
        result = self._guard("open", lambda: open_reader(self.path))
        if result is None and not self._disabled:  # the writer is creating the file
            if not self._index.loaded:
                self._index.load_empty()
            return False
        if result is not None and not self._index.loaded:
            self._guard("read", lambda: self._index.load(result))
            if self._disabled:  # the index could not be read
                result.close()
                result = None
        self._reader = result
        return result is not None

    # -- writes, on the writer thread --------------------------------------------------------
    def _writer_queue(self) -> BatchWriter[Entry | UnitRow | Capability]:
        if self._writer is None:
            self._writer = BatchWriter(
                self._write_batch, name="agentopt-cache-writer", linger=LINGER_S
            )
        return self._writer

    def _writer_connection(self) -> sqlite3.Connection:
        if self._writer_conn is None:
            self._writer_conn = connect(self.path)
        return self._writer_conn

    def _write_batch(self, items: Sequence[Entry | UnitRow | Capability]) -> None:
        now = time.time()
        rows = [item for item in items if isinstance(item, Entry)]
        units = [item for item in items if isinstance(item, UnitRow)]
        capabilities = [
            (hashlib.sha256(canonical_json(list(c[:4])).encode()).hexdigest(), *c, now)
            for c in items
            if not isinstance(c, (Entry, UnitRow))
        ]
        statements = [
            *inserts("entries", ENTRY_COLUMNS, rows),
            *inserts("units", UNIT_COLUMNS, units),
            *inserts("capabilities", CAPABILITY_COLUMNS, capabilities),
        ]

        def run() -> None:
            conn = self._writer_connection()
            if len(statements) == 1:  # one statement is its own transaction
                conn.execute(*statements[0])
            else:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for statement in statements:
                        conn.execute(*statement)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            self.writes += len(rows)

        try:
            if statements:
                self._guard("write", run)
        finally:
            with self._lock:
                for row in rows:
                    self._unwritten.pop(row.key, None)

    def _guard(self, what: str, fn: Any) -> Any:
        if self._disabled:
            return None
        try:
            return fn()
        except sqlite3.Error as exc:
            with self._lock:
                first = not self._disabled
                self._disabled = True
            if first:
                log.warning(
                    "model cache at %s disabled for this run (%s failed: %s); "
                    "run `agentopt cache clear` if the file is damaged",
                    self.path,
                    what,
                    exc,
                )
            return None

    def _close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        hits, self._pending_hits = self._pending_hits, Counter()
        misses, self._flushed_misses = self.misses - self._flushed_misses, self.misses
        if hits or misses:
            now = time.time()

            def run() -> None:
                conn = self._writer_connection()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # In key order: the updates walk the key index from one end to the
                    # other (a cached rerun of 10,000 units: 50 ms, 66 in the order of use).
                    conn.executemany(
                        "UPDATE entries SET hits = hits + ?, last_hit_at = ? WHERE key = ?",
                        [(hits[key], now, key) for key in sorted(hits)],
                    )
                    for name, value in (("hits", sum(hits.values())), ("misses", misses)):
                        conn.execute(
                            "INSERT INTO counters (name, value) VALUES (?, ?) "
                            "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                            (name, value),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise

            self._guard("flush", run)
        for conn in (self._reader, self._writer_conn):
            if conn is not None:
                conn.close()
        self._reader = self._writer_conn = None

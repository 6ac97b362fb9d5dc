"""The keys a cache file holds, in memory: a lookup of a key the file does not hold costs no SQL.

Most lookups of a run miss (every new request is a new key), and a miss read on the event
loop's thread cost 55 µs of CPU in place (a WAL reader's page cache starts over after every
commit of the writer thread), 8-19 µs alone. The index keeps each key's hash (this
process's `hash`, 8 bytes): a key it lacks is a miss without SQL; one it has is read as before
(a hash two keys share, or a row another process deleted, is then an ordinary miss).

Rows other processes add while a run goes on are taken in at most every `REFRESH_S` (the
rows after the highest rowid seen), so such a row may be missed for that long: a wider form
of the race every shared cache has (a row committed just after a lookup is missed too), and
what it costs is one model call, never a wrong answer. A file of more than `INDEX_MAX`
entries gets no index (loading it would cost more than it saves): lookups read SQL as before.
"""

from __future__ import annotations

import sqlite3
import time
from array import array
from collections.abc import Iterable

INDEX_MAX = 100_000
"""Entries up to which a cache file's keys are kept in memory (about 5 MB at most)."""
REFRESH_S = 1.0
"""Seconds between two looks for rows other processes added."""


class KeyIndex:
    """Hashes of the keys in the file and of every key this process stored (those from the
    start: a row queued before the index was loaded and committed since is in neither the
    writer's queue nor, maybe, the rows the load read)."""

    def __init__(self) -> None:
        self._table = _HashTable()
        self._loaded = False
        self._whole = True
        """False when the file held too many entries to load: every key is looked up."""
        self._last_rowid = 0
        self._checked = 0.0

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def whole(self) -> bool:
        """Every key of the file (as of the last refresh) is in the index."""
        return self._whole

    def load(self, conn: sqlite3.Connection) -> None:
        """Take in the keys of the file behind `conn`, unless it holds more than
        `INDEX_MAX` entries (its highest rowid bounds their number)."""
        self._loaded = True
        self._checked = time.monotonic()
        (top,) = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM entries").fetchone()
        if int(top) > INDEX_MAX:
            self._whole = False
            return
        rows = conn.execute("SELECT rowid, key FROM entries").fetchall()
        self._table.reserve(len(rows))
        self._take(rows)

    def load_empty(self) -> None:
        """The index of a file that does not exist yet: no keys but this process's."""
        self._loaded = True
        self._checked = time.monotonic()

    def due(self) -> bool:
        """Whether a refresh is due (`REFRESH_S` since the last look)."""
        return self._whole and time.monotonic() - self._checked >= REFRESH_S

    def add(self, key: str) -> None:
        self._table.add(hash(key))

    def may_hold(self, key: str) -> bool:
        """False only when the file cannot hold `key` (as of the last refresh)."""
        if not self._whole:
            return True
        return self._table.holds(hash(key))

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Take in the rows added since the last look, at most every `REFRESH_S`."""
        if not self.due():
            return
        self._checked = time.monotonic()
        self._take(
            conn.execute(
                "SELECT rowid, key FROM entries WHERE rowid > ?", (self._last_rowid,)
            ).fetchall()
        )

    def _take(self, rows: list[tuple[int, str]]) -> None:
        if rows:
            self._last_rowid = max(self._last_rowid, max(int(rowid) for rowid, _ in rows))
            self._table.add_many(hash(key) for _, key in rows)


class _HashTable:
    """A set of 64-bit hashes in one array (open addressing, linear probing, at most half
    full): 16 bytes a key where a `set` of ints took ~90 (the index of a 100,000-row cache
    file: 1.6 MB, not 9). 0 marks an empty slot; the hash 0 is kept aside."""

    def __init__(self) -> None:
        self._slots = array("q", bytes(8 * 1024))
        self._used = 0
        self._zero = False

    def add(self, h: int) -> None:
        if h == 0:
            self._zero = True
            return
        slots = self._slots
        mask = len(slots) - 1
        i = h & mask
        while slots[i]:
            if slots[i] == h:
                return
            i = (i + 1) & mask
        slots[i] = h
        self._used += 1
        if 2 * self._used > len(slots):
            self._grow()

    def add_many(self, hashes: Iterable[int]) -> None:
        """`add` of each, in one call: after `reserve`, a file's 10,000 keys in ~2 ms, where
        `add` one at a time, doubling as it went, took ~11."""
        slots = self._slots
        mask = len(slots) - 1
        for h in hashes:
            if h == 0:
                self._zero = True
                continue
            i = h & mask
            while slots[i]:
                if slots[i] == h:
                    break
                i = (i + 1) & mask
            else:
                slots[i] = h
                self._used += 1
                if 2 * self._used > len(slots):
                    self._grow()
                    slots = self._slots
                    mask = len(slots) - 1

    def holds(self, h: int) -> bool:
        if h == 0:
            return self._zero
        slots = self._slots
        mask = len(slots) - 1
        i = h & mask
        while slots[i]:
            if slots[i] == h:
                return True
            i = (i + 1) & mask
        return False

    def reserve(self, n: int) -> None:
        """Room for `n` more hashes, made at once (a load knows how many it brings: one
        rehash, not one at each doubling)."""
        size = len(self._slots)
        while 2 * (self._used + n) > size:
            size *= 2
        if size != len(self._slots):
            self._rehash(size)

    def _grow(self) -> None:
        self._rehash(2 * len(self._slots))

    def _rehash(self, size: int) -> None:
        old = self._slots
        self._slots = array("q", bytes(8 * size))
        self._used = 0
        self.add_many(h for h in old if h)

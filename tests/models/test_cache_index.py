"""The in-memory key index of the response cache: a miss costs no SQL, and rows other
processes add are still found (after at most `REFRESH_S`)."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import agentopt.models.cache_index as cache_index
from agentopt.models.cache import ResponseCache
from agentopt.models.cache_sql import connect


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def add_row(db: Path, k: str, payload: str = '{"from": "elsewhere"}') -> None:
    """A row committed by another connection (as another process's writer would)."""
    conn = connect(db)
    try:
        conn.execute(
            "INSERT INTO entries (key, kind, provider, model, payload, created_at)"
            " VALUES (?, 'chat', 'p', 'm', ?, 0)",
            (k, payload),
        )
    finally:
        conn.close()


def selects(cache: ResponseCache) -> list[str]:
    """The statements the cache's reader runs from now on."""
    seen: list[str] = []
    assert cache._reader is not None
    cache._reader.set_trace_callback(seen.append)
    return seen


def test_a_miss_runs_no_sql_and_a_row_added_elsewhere_is_found_after_the_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "c.sqlite"
    add_row(db, key("old"), '{"v": "old"}')

    monkeypatch.setattr(cache_index, "REFRESH_S", 3600.0)  # no refresh until the test says

    async def main() -> tuple[Any, ...]:
        cache = ResponseCache(db)
        first = await cache.get(key("old"))  # opens the reader, loads the index
        seen = selects(cache)
        missing = await cache.get(key("never stored"))
        no_sql = list(seen)
        add_row(db, key("new"))
        before_refresh = await cache.get(key("new"))  # not seen before a refresh
        monkeypatch.setattr(cache_index, "REFRESH_S", 0.0)
        after_refresh = await cache.get(key("new"))
        await cache.aclose()
        return first, missing, no_sql, before_refresh, after_refresh

    first, missing, no_sql, before_refresh, after_refresh = asyncio.run(main())
    assert first == {"v": "old"}
    assert missing is None and no_sql == []
    assert before_refresh is None
    assert after_refresh == {"from": "elsewhere"}


def test_a_row_queued_before_the_index_loaded_is_served_after_it_commits(
    tmp_path: Path,
) -> None:
    """Stored before any read (the reader and its index come later), committed meanwhile:
    in neither the writer's queue nor, maybe, the rows the index loaded."""

    async def main() -> tuple[Any, Any]:
        cache = ResponseCache(tmp_path / "c.sqlite")
        await cache.put(key("mine"), kind="chat", provider="p", model="m", payload={"v": 1})
        assert cache._writer is not None
        cache._writer.flush()  # committed, gone from the queue
        assert not cache._unwritten
        mine = await cache.get(key("mine"))
        cache2 = ResponseCache(tmp_path / "c.sqlite")  # another run, later
        again = await cache2.get(key("mine"))
        await cache.aclose()
        await cache2.aclose()
        return mine, again

    assert asyncio.run(main()) == ({"v": 1}, {"v": 1})


def test_a_file_too_large_to_index_is_read_with_sql_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_index, "INDEX_MAX", 3)
    db = tmp_path / "c.sqlite"
    for i in range(5):
        add_row(db, key(f"row {i}"))

    async def main() -> tuple[Any, list[str]]:
        cache = ResponseCache(db)
        await cache.get(key("row 0"))
        seen = selects(cache)
        add_row(db, key("late"))
        late = await cache.get(key("late"))  # no index: found at once
        await cache.get(key("never stored"))
        await cache.aclose()
        return late, seen

    late, seen = asyncio.run(main())
    assert late == {"from": "elsewhere"}
    assert sum(1 for s in seen if s.startswith("SELECT key, payload")) == 2


def test_an_index_that_cannot_be_read_disables_the_cache_without_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def damaged(self: cache_index.KeyIndex, conn: sqlite3.Connection) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(cache_index.KeyIndex, "load", damaged)
    add_row(tmp_path / "c.sqlite", key("present"))

    async def main() -> tuple[Any, bool, Any]:
        cache = ResponseCache(tmp_path / "c.sqlite")
        got = await cache.get(key("anything"))
        await cache.aclose()
        return got, cache.disabled, cache._reader

    assert asyncio.run(main()) == (None, True, None)
    assert "disabled for this run" in caplog.text and "malformed" in caplog.text


def test_a_new_cache_file_is_created_by_the_writer_not_by_the_first_lookup(
    tmp_path: Path,
) -> None:
    """Nothing to read in a file that does not exist: the first lookups (capabilities of
    two models, a key) create nothing and run no SQL; the writer thread creates the file with
    its first batch, and what it wrote is served. (The second model's capabilities created
    the file on the event loop's thread, 6 ms of fsyncs at the start of a bench run.)"""
    db = tmp_path / ".agentopt" / "cache.sqlite"

    async def main() -> tuple[Any, ...]:
        cache = ResponseCache(db)
        caps = await cache.get_capabilities("p", "http://x/v1", "m")
        caps = caps or await cache.get_capabilities("p", "http://x/v1", "judge")
        missing = await cache.get(key("a"))
        created_by_lookups = db.exists()
        await cache.put(key("a"), kind="chat", provider="p", model="m", payload={"v": 1})
        assert cache._writer is not None
        cache._writer.flush()
        served = await cache.get(key("a"))  # committed: read from the file now
        await cache.aclose()
        return caps, missing, created_by_lookups, served, cache.disabled

    caps, missing, created_by_lookups, served, disabled = asyncio.run(main())
    assert (caps, missing, created_by_lookups) == ({}, None, False)
    assert served == {"v": 1} and not disabled
    assert db.exists()


def test_the_index_holds_what_it_took_and_nothing_else_in_16_bytes_a_key() -> None:
    """The hashes live in one array (a set of ints took ~90 bytes a key): every hash added is
    found, through collisions, growth and the hash 0, and others are not."""
    import random

    from agentopt.models.cache_index import _HashTable

    rng = random.Random(3)
    taken = {rng.getrandbits(64) - 2**63 for _ in range(20_000)}
    taken |= {0, 1024, 2048, -1024}  # one slot's worth of collisions, and the empty mark
    table = _HashTable()
    for h in taken:
        table.add(h)
        table.add(h)  # twice: still one
    assert all(table.holds(h) for h in taken)
    others = {rng.getrandbits(64) - 2**63 for _ in range(20_000)} - taken
    assert not any(table.holds(h) for h in others)
    assert len(table._slots) * 8 <= 32 * len(taken)


def test_hashes_taken_at_once_are_held_as_one_by_one_and_in_the_same_room() -> None:
    """A file's keys are loaded in one call with the room made ahead (`reserve`, then
    `add_many`): the same hashes held, collisions, duplicates and 0 included, and the table
    no larger than adding them one by one makes it."""
    import random

    from agentopt.models.cache_index import _HashTable

    rng = random.Random(5)
    taken = [rng.getrandbits(64) - 2**63 for _ in range(20_000)]
    taken += [0, 1024, 2048, -1024, taken[0], taken[1]]  # a slot's collisions, 0, repeats
    bulk, single = _HashTable(), _HashTable()
    bulk.reserve(len(taken))
    bulk.add_many(taken)
    bulk.add_many(taken[:5000])  # a refresh that brings rows already held grows nothing
    for h in taken:
        single.add(h)
    assert all(bulk.holds(h) for h in taken)
    others = {rng.getrandbits(64) - 2**63 for _ in range(20_000)} - set(taken)
    assert not any(bulk.holds(h) for h in others)
    assert bulk._used == single._used and len(bulk._slots) == len(single._slots)


def test_presence_is_told_by_the_index_without_sql_and_a_row_deleted_before_is_absent(
    tmp_path: Path,
) -> None:
    """A replayed unit asks only whether its answers are still cached: the key index, which
    holds the whole file, answers with no statement run; a row deleted before the index was
    loaded (`cache clear`, another run's prune) is absent, so its unit is played."""
    db = tmp_path / "c.sqlite"
    for name in ("kept", "deleted"):
        add_row(db, key(name))
    conn = connect(db)
    conn.execute("DELETE FROM entries WHERE key = ?", (key("deleted"),))
    conn.close()

    async def main() -> tuple[set[str], list[str], int]:
        cache = ResponseCache(db)
        await cache.get(key("kept"))  # opens the reader, loads the index
        seen = selects(cache)
        there = await cache.present([key("kept"), key("deleted"), key("never")])
        hits = cache.hits
        await cache.aclose()
        return there, seen, hits

    there, seen, hits = asyncio.run(main())
    assert there == {key("kept")}
    assert seen == []
    assert hits == 2  # the read, and the presence: each counts as a hit of its row


def test_the_event_loops_reader_opens_a_whole_file_without_waiting_for_the_writer(
    tmp_path: Path,
) -> None:
    """The reader of a file that has every table takes no write lock, so it opens while the
    writer thread holds one (creating the schema in a write transaction waited for it, up to
    the 30 s busy timeout); a file that lacks a table is still completed."""
    import sqlite3
    import threading

    from agentopt.models.cache_sql import connect, open_reader

    db = tmp_path / "c.sqlite"
    connect(db).close()
    writer = sqlite3.connect(str(db), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the writer thread's batch in progress
    opened: list[sqlite3.Connection | None] = []
    thread = threading.Thread(target=lambda: opened.append(open_reader(db)), daemon=True)
    thread.start()
    thread.join(timeout=5)
    writer.execute("COMMIT")
    assert opened, "the reader waited for the writer's lock"
    reader = opened[0]
    assert reader is not None
    assert reader.execute("SELECT count(*) FROM entries").fetchone() == (0,)
    reader.close()

    writer.execute("DROP TABLE units")  # a file of an older version
    reader = open_reader(db)
    assert reader is not None and reader.execute("SELECT count(*) FROM units").fetchone() == (0,)
    reader.close()
    writer.close()

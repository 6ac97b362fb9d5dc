"""A new cache file is created by whoever writes first, while others open it: nobody fails,
and the cache is never turned off for a run because two connections met at its creation."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

from agentopt.models.cache import ResponseCache
from agentopt.models.cache_sql import connect, open_reader


def test_a_reader_of_a_file_being_created_reads_nothing_and_writes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.sqlite"
    db.touch()  # the writer thread has just created it: no table yet
    assert open_reader(db) is None
    assert db.stat().st_size == 0  # the reader created no table, took no write lock

    async def main() -> tuple[object, object]:
        cache = ResponseCache(db)
        missing = await cache.get("k")
        await cache.put("k", kind="chat", provider="p", model="m", payload={"a": 1})
        found = await cache.get("k")
        await cache.aclose()
        return missing, found

    assert asyncio.run(main()) == (None, {"a": 1})  # the cache stayed on
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (1,)


def test_two_writers_and_a_reader_opening_a_new_file_at_once_never_fail(tmp_path: Path) -> None:
    # Two connections switching a new file to WAL at once: SQLite answered one of them
    # "database is locked" at once, busy timeout or not (10 readers and 7 writers of 500).
    failures: list[str] = []
    for n in range(200):
        db = tmp_path / f"c{n}.sqlite"

        def write(db: Path = db) -> None:
            try:
                connect(db).close()
            except sqlite3.Error as exc:
                failures.append(f"writer: {exc}")

        writers = [threading.Thread(target=write) for _ in range(2)]
        for t in writers:
            t.start()
        while not db.exists():
            pass
        try:
            reader = open_reader(db)
            if reader is not None:
                reader.close()
        except sqlite3.Error as exc:
            failures.append(f"reader: {exc}")
        for t in writers:
            t.join()
    assert failures == []

"""The response cache (models.md §3): zero provider calls on a repeated run, safe writers."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentopt.models import (
    CallLayer,
    CallSettings,
    ChatRequest,
    Message,
    Price,
    cache_clear,
    cache_stats,
    chat_cache_key,
    register_mock,
    unregister_mock,
)
from agentopt.models.cache import ResponseCache
from agentopt.models.types import Pool
from tests.fake_openai import FakeOpenAI, text
from tests.models.helpers import fast_settings


def ask(content: str = "hello", **kwargs: Any) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=content)], **kwargs)


def complete_all(
    project: Path,
    calls: list[tuple[str, ChatRequest, int]],
    settings: CallSettings | None = None,
    pool: Pool = "judge",
) -> tuple[list[Any], Any]:
    async def main() -> tuple[list[Any], Any]:
        async with CallLayer(project, settings or fast_settings()) as layer:
            out = [await layer.complete(m, r, pool=pool, repeat=k) for m, r, k in calls]
            return out, layer.stats()

    return asyncio.run(main())


def test_a_repeated_call_makes_zero_requests(openai_env: FakeOpenAI, project: Path) -> None:
    openai_env.queue(text("first answer", usage=(100, 20)))
    priced = fast_settings(prices={"gpt-4.1-mini": Price(input=0.4, output=1.6)})
    (first,), stats1 = complete_all(project, [("openai:gpt-4.1-mini", ask(), 0)], priced)
    # A new layer (a new run) in the same project, same request: served from the file.
    (again,), stats2 = complete_all(project, [("openai:gpt-4.1-mini", ask(), 0)], priced)
    assert openai_env.count() == 1
    assert first.text == again.text == "first answer"
    assert not first.cached and again.cached
    assert first.cost_usd > 0 and again.cost_usd == 0
    assert (again.usage.input_tokens, again.usage.output_tokens) == (100, 20)
    assert stats1.total.calls == 1 and stats1.total.cache_hits == 0
    assert stats2.total.calls == 0 and stats2.total.cache_hits == 1 and stats2.total.cost_usd == 0


def test_repeat_index_and_semantic_fields_change_the_key(
    openai_env: FakeOpenAI, project: Path
) -> None:
    model = "openai:gpt-4.1-mini"
    complete_all(
        project,
        [
            (model, ask(), 0),
            (model, ask(), 1),  # another repeat: a new sample
            (model, ask(temperature=0.5), 0),
            (model, ask(max_tokens=10), 0),
            (model, ask("other"), 0),
            (model, ask(), 0),  # cached
            (model, ask(), 1),  # cached
        ],
    )
    assert openai_env.count() == 5


def test_key_ignores_timeouts_and_credentials(
    openai_env: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    complete_all(project, [("openai:gpt-4.1-mini", ask(), 0)])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-another-key-entirely")
    settings = fast_settings(call_timeout_s=7.0, max_attempts=2)
    (resp,), _ = complete_all(project, [("openai:gpt-4.1-mini", ask(), 0)], settings)
    assert resp.cached and openai_env.count() == 1


@pytest.mark.parametrize(
    "reply",
    [
        text("cut off mid-sen", finish_reason="length"),
        text("", finish_reason="content_filter"),
        text("", finish_reason="stop"),
        text("   ", finish_reason="stop"),
    ],
)
def test_incomplete_answers_are_not_cached(
    openai_env: FakeOpenAI, project: Path, reply: Any
) -> None:
    openai_env.queue(reply, reply)
    complete_all(project, [("openai:gpt-4.1", ask(), 0)])
    (second,), _ = complete_all(project, [("openai:gpt-4.1", ask(), 0)])
    assert openai_env.count() == 2 and not second.cached


def test_an_agent_answer_cut_at_its_max_tokens_is_replayed(
    openai_env: FakeOpenAI, project: Path
) -> None:
    """It is the answer the run scored: asked again, a server with a prompt cache (llama.cpp's)
    may answer otherwise even at temperature 0, and the rerun would judge another answer."""
    openai_env.queue(text("Our return window is", finish_reason="length"), text("Other words"))
    complete_all(project, [("openai:gpt-4.1", ask(max_tokens=5), 0)], pool="agent")
    (again,), _ = complete_all(project, [("openai:gpt-4.1", ask(max_tokens=5), 0)], pool="agent")
    assert again.cached and again.text == "Our return window is"
    assert openai_env.count() == 1


def test_a_cut_structured_agent_reply_is_not_cached(openai_env: FakeOpenAI, project: Path) -> None:
    """A JSON reply cut short (prompted tools, a schema) is broken, not an answer."""
    cut = text('{"tool": "get_or', finish_reason="length")
    openai_env.queue(cut, cut)
    request = ask(max_tokens=5, response_format={"type": "json_object"})
    complete_all(project, [("openai:gpt-4.1", request, 0)], pool="agent")
    (again,), _ = complete_all(project, [("openai:gpt-4.1", request, 0)], pool="agent")
    assert not again.cached and openai_env.count() == 2


def test_no_cache_bypasses_reads_but_still_writes(openai_env: FakeOpenAI, project: Path) -> None:
    openai_env.queue(text("v1"), text("v2"))
    complete_all(project, [("openai:gpt-4.1", ask(), 0)])
    (fresh,), _ = complete_all(
        project, [("openai:gpt-4.1", ask(), 0)], fast_settings(use_cache=False)
    )
    assert fresh.text == "v2" and not fresh.cached
    (cached,), _ = complete_all(project, [("openai:gpt-4.1", ask(), 0)])
    assert cached.text == "v2" and cached.cached  # the --no-cache answer replaced the old one
    assert openai_env.count() == 2


def test_cache_disabled_writes_no_file(project: Path) -> None:
    complete_all(project, [("mock:echo", ask(), 0)], fast_settings(cache_enabled=False))
    assert not (project / ".agentopt").exists()


def test_embeddings_are_cached_per_text(openai_env: FakeOpenAI, project: Path) -> None:
    async def main() -> list[list[list[float]]]:
        async with CallLayer(project, fast_settings()) as layer:
            model = "openai:text-embedding-3-small"
            return [await layer.embed(t, model=model) for t in (["a", "b"], ["b", "c"], ["c", "a"])]

    first, second, third = asyncio.run(main())
    assert openai_env.count("/embeddings") == 2
    assert openai_env.requests[-1].body["input"] == ["c"]
    assert second[0] == first[1] and third == [second[1], first[0]]


def test_cache_key_is_canonical_and_stable() -> None:
    request = ask("hi", temperature=0.0, seed=1)
    key = chat_cache_key(
        provider_type="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-4.1",
        request=request,
        repeat=0,
    )
    reordered = ChatRequest.model_validate(
        {"seed": 1, "temperature": 0.0, "messages": [{"content": "hi", "role": "user"}]}
    )
    same = chat_cache_key(
        provider_type="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-4.1",
        request=reordered,
        repeat=0,
    )
    assert key == same
    # Pinned: a change here invalidates every user's cache, so it must be deliberate.
    assert key == "bedd3c8c828134fae94872cdf696b74addd414741c4a9c7cf8e3b6f1c3dd1f14"


def test_concurrent_tasks_and_processes_share_the_file(project: Path) -> None:
    register_mock("counter", lambda request: f"answer to {request.messages[-1].content}")
    try:

        async def main() -> None:
            async with CallLayer(project, fast_settings(concurrency={"judge": 16})) as layer:
                await asyncio.gather(
                    *(layer.complete("mock:counter", ask(f"t{i}"), pool="judge") for i in range(60))
                )

        script = textwrap.dedent(
            """
            import asyncio, sys
            from agentopt.models.cache import ResponseCache

            async def main(tag):
                cache = ResponseCache(__import__("pathlib").Path(sys.argv[1]))
                async def one(i):
                    await cache.put(f"{tag}-{i}", kind="chat", provider="mock", model="m",
                                    payload={"i": i, "tag": tag})
                await asyncio.gather(*(one(i) for i in range(150)))
                await cache.aclose()

            asyncio.run(main(sys.argv[2]))
            """
        )
        db = project / ".agentopt" / "cache.sqlite"
        db.parent.mkdir(exist_ok=True)
        procs = [
            subprocess.Popen([sys.executable, "-c", script, str(db), tag]) for tag in ("p1", "p2")
        ]
        asyncio.run(main())
        assert [p.wait(timeout=60) for p in procs] == [0, 0]
    finally:
        unregister_mock("counter")
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        kinds = dict(
            conn.execute("SELECT provider, COUNT(*) FROM entries GROUP BY provider").fetchall()
        )
    finally:
        conn.close()
    assert kinds == {"mock": 360}
    (again,), _ = complete_all(project, [("mock:counter", ask("t7"), 0)])
    assert again.cached and again.text == "answer to t7"


def test_stats_and_clear(openai_env: FakeOpenAI, project: Path) -> None:
    assert cache_stats(project).exists is False
    complete_all(project, [("openai:gpt-4.1", ask(f"q{i}"), 0) for i in range(3)])
    complete_all(project, [("mock:echo", ask("e"), 0), ("openai:gpt-4.1", ask("q0"), 0)])
    stats = cache_stats(project)
    assert stats.exists and stats.entries == 4 and stats.size_bytes > 0
    assert (stats.hits, stats.misses) == (1, 4)
    by_model = {(m.provider, m.model): (m.entries, m.hits) for m in stats.by_model}
    assert by_model == {("openai", "gpt-4.1"): (3, 1), ("mock", "echo"): (1, 0)}
    assert cache_clear(project, older_than="1h") == 0
    assert cache_clear(project) == 4
    assert cache_stats(project).entries == 0


def test_a_damaged_cache_file_never_fails_a_run(
    openai_env: FakeOpenAI, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = project / ".agentopt" / "cache.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="agentopt.models"):
        (resp,), _ = complete_all(project, [("openai:gpt-4.1", ask(), 0)])
    assert resp.text == "hello" and openai_env.count() == 1
    assert any(
        "model cache" in r.getMessage() and "disabled" in r.getMessage() for r in caplog.records
    )
    assert cache_clear(project) == 0 and not db.exists()


def test_response_cache_round_trips_json(tmp_path: Path) -> None:
    async def main() -> Any:
        cache = ResponseCache(tmp_path / "c.sqlite")
        await cache.put("k", kind="chat", provider="p", model="m", payload={"a": [1, "é"]})
        value = await cache.get("k"), await cache.get("missing")
        await cache.aclose()
        return value

    assert asyncio.run(main()) == ({"a": [1, "é"]}, None)


def test_writes_are_batched_on_one_thread_and_readable_before_they_commit(
    tmp_path: Path,
) -> None:
    """200 puts from 200 concurrent calls: no thread hop per call, far fewer transactions
    than rows, every row readable at once and on disk after close."""
    import threading

    async def main() -> tuple[int, set[str], int]:
        cache = ResponseCache(tmp_path / "c.sqlite")
        batches: list[int] = []
        write = cache._write_batch

        def counting(rows: Any) -> None:
            batches.append(len(rows))
            write(rows)

        cache._write_batch = counting  # type: ignore[method-assign]
        threads_before = threading.active_count()

        async def one(i: int) -> dict[str, Any] | None:
            await cache.put(f"k{i}", kind="chat", provider="p", model="m", payload={"i": i})
            return await cache.get(f"k{i}")

        got = await asyncio.gather(*(one(i) for i in range(200)))
        assert all(g is not None and g["i"] == i for i, g in enumerate(got))
        extra_threads = threading.active_count() - threads_before
        await cache.aclose()
        names = {t.name for t in threading.enumerate()}
        return len(batches), names, extra_threads

    n_batches, names, extra = asyncio.run(main())
    assert extra <= 1  # the one writer thread
    assert "agentopt-cache-writer" not in names  # gone after aclose
    assert n_batches < 200
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    try:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (200,)
    finally:
        conn.close()


def test_inserts_of_any_batch_size_use_seven_statement_texts() -> None:
    """Each distinct INSERT text is a prepared statement sqlite3 keeps (128 per connection):
    batches of every size from 1 to 1,000 share seven texts per table, and carry every row
    once, in order (a key written twice keeps its later value)."""
    from agentopt.models.cache_sql import UNIT_COLUMNS, inserts

    texts: set[str] = set()
    for size in range(1, 1001):
        rows = [(f"k{i}", f"p{i}", float(i)) for i in range(size)]
        statements = inserts("units", UNIT_COLUMNS, rows)
        texts.update(sql for sql, _ in statements)
        assert [v for _, params in statements for v in params] == [v for r in rows for v in r]
        assert all(sql.count("(?,?,?)") * 3 == len(params) for sql, params in statements)
    assert len(texts) == 7


def test_lookups_of_any_number_of_keys_use_ten_statement_texts(tmp_path: Path) -> None:
    """The `IN (...)` lists are padded to powers of two: every count from 1 to 1,200 keys
    shares ten placeholder lists, each chunk asks for its own keys (padded with its last), and
    a read through them finds exactly the stored keys among those asked."""
    from agentopt.models.cache_sql import key_chunks

    texts: set[str] = set()
    for count in range(1, 1201):
        keys = [f"k{i}" for i in range(count)]
        chunks = list(key_chunks(keys))
        texts.update(marks for marks, _ in chunks)
        assert [k for _, params in chunks for k in dict.fromkeys(params)] == keys
        assert all(marks.count("?") == len(params) for marks, params in chunks)
    assert len(texts) == 10

    async def main() -> dict[str, dict[str, Any]]:
        cache = ResponseCache(tmp_path / "c.sqlite")
        await cache.put_many([(f"k{i}", "chat", "p", "m", {"i": i}) for i in range(0, 700, 2)])
        await cache.aclose()
        again = ResponseCache(tmp_path / "c.sqlite")
        found = await again.get_many([f"k{i}" for i in range(700)])
        await again.aclose()
        return found

    found = asyncio.run(main())
    assert sorted(found) == sorted(f"k{i}" for i in range(0, 700, 2))
    assert found["k698"] == {"i": 698}


def test_a_batch_past_one_insert_statement_stores_every_row(tmp_path: Path) -> None:
    """A batch of 250 rows (more than one INSERT carries), a key written twice and a
    capability finding in the same batch: all on disk after close, the later value kept."""
    from agentopt.models.cache_sql import ROWS_PER_INSERT

    rows = 250
    assert rows > 2 * ROWS_PER_INSERT

    async def main() -> None:
        cache = ResponseCache(tmp_path / "c.sqlite")
        await cache.put_many(
            [(f"k{i}", "chat", "p", "m", {"i": i, "text": "é" * (i % 7)}) for i in range(rows)]
            + [("k7", "chat", "p", "m", {"i": "again"})]
        )
        await cache.put_capability("p", "http://x/v1", "m", "structured_output", "no", "400")
        await cache.aclose()

    asyncio.run(main())

    async def read_back() -> tuple[dict[str, Any], dict[str, str]]:
        cache = ResponseCache(tmp_path / "c.sqlite")
        found = await cache.get_many([f"k{i}" for i in range(rows)])
        caps = await cache.get_capabilities("p", "http://x/v1", "m")
        await cache.aclose()
        return found, caps

    found, caps = asyncio.run(read_back())
    assert len(found) == rows
    assert found["k7"] == {"i": "again"}
    assert found["k249"] == {"i": 249, "text": "é" * (249 % 7)}
    assert caps == {"structured_output": "no"}


def test_a_lone_surrogate_in_a_request_and_an_answer_is_sent_cached_and_served(
    openai_env: FakeOpenAI, project: Path
) -> None:
    """JSON may spell a lone surrogate (`"\\ud800"`), so a task or a server's answer can hold
    one, which has no UTF-8: the request is still sent (escaped), the answer cached, and the
    next run served from the file."""
    openai_env.queue(text("half a pair: \ud800"))
    (first,), _ = complete_all(project, [("openai:gpt-4.1-mini", ask("odd \udfff input"), 0)])
    (again,), stats = complete_all(project, [("openai:gpt-4.1-mini", ask("odd \udfff input"), 0)])
    assert openai_env.count() == 1
    sent = openai_env.requests[0].body
    assert isinstance(sent, dict) and sent["messages"][0]["content"] == "odd \udfff input"
    assert first.text == again.text == "half a pair: \ud800"
    assert again.cached and stats.total.cache_hits == 1

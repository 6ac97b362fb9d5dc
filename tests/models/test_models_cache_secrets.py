"""No secret in the cache (issue 14 item 6): a server that echoes the request's Authorization
header in its answer must not leave the key in `.agentopt/cache.sqlite` (which docs/ci.md
suggests keeping as a CI artifact), and a row holding a secret is never served verbatim."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from agentopt.core.paths import cache_path
from agentopt.models import CallLayer, ChatRequest, Message, ProviderConfig
from agentopt.models.cache_key import chat_cache_key
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.models.helpers import fast_settings

SECRET = "lab-credential-value-42424242"
REQUEST = ChatRequest(messages=[Message(role="user", content="who am I?")])


def echo_auth(req: RecordedRequest) -> Reply:
    answer = f"You sent: Authorization: {req.headers.get('authorization')}; key={SECRET}."
    return text(answer)


def ask(project: Path, fake: FakeOpenAI) -> str:
    lab = {"lab": ProviderConfig(type="compat", base_url=fake.base_url, api_key_env="LAB_PASS")}

    async def main() -> str:
        async with CallLayer(project, fast_settings(providers=lab)) as layer:
            return (await layer.complete("lab:m", REQUEST)).text

    return asyncio.run(main())


def cache_bytes(project: Path) -> bytes:
    path = cache_path(project)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return b"".join(p.read_bytes() for p in path.parent.glob("cache.sqlite*"))


def test_an_echoed_key_is_not_stored_in_the_cache(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_PASS", SECRET)  # a name the env scan alone would not catch
    fake.handler = echo_auth
    first = ask(project, fake)
    assert SECRET in first  # the live answer is the server's own words (masked downstream)
    stored = cache_bytes(project)
    assert SECRET.encode() not in stored
    assert b"Authorization: ***" in stored
    second = ask(project, fake)
    assert fake.count() == 1  # served from the cache...
    assert SECRET not in second and "Authorization: ***" in second  # ...masked, not verbatim


def test_a_row_written_with_a_secret_is_masked_when_served(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row an older version stored in clear (or whose secret became known later)."""
    monkeypatch.setenv("LAB_PASS", SECRET)
    fake.queue(text("plain answer"))
    ask(project, fake)
    conn = sqlite3.connect(cache_path(project))
    try:
        (payload,) = conn.execute("SELECT payload FROM entries").fetchone()
        data = json.loads(payload)
        data["message"]["content"] = f"the key is {SECRET}"
        conn.execute("UPDATE entries SET payload = ?", (json.dumps(data),))
        conn.commit()
    finally:
        conn.close()
    served = ask(project, fake)
    assert fake.count() == 1 and served == "the key is ***"
    assert chat_cache_key  # the key itself never holds credentials (hash of semantic fields)

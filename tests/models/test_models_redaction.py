"""Secrets never reach logs or error text (models.md §3, core.redaction)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from agentopt.core.errors import ModelCallError
from agentopt.models import CallLayer, ChatRequest, Message, ProviderConfig
from tests.fake_openai import FakeOpenAI, error
from tests.models.helpers import TEST_KEY, fast_settings


def test_key_is_in_no_log_line(
    openai_env: FakeOpenAI, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    request = ChatRequest(messages=[Message(role="user", content=f"my key is {TEST_KEY}")])

    async def main() -> None:
        async with CallLayer(project, fast_settings(cache_enabled=False)) as layer:
            await layer.complete("openai:gpt-4.1", request)

    with caplog.at_level(logging.DEBUG):  # every logger: ours, the SDK's, httpx's
        asyncio.run(main())
    assert "request openai:gpt-4.1" in caplog.text and "response openai:gpt-4.1" in caplog.text
    assert openai_env.last.headers["authorization"] == f"Bearer {TEST_KEY}"  # it was sent...
    assert TEST_KEY not in caplog.text  # ...and never logged, not even echoed back
    assert "my key is ***" in caplog.text


def test_key_is_not_in_the_error_when_the_server_echoes_it(
    openai_env: FakeOpenAI, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    openai_env.queue(error(401, f"Incorrect API key provided: {TEST_KEY}", code="invalid_api_key"))

    async def main() -> ModelCallError:
        async with CallLayer(project, fast_settings(cache_enabled=False)) as layer:
            with pytest.raises(ModelCallError) as info:
                await layer.complete(
                    "openai:gpt-4.1", ChatRequest(messages=[Message(role="user", content="hi")])
                )
            return info.value

    with caplog.at_level(logging.DEBUG):
        err = asyncio.run(main())
    assert openai_env.count() == 1 and err.kind == "auth"
    assert TEST_KEY not in str(err) and TEST_KEY not in repr(err.args)
    assert "API key provided: ***" in str(err)
    assert TEST_KEY not in caplog.text


def test_a_key_in_an_oddly_named_variable_is_masked_too(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "lab-credential-value-42424242"
    monkeypatch.setenv("LAB_CREDENTIAL", secret)  # not *_KEY/_TOKEN/_SECRET: the env scan misses it
    fake.queue(error(403, f"key {secret} has no access"))
    lab = {
        "lab": ProviderConfig(type="compat", base_url=fake.base_url, api_key_env="LAB_CREDENTIAL")
    }

    async def main() -> ModelCallError:
        async with CallLayer(project, fast_settings(providers=lab, cache_enabled=False)) as layer:
            with pytest.raises(ModelCallError) as info:
                await layer.complete(
                    "lab:m", ChatRequest(messages=[Message(role="user", content="hi")])
                )
            return info.value

    err = asyncio.run(main())
    assert fake.last.headers["authorization"] == f"Bearer {secret}"
    assert secret not in str(err) and "key *** has no access" in str(err)

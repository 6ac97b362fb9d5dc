"""Each provider against the local OpenAI-protocol server: the request it sends, its auth."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from agentopt.core.errors import ConfigError
from agentopt.models import (
    CallLayer,
    CallSettings,
    ChatRequest,
    FunctionCall,
    Message,
    Price,
    ProviderConfig,
    ToolCall,
    ToolDef,
)
from tests.fake_openai import FakeOpenAI, text, tool_calls
from tests.models.helpers import TEST_KEY, fast_settings

WEATHER = ToolDef(
    function={
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
)
SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": False,
        },
    },
}


class StaticCredential:
    """An async Azure credential that hands out a fixed token and records the scopes asked."""

    def __init__(self, token: str = "fake-entra-token") -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []
        self.closed = False

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)

    async def close(self) -> None:
        self.closed = True


def ask(text_: str = "hi", **kwargs: Any) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text_)], **kwargs)


def call(
    project: Path,
    model: str,
    request: ChatRequest,
    settings: CallSettings | None = None,
    **layer_kwargs: Any,
) -> Any:
    async def main() -> Any:
        async with CallLayer(
            project, settings or fast_settings(cache_enabled=False), **layer_kwargs
        ) as layer:
            return await layer.complete(model, request)

    return asyncio.run(main())


@pytest.mark.parametrize("path", ["lean", "sdk"])
def test_openai_request_shape_auth_and_answer(
    openai_env: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """The lean HTTP path and the SDK (AGENTOPT_HTTP_CLIENT=sdk) send the same request and
    read the same answer; neither retries on its own."""
    if path == "sdk":
        monkeypatch.setenv("AGENTOPT_HTTP_CLIENT", "sdk")
    srv = openai_env
    srv.queue(text("sunny", usage=(42, 7)))
    request = ask(
        "weather?",
        tools=[WEATHER],
        tool_choice="auto",
        temperature=0.2,
        top_p=0.9,
        seed=7,
        max_tokens=50,
        response_format=SCHEMA_FORMAT,
        stop=["END"],
    )
    resp = call(project, "openai:gpt-4.1-mini", request)
    sent = srv.last
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {TEST_KEY}"
    if path == "sdk":
        assert sent.headers["x-stainless-retry-count"] == "0"
    else:
        assert sent.headers["user-agent"].startswith("agentopt/")
    body = sent.body
    assert body["model"] == "gpt-4.1-mini"
    assert body["messages"] == [{"role": "user", "content": "weather?"}]
    assert body["tools"] == [WEATHER.model_dump()]
    assert body["tool_choice"] == "auto"
    assert body["response_format"] == SCHEMA_FORMAT
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (
        0.2,
        0.9,
        7,
        50,
    )
    assert body["stop"] == ["END"]
    assert "max_completion_tokens" not in body
    assert resp.text == "sunny"
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (42, 7)
    assert resp.finish_reason == "stop" and resp.provider == "openai"


@pytest.mark.parametrize("model", ["o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5.1", "gpt-5-mini"])
def test_reasoning_models_get_max_completion_tokens_and_no_temperature(
    openai_env: FakeOpenAI, project: Path, model: str
) -> None:
    call(project, f"openai:{model}", ask(temperature=0.3, top_p=0.5, max_tokens=99))
    body = openai_env.last.body
    assert body["max_completion_tokens"] == 99
    assert "max_tokens" not in body and "temperature" not in body and "top_p" not in body


def test_chat_variant_of_gpt5_is_not_a_reasoning_model(
    openai_env: FakeOpenAI, project: Path
) -> None:
    call(project, "openai:gpt-5-chat-latest", ask(temperature=0.3, max_tokens=9))
    body = openai_env.last.body
    assert body["max_tokens"] == 9 and body["temperature"] == 0.3


def test_new_reasoning_family_needs_only_configuration(fake: FakeOpenAI, project: Path) -> None:
    flagged = {"lab": ProviderConfig(type="compat", base_url=fake.base_url, reasoning=True)}
    call(
        project,
        "lab:brand-new-model",
        ask(temperature=0.3, max_tokens=5),
        fast_settings(providers=flagged, cache_enabled=False),
    )
    assert fake.last.body["max_completion_tokens"] == 5 and "temperature" not in fake.last.body

    settings = fast_settings(fake, cache_enabled=False, reasoning_models=["zeta-*"])
    call(project, "fake:zeta-2", ask(temperature=0.3, max_tokens=6), settings)
    assert fake.last.body["max_completion_tokens"] == 6 and "temperature" not in fake.last.body
    call(project, "fake:alpha-2", ask(temperature=0.3, max_tokens=6), settings)
    assert fake.last.body["max_tokens"] == 6 and fake.last.body["temperature"] == 0.3


def test_tool_calls_round_trip(openai_env: FakeOpenAI, project: Path) -> None:
    srv = openai_env
    srv.queue(tool_calls([("get_weather", {"city": "Paris"})]))
    resp = call(project, "openai:gpt-4.1", ask("weather in Paris?", tools=[WEATHER]))
    assert resp.finish_reason == "tool_calls"
    assert [(c.function.name, c.function.parsed_arguments()) for c in resp.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    follow_up = ChatRequest(
        messages=[
            Message(role="user", content="weather in Paris?"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id="call_0",
                        function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}'),
                    )
                ],
            ),
            Message(role="tool", tool_call_id="call_0", content="18C, sunny"),
        ],
        tools=[WEATHER],
    )
    call(project, "openai:gpt-4.1", follow_up)
    messages = srv.last.body["messages"]
    # The OpenAI reference: content is null beside tool_calls (the key is always there).
    assert messages[1]["role"] == "assistant" and messages[1]["content"] is None
    assert messages[1]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert messages[2] == {
        "role": "tool",
        "content": "18C, sunny",
        "tool_call_id": "call_0",
        "name": "get_weather",
    }


def test_azure_key_auth_uses_api_key_header_and_deployment_url(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key-123456")
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01-preview")
    resp = call(project, "my-deployment", ask("hello azure", max_tokens=5))
    sent = fake.last
    assert sent.path == "/openai/deployments/my-deployment/chat/completions"
    assert sent.query["api-version"] == ["2025-01-01-preview"]
    assert sent.headers["api-key"] == "azure-test-key-123456"
    assert "authorization" not in sent.headers
    assert sent.body["max_tokens"] == 5
    assert resp.text == "hello azure" and resp.provider == "azure"


def test_azure_entra_auth_sends_a_bearer_token_for_cognitive_services(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
    cred = StaticCredential()
    call(project, "azure:dep", ask(), provider_kwargs={"azure": {"credential": cred}})
    sent = fake.last
    assert sent.headers["authorization"] == "Bearer fake-entra-token"
    assert "api-key" not in sent.headers
    assert sent.query["api-version"] == ["2024-10-21"]
    assert cred.scopes == [("https://cognitiveservices.azure.com/.default",)]


def test_foundry_uses_the_project_openai_client(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOUNDRY_PROJECT_ENDPOINT", f"{fake.url}/api/projects/proj")
    cred = StaticCredential("foundry-token")
    resp = call(
        project,
        "gpt-4.1-mini",
        ask("hello foundry", max_tokens=3),
        provider_kwargs={"foundry": {"credential": cred}},
    )
    sent = fake.last
    assert sent.path == "/api/projects/proj/openai/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer foundry-token"
    assert sent.headers["x-stainless-retry-count"] == "0"
    assert sent.body["model"] == "gpt-4.1-mini" and sent.body["max_tokens"] == 3
    assert cred.scopes == [("https://ai.azure.com/.default",)]
    assert resp.text == "hello foundry" and resp.provider == "foundry"


def test_ollama_never_receives_the_openai_key(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("OLLAMA_HOST", fake.url.removeprefix("http://"))
    resp = call(project, "ollama:llama3.2", ask("hi ollama"))
    sent = fake.last
    assert sent.path == "/v1/chat/completions" and sent.body["model"] == "llama3.2"
    assert TEST_KEY not in json.dumps(sent.headers)
    assert resp.text == "hi ollama"


def test_compat_reads_its_key_from_the_named_env_var(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_TOKEN", "lab-token-987654")
    lab = {"lab": ProviderConfig(type="compat", base_url=fake.base_url, api_key_env="LAB_TOKEN")}
    call(project, "lab:qwen2.5", ask(), fast_settings(providers=lab, cache_enabled=False))
    assert fake.last.headers["authorization"] == "Bearer lab-token-987654"
    call(project, f"compat:qwen2.5@{fake.base_url}", ask())
    assert fake.last.headers["authorization"] == "Bearer unused"


def test_extra_headers_come_from_named_env_vars(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_SUBSCRIPTION", "gw-subscription-31337")
    lab = {
        "gw": ProviderConfig(
            type="compat",
            base_url=fake.base_url,
            headers={"Ocp-Apim-Subscription-Key": "GATEWAY_SUBSCRIPTION"},
        )
    }
    call(project, "gw:m", ask(), fast_settings(providers=lab, cache_enabled=False))
    assert fake.last.headers["ocp-apim-subscription-key"] == "gw-subscription-31337"
    monkeypatch.delenv("GATEWAY_SUBSCRIPTION")
    with pytest.raises(ConfigError, match="GATEWAY_SUBSCRIPTION is not set"):
        call(project, "gw:m", ask(), fast_settings(providers=lab, cache_enabled=False))


def test_embeddings_through_the_openai_endpoint(openai_env: FakeOpenAI, project: Path) -> None:
    async def main() -> tuple[list[list[float]], Any]:
        # A loopback server stands in for OpenAI: it is priced only when options.prices says so.
        price = {"text-embedding-3-small": Price(input=0.02, output=0)}
        async with CallLayer(project, fast_settings(cache_enabled=False, prices=price)) as layer:
            vectors = await layer.embed(
                ["alpha", "beta", "alpha"], model="openai:text-embedding-3-small"
            )
            return vectors, layer.stats()

    vectors, stats = asyncio.run(main())
    sent = openai_env.last
    assert sent.path == "/v1/embeddings"
    assert sent.body["input"] == ["alpha", "beta"]  # duplicates are embedded once
    assert sent.body["model"] == "text-embedding-3-small"
    assert len(vectors) == 3 and vectors[0] == vectors[2] and vectors[0] != vectors[1]
    assert stats.total.calls == 1 and stats.total.input_tokens > 0 and stats.total.cost_usd > 0

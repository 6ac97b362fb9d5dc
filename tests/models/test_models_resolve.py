"""Model naming and resolution (models.md §1)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.models import (
    CallLayer,
    CallSettings,
    ChatRequest,
    Message,
    ProviderConfig,
    resolve_model,
)

LAB = {"mylab": ProviderConfig(type="compat", base_url="http://lab:8000/v1", api_key_env="LAB_KEY")}


@pytest.mark.parametrize(
    ("spec", "env", "settings", "expected"),
    [
        # explicit providers
        ("openai:gpt-4.1-mini", {}, {}, ("openai", "openai", "gpt-4.1-mini", None)),
        ("azure:my-deployment", {}, {}, ("azure", "azure", "my-deployment", None)),
        ("foundry:gpt-4.1-mini", {}, {}, ("foundry", "foundry", "gpt-4.1-mini", None)),
        ("ollama:llama3.2", {}, {}, ("ollama", "ollama", "llama3.2", None)),
        ("ollama:qwen2.5:7b", {}, {}, ("ollama", "ollama", "qwen2.5:7b", None)),
        (
            "compat:qwen2.5@http://localhost:8000/v1",
            {},
            {},
            ("compat", "compat", "qwen2.5", "http://localhost:8000/v1"),
        ),
        ("local:smollm2-135m", {}, {}, ("local", "local", "smollm2-135m", None)),
        ("mock:echo", {}, {}, ("mock", "mock", "echo", None)),
        (
            "mylab:qwen2.5",
            {},
            {"providers": LAB},
            ("mylab", "compat", "qwen2.5", "http://lab:8000/v1"),
        ),
        # bare names, in precedence order
        (
            "gpt-4.1-mini",
            {
                "OPENAI_API_KEY": "k",
                "AZURE_OPENAI_ENDPOINT": "https://a",
                "FOUNDRY_PROJECT_ENDPOINT": "https://f",
            },
            {"providers": LAB},
            ("mylab", "compat", "gpt-4.1-mini", "http://lab:8000/v1"),
        ),
        (
            "gpt-4.1-mini",
            {
                "OPENAI_API_KEY": "k",
                "AZURE_OPENAI_ENDPOINT": "https://a",
                "FOUNDRY_PROJECT_ENDPOINT": "https://f",
            },
            {},
            ("foundry", "foundry", "gpt-4.1-mini", None),
        ),
        (
            "gpt-4.1-mini",
            {
                "OPENAI_API_KEY": "k",
                "AZURE_OPENAI_ENDPOINT": "https://a",
                "AZURE_AI_PROJECT_ENDPOINT": "https://f",
            },
            {},
            ("foundry", "foundry", "gpt-4.1-mini", None),
        ),
        (
            "gpt-4.1-mini",
            {"OPENAI_API_KEY": "k"},
            {"project_endpoint": "https://f"},
            ("foundry", "foundry", "gpt-4.1-mini", None),
        ),
        (
            "gpt-4.1-mini",
            {"OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://a"},
            {},
            ("azure", "azure", "gpt-4.1-mini", None),
        ),
        ("gpt-4.1-mini", {"OPENAI_API_KEY": "k"}, {}, ("openai", "openai", "gpt-4.1-mini", None)),
        ("gpt-4.1-mini", {}, {}, ("local", "local", "smollm2-135m", None)),
        (
            "ft:gpt-4o-mini:org::abc",
            {"OPENAI_API_KEY": "k"},
            {},
            ("openai", "openai", "ft:gpt-4o-mini:org::abc", None),
        ),
    ],
)
def test_resolution_table(
    spec: str, env: dict[str, str], settings: dict[str, object], expected: tuple[object, ...]
) -> None:
    ref = resolve_model(spec, CallSettings(**settings), env)  # type: ignore[arg-type]
    assert (ref.provider, ref.type, ref.model, ref.config.base_url) == expected
    assert ref.auto_fallback == (expected[0] == "local" and not spec.startswith("local:"))


def test_default_flag_picks_among_declared_providers() -> None:
    providers = {
        "a": ProviderConfig(type="ollama"),
        "b": ProviderConfig(type="compat", base_url="http://b/v1", default=True),
    }
    ref = resolve_model("qwen", CallSettings(providers=providers), {})
    assert ref.provider == "b"


def test_embedding_fallback_is_minilm() -> None:
    ref = resolve_model("text-embedding-3-small", CallSettings(), {}, purpose="embed")
    assert (ref.type, ref.model, ref.auto_fallback) == ("local", "minilm", True)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("opneai:gpt-4.1", "unknown provider 'opneai'"),
        ("compat:qwen2.5", "needs the server's base URL"),
        ("local:llama3", "unknown embedded model 'local:llama3'"),
        ("openai:", "no model after the ':'"),
        ("  ", "empty model name"),
    ],
)
def test_bad_names_are_clear_errors(spec: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_model(spec, CallSettings(), {})
    assert fragment in str(info.value)


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_model("lab:x", CallSettings(providers=LAB), {})
    assert "openai" in str(info.value) and "mylab" in str(info.value)


def test_fallback_notice_is_emitted_once(project: Path) -> None:
    notices: list[str] = []
    layer = CallLayer(project, CallSettings(cache_enabled=False), on_notice=notices.append)
    for _ in range(3):
        layer.resolve("gpt-4.1-mini")
    layer.resolve("gpt-4o")
    assert len(notices) == 1  # one line, however many names fell back
    text = notices[0]
    assert "local:smollm2-135m" in text and "135M" in text and "NOT a trustworthy judge" in text
    assert "OPENAI_API_KEY" in text and "options.providers" in text
    assert "\n" not in text


def test_another_gguf_is_named_in_the_notice_the_header_and_the_results(
    project: Path, tmp_path: Path
) -> None:
    """AGENTOPT_LOCAL_GGUF pointing at another model: nothing says SmolLM2-135M any more."""
    from agentopt.models.resolve import shown_model

    gguf = tmp_path / "qwen2.5-0.5b-instruct-q4_k_m.gguf"
    gguf.write_bytes(b"GGUF")
    env = {"AGENTOPT_LOCAL_GGUF": str(gguf)}
    notices: list[str] = []
    layer = CallLayer(project, CallSettings(cache_enabled=False), on_notice=notices.append,
                      environ=env)  # fmt: skip
    layer.resolve("gpt-4.1-mini")
    [text] = notices
    assert "qwen2.5-0.5b-instruct-q4_k_m.gguf" in text and "AGENTOPT_LOCAL_GGUF" in text
    assert "SmolLM2" not in text and "135M" not in text
    shown = shown_model("local:smollm2-135m", env)
    assert shown == "local:smollm2-135m (qwen2.5-0.5b-instruct-q4_k_m.gguf)"
    assert shown_model("local:smollm2-135m", {}) == "local:smollm2-135m"
    assert shown_model("openai:gpt-4.1", env) == "openai:gpt-4.1"


def test_fallback_notice_goes_to_the_log_without_a_callback(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    layer = CallLayer(project, CallSettings(cache_enabled=False))
    with caplog.at_level(logging.WARNING, logger="agentopt.models"):
        layer.resolve("gpt-4.1-mini")
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "embedded local:smollm2-135m" in caplog.records[0].getMessage()


def test_missing_credentials_are_config_errors(project: Path) -> None:
    request = ChatRequest(messages=[Message(role="user", content="hi")])

    async def main() -> list[str]:
        errors = []
        async with CallLayer(project, CallSettings(cache_enabled=False)) as layer:
            for model in ("openai:gpt-4.1-mini", "azure:dep", "foundry:gpt-4.1"):
                with pytest.raises(ConfigError) as info:
                    await layer.complete(model, request)
                errors.append(str(info.value))
        return errors

    openai_err, azure_err, foundry_err = asyncio.run(main())
    assert "OPENAI_API_KEY is not set" in openai_err
    assert "AZURE_OPENAI_ENDPOINT" in azure_err
    assert "FOUNDRY_PROJECT_ENDPOINT" in foundry_err


def test_the_shown_server_carries_no_credentials() -> None:
    """A base URL's query (`?sig=`) and `user:password@` are credentials: the identity every
    view prints names the server without them."""
    providers = {
        "lab": ProviderConfig(
            type="compat", base_url="http://bob:hunter2@lab.example:8000/v1?sig=s3cret"
        )
    }
    ref = resolve_model("lab:gpt-x", CallSettings(providers=providers), {})
    assert ref.identity == "lab:gpt-x@http://lab.example:8000/v1"
    assert "s3cret" not in ref.identity and "hunter2" not in ref.identity

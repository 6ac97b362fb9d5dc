"""What the providers built on the OpenAI SDK (openai, azure, foundry, ollama/vllm/compat) do
alike: the `OpenAIChatProvider` a provider's configuration makes (its reasoning flag, the
configured reasoning models, its key and header values as secrets), and the plain
`AsyncOpenAI` client of the bearer-key servers. Each provider module keeps what is its own:
where the endpoint and key come from, and how its client authenticates."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agentopt.models.http_client import LeanClient
from agentopt.models.providers.openai_chat import ClientFactory, Closer, OpenAIChatProvider
from agentopt.models.settings import CallSettings, ProviderConfig

__all__ = ["chat_provider", "openai_client"]


def openai_client(
    key: str, base_url: str, headers: Mapping[str, str], timeout: Callable[[], float]
) -> ClientFactory:
    """The SDK client's factory for a server that takes a bearer key: no SDK retries (the
    call layer owns them), `timeout()` read when the client is built, on first use."""

    def factory() -> object:
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            api_key=key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout(),
            default_headers=headers or None,
        )

    return factory


def chat_provider(
    name: str,
    config: ProviderConfig,
    settings: CallSettings,
    *,
    base_url: str,
    client_factory: ClientFactory,
    headers: Mapping[str, str],
    key: str | None = None,
    key_hint: str,
    closers: list[Closer] | None = None,
    string_content: bool = False,
    lean: Callable[[], LeanClient] | None = None,
    stream: bool = False,
) -> OpenAIChatProvider:
    """The provider `name` as its configuration makes it: `key` (if any) and the header values
    are masked wherever they could appear."""
    return OpenAIChatProvider(
        id=name,
        base_url=base_url,
        client_factory=client_factory,
        reasoning=config.reasoning,
        reasoning_patterns=settings.reasoning_models,
        secrets=[*([key] if key else []), *headers.values()],
        key_hint=key_hint,
        closers=closers,
        string_content=string_content,
        lean=lean,
        stream=stream,
    )

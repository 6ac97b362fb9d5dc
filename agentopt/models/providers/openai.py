"""`openai:` — api.openai.com (or `OPENAI_BASE_URL`) with `OPENAI_API_KEY`."""

from __future__ import annotations

from collections.abc import Mapping

from agentopt.core.errors import ConfigError
from agentopt.models.providers.openai_chat import OpenAIChatProvider, extra_headers, lean_client
from agentopt.models.providers.openai_sdk import chat_provider, openai_client
from agentopt.models.providers.registry import SERVER_KEYS, register_provider
from agentopt.models.settings import CallSettings, ProviderConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@register_provider(
    "openai", reads=("base_url", "api_key_env", "headers", "reasoning", *SERVER_KEYS)
)
def make_provider(
    name: str, config: ProviderConfig, settings: CallSettings, env: Mapping[str, str]
) -> OpenAIChatProvider:
    """Build the OpenAI provider; the key is read now, the SDK client on first use."""
    key_env = config.api_key_env or "OPENAI_API_KEY"
    key = env.get(key_env)
    if not key:
        raise ConfigError(
            f"{key_env} is not set, so provider '{name}' cannot authenticate",
            hint=f"export {key_env}=... (an OpenAI API key), or pick another provider",
        )
    base_url = config.base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    headers = extra_headers(name, config, env)
    return chat_provider(
        name,
        config,
        settings,
        base_url=base_url,
        client_factory=openai_client(key, base_url, headers, settings.attempt_timeout),
        headers=headers,
        key=key,
        key_hint=key_env,
        lean=lean_client(base_url, key, headers, env),
    )

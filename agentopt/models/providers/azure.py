"""`azure:` — Azure OpenAI deployments (`azure:<deployment>`).

Endpoint from `base_url` or `AZURE_OPENAI_ENDPOINT`, API version from `api_version` or
`OPENAI_API_VERSION`. Auth: the key in `AZURE_OPENAI_API_KEY` (or `api_key_env`) as the
`api-key` header, else Entra ID through an async `DefaultAzureCredential` token provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentopt.core.errors import ConfigError
from agentopt.models.providers.azure_auth import ProviderCredential
from agentopt.models.providers.openai_chat import OpenAIChatProvider, extra_headers
from agentopt.models.providers.openai_sdk import chat_provider
from agentopt.models.providers.registry import SERVER_KEYS, register_provider
from agentopt.models.settings import CallSettings, ProviderConfig

DEFAULT_API_VERSION = "2024-10-21"
COGNITIVE_SCOPE = "https://cognitiveservices.azure.com/.default"


@register_provider(
    "azure",
    reads=(
        "base_url",
        "endpoint",
        "api_version",
        "api_key_env",
        "headers",
        "reasoning",
        *SERVER_KEYS,
    ),
)
def make_provider(
    name: str,
    config: ProviderConfig,
    settings: CallSettings,
    env: Mapping[str, str],
    *,
    credential: Any = None,
) -> OpenAIChatProvider:
    """Build the Azure OpenAI provider.

    Args:
        credential: an async Azure credential (anything with `get_token`) to use instead of
            `DefaultAzureCredential` when no key is set; tests pass a static one.
    """
    endpoint = config.url or env.get("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise ConfigError(
            f"provider '{name}' (azure) needs an endpoint",
            hint="export AZURE_OPENAI_ENDPOINT=https://<resource>.openai.azure.com, "
            "or set base_url in options.providers",
        )
    api_version = config.api_version or env.get("OPENAI_API_VERSION") or DEFAULT_API_VERSION
    key_env = config.api_key_env or "AZURE_OPENAI_API_KEY"
    key = env.get(key_env)
    headers = extra_headers(name, config, env)
    cred_holder = ProviderCredential(credential)

    def factory() -> object:
        from openai import AsyncAzureOpenAI

        common: dict[str, Any] = {
            "azure_endpoint": endpoint,
            "api_version": api_version,
            "max_retries": 0,
            "timeout": settings.attempt_timeout(),
            "default_headers": headers or None,
        }
        if key:
            return AsyncAzureOpenAI(api_key=key, **common)
        from azure.identity.aio import get_bearer_token_provider

        token_provider = get_bearer_token_provider(cred_holder.get(), COGNITIVE_SCOPE)
        return AsyncAzureOpenAI(azure_ad_token_provider=token_provider, **common)

    return chat_provider(
        name,
        config,
        settings,
        base_url=endpoint,
        client_factory=factory,
        headers=headers,
        key=key,
        key_hint=f"{key_env}, or `az login` for Entra ID",
        closers=[cred_holder.close],
    )

"""`foundry:` — models deployed in a Microsoft Foundry project.

The project client hands out an authenticated OpenAI client:
`azure.ai.projects.aio.AIProjectClient(endpoint, credential).get_openai_client()` (base URL
`<endpoint>/openai/v1`, bearer tokens for https://ai.azure.com from the credential). Endpoint:
`base_url` of the provider, `--project-endpoint`, `FOUNDRY_PROJECT_ENDPOINT`, then
`AZURE_AI_PROJECT_ENDPOINT` (deprecated).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentopt.core.errors import ConfigError
from agentopt.models.providers.azure_auth import ProviderCredential, async_transport_kwargs
from agentopt.models.providers.openai_chat import OpenAIChatProvider, extra_headers
from agentopt.models.providers.openai_sdk import chat_provider
from agentopt.models.providers.registry import SERVER_KEYS, register_provider
from agentopt.models.resolve import project_endpoint
from agentopt.models.settings import CallSettings, ProviderConfig


@register_provider("foundry", reads=("base_url", "endpoint", "headers", "reasoning", *SERVER_KEYS))
def make_provider(
    name: str,
    config: ProviderConfig,
    settings: CallSettings,
    env: Mapping[str, str],
    *,
    credential: Any = None,
) -> OpenAIChatProvider:
    """Build the Foundry provider.

    Args:
        credential: an async Azure credential (anything with `get_token`) instead of
            `DefaultAzureCredential`; tests pass a static one.
    """
    endpoint = config.url or project_endpoint(settings, env)
    if not endpoint:
        raise ConfigError(
            f"provider '{name}' (foundry) needs a project endpoint",
            hint="pass --project-endpoint or export FOUNDRY_PROJECT_ENDPOINT="
            "https://<account>.services.ai.azure.com/api/projects/<project>",
        )
    headers = extra_headers(name, config, env)
    cred_holder = ProviderCredential(credential)
    state: dict[str, Any] = {}

    def factory() -> object:
        from azure.ai.projects.aio import AIProjectClient

        project = state["project"] = AIProjectClient(
            endpoint=endpoint, credential=cred_holder.get(), **async_transport_kwargs()
        )
        extra: dict[str, Any] = {"default_headers": headers} if headers else {}
        return project.get_openai_client(max_retries=0, timeout=settings.attempt_timeout(), **extra)

    async def close() -> None:
        project = state.pop("project", None)
        if project is not None:
            await project.close()
        await cred_holder.close()

    return chat_provider(
        name,
        config,
        settings,
        base_url=endpoint.rstrip("/") + "/openai/v1",
        client_factory=factory,
        headers=headers,
        key_hint="`az login` (DefaultAzureCredential) with access to the Foundry project",
        closers=[close],
    )

"""`ollama:`, `vllm:` and `compat:` — any OpenAI-compatible server (Ollama, vLLM, llama.cpp,
LM Studio, LiteLLM's proxy).

The key is optional and read from the env var named by `api_key_env`. The SDK is always given
an explicit key so it never falls back to `OPENAI_API_KEY` (which must not leak to a local
server); keyless servers get the placeholder "unused".
"""

from __future__ import annotations

from collections.abc import Mapping

from agentopt.core.errors import ConfigError
from agentopt.models.providers.base import Capabilities
from agentopt.models.providers.openai_chat import OpenAIChatProvider, extra_headers, lean_client
from agentopt.models.providers.openai_sdk import chat_provider, openai_client
from agentopt.models.providers.registry import SERVER_KEYS, register_provider
from agentopt.models.settings import CallSettings, ProviderConfig

OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"
VLLM_DEFAULT_URL = "http://localhost:8000/v1"
NO_KEY = "unused"
SDK_TIMEOUT_S = 3600.0


def ollama_base_url(env: Mapping[str, str]) -> str:
    """`OLLAMA_HOST` (host:port or URL) as an OpenAI base URL, else localhost:11434."""
    host = env.get("OLLAMA_HOST", "").strip().rstrip("/")
    if not host:
        return OLLAMA_DEFAULT_URL
    if "://" not in host:
        host = f"http://{host}"
    return host if host.endswith("/v1") else f"{host}/v1"


COMPAT_READS = ("base_url", "api_key_env", "headers", "reasoning", *SERVER_KEYS)


SELF_HOSTED = Capabilities(self_hosted=True, grammar=True, measured_speed=True)
"""llama.cpp, Ollama, vLLM, LM Studio, a LiteLLM proxy: the user's own server and machine."""


@register_provider("compat", "vllm", reads=COMPAT_READS, capabilities=SELF_HOSTED)
@register_provider("ollama", free=True, reads=COMPAT_READS, capabilities=SELF_HOSTED)
def make_provider(
    name: str, config: ProviderConfig, settings: CallSettings, env: Mapping[str, str]
) -> OpenAIChatProvider:
    """Build an ollama/compat provider for `config.base_url`."""
    if config.base_url:
        base_url = config.base_url
    elif config.type == "ollama":
        base_url = ollama_base_url(env)
    elif config.type == "vllm":
        base_url = VLLM_DEFAULT_URL
    else:
        raise ConfigError(
            f"provider '{name}' (compat) has no base_url",
            hint="set base_url in options.providers, or write compat:<model>@http://host:port/v1",
        )
    headers = extra_headers(name, config, env)
    key = None
    if config.api_key_env:
        key = env.get(config.api_key_env)
        if not key:
            raise ConfigError(
                f"{config.api_key_env} is not set, but provider '{name}' reads its key from it",
                hint=f"export {config.api_key_env}=..., or remove api_key_env if the server "
                "needs no key",
            )

    # The call layer's watchdog owns the limits (models.deadlines): self-hosted answers may
    # take long, and their deadline is fitted to the model's speed.
    factory = openai_client(
        key or NO_KEY, base_url, headers, lambda: settings.attempt_timeout_s or SDK_TIMEOUT_S
    )
    return chat_provider(
        name,
        config,
        settings,
        base_url=base_url,
        client_factory=factory,
        headers=headers,
        key=key,
        key_hint=config.api_key_env or "",
        # Local servers render messages through Jinja chat templates that concatenate
        # `content`: a tool-call turn needs "" there, never a missing key or null.
        string_content=True,
        lean=lean_client(base_url, key or NO_KEY, headers, env),
        # Self-hosted servers run on CPUs that may be busy: their answers stream, so the call
        # layer cuts an attempt only when no token comes (models.deadlines) — unless their
        # answers come whole well inside the stall window (deadlines.plain_window).
        stream=True,
    )

"""Model names → providers (models.md §1).

A model is named `[provider:]model`, optionally `@base_url` (`compat:qwen2.5@http://localhost:8000/v1`).
`provider` is a provider type (openai, azure, foundry, ollama, compat, local, mock) or a name
declared in eval.yaml `options.providers`. A bare name resolves, first that applies:
a declared provider → `foundry` when a project endpoint is configured → `azure` when
`AZURE_OPENAI_ENDPOINT` is set → `openai` when `OPENAI_API_KEY` is set → the embedded model,
with one notice saying so.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agentopt.core.errors import ConfigError
from agentopt.models.providers.registry import is_provider_type, provider_types
from agentopt.models.settings import CallSettings, ProviderConfig

LOCAL_CHAT_MODEL = "smollm2-135m"
LOCAL_EMBED_MODEL = "minilm"
OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"
DEFAULT_EMBED_MODEL = f"local:{LOCAL_EMBED_MODEL}"

# Fine-tuned OpenAI models are named `ft:gpt-4o-mini:org::id`: `ft` is not a provider.
_NOT_PROVIDER_PREFIXES = {"ft"}

FALLBACK_NOTICE = (
    "No model provider is configured, so '{requested}' runs on the embedded {used}: a {size} "
    "model that works offline, good for trying agentopt, NOT a trustworthy judge. For real "
    "results set OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT or FOUNDRY_PROJECT_ENDPOINT, or declare "
    "a provider in eval.yaml options.providers (e.g. ollama or any OpenAI-compatible server)."
)


@dataclass(frozen=True)
class ModelRef:
    """What a model name resolved to.

    Attributes:
        spec: the name as written.
        provider: the provider instance name (a type, or a name from options.providers).
        config: that provider's configuration.
        model: the model (or Azure deployment) name sent to the provider.
        auto_fallback: True when a bare name fell back to the embedded model.
        server: the base URL the calls go to when it is not the provider's public default
            (a compat server, `OPENAI_BASE_URL`), else None.
    """

    spec: str
    provider: str
    config: ProviderConfig
    model: str
    auto_fallback: bool = False
    server: str | None = None

    @property
    def type(self) -> str:
        return self.config.type

    @property
    def qualified(self) -> str:
        """`provider:model`: the key of per-model accounting (capabilities, unpriced)."""
        return f"{self.provider}:{self.model}"

    @property
    def identity(self) -> str:
        """What the model is, as every view shows it: `provider:model`, with `@server` when
        the calls go to a server of the user's own (`compat:gpt-4.1-mini@http://127.0.0.1:8080/v1`),
        so a bare name routed to a local server is never mistaken for the vendor's model."""
        return self.qualified + (f"@{shown_server(self.server)}" if self.server else "")

    @property
    def local_server(self) -> bool:
        """The calls go to this machine (loopback): nobody bills them."""
        return is_loopback_url(self.server)


def is_loopback_url(url: str | None) -> bool:
    """Whether `url`'s host is this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shown_server(url: str) -> str:
    """A server URL as views show it: scheme, host, port and path. Its query (`?sig=…`) and any
    `user:password@` can carry credentials, so neither is shown."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return url.split("?", 1)[0].rsplit("@", 1)[-1]
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?", 1)[0]


def _server(config: ProviderConfig, env: Mapping[str, str]) -> str | None:
    """The non-default base URL of a provider's calls (None: the provider's public one)."""
    if config.base_url:
        return config.base_url
    if config.type == "openai":
        return env.get("OPENAI_BASE_URL") or None
    return None


def project_endpoint(
    settings: CallSettings, environ: Mapping[str, str] | None = None
) -> str | None:
    """Foundry project endpoint: setting → FOUNDRY_PROJECT_ENDPOINT → AZURE_AI_PROJECT_ENDPOINT."""
    env = os.environ if environ is None else environ
    return (
        settings.project_endpoint
        or env.get("FOUNDRY_PROJECT_ENDPOINT")
        or env.get("AZURE_AI_PROJECT_ENDPOINT")
        or None
    )


def split_model_spec(
    spec: str, declared: Mapping[str, ProviderConfig]
) -> tuple[str | None, str, str | None]:
    """`[provider:]model[@base_url]` → (provider or None, model, base_url or None)."""
    text = spec.strip()
    if not text:
        raise ConfigError(
            "empty model name", hint="name a model, e.g. gpt-4.1-mini or local:smollm2-135m"
        )
    head, at, url = text.partition("@")
    base_url = url.strip() or None if at else None
    prefix, colon, rest = head.partition(":")
    if not colon:
        return None, head, base_url
    if prefix in declared or is_provider_type(prefix):
        if not rest:
            raise ConfigError(f"model name '{spec}' has a provider but no model after the ':'")
        return prefix, rest, base_url
    if prefix in _NOT_PROVIDER_PREFIXES:
        return None, head, base_url
    valid = ", ".join([*provider_types(), *declared])
    raise ConfigError(
        f"unknown provider '{prefix}' in model name '{spec}' (known: {valid})",
        hint="declare it in eval.yaml options.providers, or write the model with a known "
        "provider, e.g. ollama:qwen2.5:7b",
    )


def resolve_model(
    spec: str,
    settings: CallSettings,
    environ: Mapping[str, str] | None = None,
    *,
    purpose: str = "chat",
) -> ModelRef:
    """Resolve a model name to a provider and model.

    Args:
        spec: `[provider:]model[@base_url]`.
        settings: declared providers and the project endpoint setting.
        environ: environment to read (default os.environ); tests pass their own.
        purpose: "chat" or "embed" — which embedded model a bare name falls back to.
    """
    env = os.environ if environ is None else environ
    declared = settings.providers
    prefix, model, base_url = split_model_spec(spec, declared)
    if prefix is None:
        return _resolve_bare(spec, model, base_url, settings, env, purpose)
    if prefix in declared:
        config = declared[prefix]
        if base_url:
            config = config.model_copy(update={"base_url": base_url})
        return ModelRef(spec, prefix, config, model, server=_server(config, env))
    config = ProviderConfig(type=prefix, base_url=base_url)
    if prefix == "compat" and not base_url:
        raise ConfigError(
            f"'{spec}': a compat model needs the server's base URL",
            hint="write compat:<model>@http://host:port/v1, or declare the server in eval.yaml "
            "options.providers: {mylab: {type: compat, base_url: ...}}",
        )
    if prefix == "local":
        _check_local_name(spec, model, env)
    return ModelRef(spec, prefix, config, model, server=_server(config, env))


def _resolve_bare(
    spec: str,
    model: str,
    base_url: str | None,
    settings: CallSettings,
    env: Mapping[str, str],
    purpose: str,
) -> ModelRef:
    declared = settings.providers
    if declared:
        name = next((n for n, c in declared.items() if c.default), next(iter(declared)))
        config = declared[name]
        if base_url:
            config = config.model_copy(update={"base_url": base_url})
        return ModelRef(spec, name, config, model, server=_server(config, env))
    if base_url:
        config = ProviderConfig(type="compat", base_url=base_url)
        return ModelRef(spec, "compat", config, model, server=base_url)
    if project_endpoint(settings, env):
        return ModelRef(spec, "foundry", ProviderConfig(type="foundry"), model)
    if env.get("AZURE_OPENAI_ENDPOINT"):
        return ModelRef(spec, "azure", ProviderConfig(type="azure"), model)
    if env.get("OPENAI_API_KEY"):
        config = ProviderConfig(type="openai")
        return ModelRef(spec, "openai", config, model, server=_server(config, env))
    local = LOCAL_EMBED_MODEL if purpose == "embed" else LOCAL_CHAT_MODEL
    return ModelRef(spec, "local", ProviderConfig(type="local"), local, auto_fallback=True)


def local_gguf(env: Mapping[str, str] | None = None) -> str | None:
    """The file name of the GGUF `AGENTOPT_LOCAL_GGUF` points the embedded model at, if any."""
    env = os.environ if env is None else env
    path = (env.get("AGENTOPT_LOCAL_GGUF") or "").strip()
    return Path(path).name if path else None


def shown_model(spec: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """A model name as headers and results show it: an embedded chat model names the GGUF it
    runs when `AGENTOPT_LOCAL_GGUF` points at another one ("local:smollm2-135m (qwen.gguf)")."""
    gguf = local_gguf(env)
    if spec and gguf and spec.startswith("local:") and spec != DEFAULT_EMBED_MODEL:
        return f"{spec} ({gguf})"
    return spec


def fallback_notice(ref: ModelRef, env: Mapping[str, str] | None = None) -> str:
    """The one line printed when a bare name fell back to the embedded model."""
    gguf = local_gguf(env)
    if ref.model == LOCAL_EMBED_MODEL:
        used, size = "local:minilm embedding model (all-MiniLM-L6-v2)", "22M-parameter"
    elif gguf:
        used = f"local:{LOCAL_CHAT_MODEL}, running {gguf} (AGENTOPT_LOCAL_GGUF)"
        size = "locally run"
    else:
        used, size = f"local:{LOCAL_CHAT_MODEL} (SmolLM2-135M-Instruct)", "135M-parameter"
    return FALLBACK_NOTICE.format(requested=ref.spec, used=used, size=size)


def _check_local_name(spec: str, model: str, env: Mapping[str, str]) -> None:
    if model in (LOCAL_CHAT_MODEL, LOCAL_EMBED_MODEL) or env.get("AGENTOPT_LOCAL_GGUF"):
        return
    raise ConfigError(
        f"unknown embedded model '{spec}' "
        f"(known: local:{LOCAL_CHAT_MODEL}, local:{LOCAL_EMBED_MODEL})",
        hint="set AGENTOPT_LOCAL_GGUF=/path/to/model.gguf to run another GGUF file as "
        "local:<name>, or serve it with ollama and use ollama:<name>",
    )

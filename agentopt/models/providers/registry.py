"""Provider types → factories (style.md rules 2 and 11).

A provider module registers its factory, `make_provider(name, config, settings, env,
**kwargs)`, with `@register_provider("type")`; plugins do the same from a module named by an
`agentopt.providers` entry point. Modules keep their SDK imports inside functions, so loading
every provider module to find one stays cheap and `agentopt --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from agentopt.core.errors import ConfigError
from agentopt.core.plugins import PROVIDERS_GROUP, PluginRegistry
from agentopt.models.providers.base import HOSTED, Capabilities, Provider
from agentopt.models.settings import CallSettings, ProviderConfig

ProviderFactory = Callable[..., Provider]
F = TypeVar("F", bound=ProviderFactory)


@dataclass(frozen=True)
class ProviderInfo:
    """A registered provider type.

    Attributes:
        factory: `factory(name, config, settings, env, **kwargs)` -> a `Provider`.
        capabilities: what the type is (in-process, self-hosted, grammar, measured speed).
        free: its calls cost nothing (local and mock models, a local ollama): never priced,
            never reported as unpriced.
        reads: the `options.providers.<name>` keys the factory acts on (besides `type` and
            `default`); a key set outside them is ignored, and the call layer says so. None
            (a plugin that does not say): no such notice.
    """

    factory: ProviderFactory
    free: bool = False
    reads: tuple[str, ...] | None = None
    capabilities: Capabilities = HOSTED


PROVIDERS: PluginRegistry[ProviderInfo] = PluginRegistry(
    "provider type", PROVIDERS_GROUP, ("agentopt.models.providers",)
)


def register_provider(
    *types: str,
    free: bool = False,
    reads: tuple[str, ...] | None = None,
    capabilities: Capabilities = HOSTED,
) -> Callable[[F], F]:
    """Decorator: `options.providers.<name>.type: <type>` and `<type>:model` names are served
    by this factory (one factory may serve several types, e.g. compat and ollama). `reads`
    lists the provider configuration keys it acts on, `capabilities` what the type is (see
    `ProviderInfo`)."""

    def decorate(factory: F) -> F:
        for name in types:
            PROVIDERS.add(name, ProviderInfo(factory, free, reads, capabilities))
        return factory

    return decorate


ALWAYS_READ = frozenset({"type", "default"})
"""Provider keys the resolver acts on whatever the type."""
SERVER_KEYS = ("structured_output", "tool_calling")
"""Provider keys the call layer acts on for every model server it talks to (how it asks for
JSON and for tool calls): part of every remote provider type's `reads`."""


def ignored_key_notices(name: str, config: ProviderConfig) -> list[str]:
    """One notice per key set in provider `name`'s configuration that its type does not act
    on (none for a plugin that does not declare its `reads`)."""
    info = PROVIDERS.get(config.type)
    if info is None or info.reads is None:
        return []
    reads = ", ".join(info.reads) or "no settings"
    return [
        f"eval.yaml options.providers.{name}.{key} is not used by provider type {config.type}: "
        f"ignored (it reads: {reads})"
        for key in sorted(config.model_fields_set - ALWAYS_READ - set(info.reads))
    ]


def provider_types() -> list[str]:
    """Every registered provider type, built-ins first."""
    return PROVIDERS.names()


def is_provider_type(name: str) -> bool:
    return PROVIDERS.get(name) is not None


def is_free(provider_type: str) -> bool:
    """Whether calls to this provider type cost nothing."""
    info = PROVIDERS.get(provider_type)
    return info is not None and info.free


def capabilities_of(provider_type: str) -> Capabilities:
    """What a provider type declared when it registered (a hosted API when unknown)."""
    info = PROVIDERS.get(provider_type)
    return HOSTED if info is None else info.capabilities


def build_provider(
    name: str,
    config: ProviderConfig,
    settings: CallSettings,
    env: Mapping[str, str],
    **kwargs: Any,
) -> Provider:
    """A provider instance for `config` (raises ConfigError on missing endpoint or key, and
    when the factory's object does not keep the `Provider` contract)."""
    info = PROVIDERS.get(config.type)
    if info is None:
        known = ", ".join(sorted(provider_types()))
        raise ConfigError(f"unknown provider type '{config.type}' for '{name}' (known: {known})")
    provider = info.factory(name, config, settings, env, **kwargs)
    if not isinstance(provider, Provider):
        raise ConfigError(
            f"provider type '{config.type}': its factory returned a "
            f"{type(provider).__name__}, which is not a Provider",
            hint="subclass agentopt.models.providers.Provider (it gives the optional hooks "
            "their defaults)",
        )
    return provider

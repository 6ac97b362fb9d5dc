"""agentopt.models.providers: small adapters behind the call layer (style.md rule 3).

Each module registers its `make_provider(name, config, settings, env)` with
`@register_provider`; the registry imports them on first use, and heavy SDKs load only inside
the factories, when their provider is used.
"""

from agentopt.models.providers.base import Capabilities, Provider
from agentopt.models.providers.mock import MockProvider, register_mock, unregister_mock
from agentopt.models.providers.registry import (
    PROVIDERS,
    ProviderInfo,
    build_provider,
    register_provider,
)

__all__ = [
    "PROVIDERS",
    "Capabilities",
    "MockProvider",
    "Provider",
    "ProviderInfo",
    "build_provider",
    "register_mock",
    "register_provider",
    "unregister_mock",
]

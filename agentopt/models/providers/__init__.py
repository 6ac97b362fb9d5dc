"""agentopt.models.providers: small adapters behind the call layer (style.md rule 3).

Each module exposes `make_provider(name, config, settings, env)`; the registry imports them
lazily so heavy SDKs load only when their provider is used.
"""

from agentopt.models.providers.base import Provider
from agentopt.models.providers.mock import MockProvider, register_mock, unregister_mock
from agentopt.models.providers.registry import FACTORY_MODULES, build_provider

__all__ = [
    "FACTORY_MODULES",
    "MockProvider",
    "Provider",
    "build_provider",
    "register_mock",
    "unregister_mock",
]

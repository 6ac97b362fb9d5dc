"""Provider types → factories, imported lazily so the CLI starts fast (style.md rule 2)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from agentopt.core.errors import ConfigError
from agentopt.models.settings import CallSettings, ProviderConfig

# type → module with `make_provider(name, config, settings, env, **kwargs)`.
FACTORY_MODULES: dict[str, str] = {
    "openai": "agentopt.models.providers.openai",
    "azure": "agentopt.models.providers.azure",
    "foundry": "agentopt.models.providers.foundry",
    "ollama": "agentopt.models.providers.compat",
    "compat": "agentopt.models.providers.compat",
    "local": "agentopt.models.providers.local",
    "mock": "agentopt.models.providers.mock",
}


def build_provider(
    name: str,
    config: ProviderConfig,
    settings: CallSettings,
    env: Mapping[str, str],
    **kwargs: Any,
) -> Any:
    """A provider instance for `config` (raises ConfigError on missing endpoint or key)."""
    module_name = FACTORY_MODULES.get(config.type)
    if module_name is None:
        known = ", ".join(sorted(FACTORY_MODULES))
        raise ConfigError(f"unknown provider type '{config.type}' for '{name}' (known: {known})")
    module = importlib.import_module(module_name)
    return module.make_provider(name, config, settings, env, **kwargs)

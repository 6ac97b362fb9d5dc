"""Azure credentials and transports for the async Azure SDK clients (azure, foundry).

The async Azure SDK pipelines default to an aiohttp transport, and aiohttp is not a dependency
of agentopt: without it, `AsyncioRequestsTransport` (requests in a worker thread) serves the
few HTTP calls the credential and project clients make themselves. Model calls never use it:
they go through the openai SDK's own HTTP client.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def async_transport_kwargs() -> dict[str, Any]:
    """`{"transport": ...}` for an async Azure client when aiohttp is not installed, else {}."""
    if importlib.util.find_spec("aiohttp") is not None:
        return {}
    from azure.core.pipeline.transport import AsyncioRequestsTransport

    return {"transport": AsyncioRequestsTransport()}


def default_credential() -> Any:
    """An async `DefaultAzureCredential` (env, managed identity, az/azd CLI login, ...)."""
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential(**async_transport_kwargs())


class ProviderCredential:
    """The credential a provider's client signs with: the one the caller gave (tests pass a
    static one; it stays the caller's to close), else a `DefaultAzureCredential` made for the
    client, which `close()` closes with the provider (azure and foundry providers)."""

    def __init__(self, given: Any = None) -> None:
        self.given = given
        self._made: Any = None

    def get(self) -> Any:
        """The given credential, else a new default one (the client factory's, each call)."""
        if self.given is not None:
            return self.given
        self._made = default_credential()
        return self._made

    async def close(self) -> None:
        made, self._made = self._made, None
        if made is not None:
            await made.close()

"""The provider protocol: providers stay dumb (one async method); the call layer owns
caching, limits, retries, cost and logging (style.md rule 3)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agentopt.models.types import ChatRequest, ChatResponse


@runtime_checkable
class Provider(Protocol):
    """A model provider adapter.

    `id` identifies the provider in cache keys and messages ("openai", "azure", "mock", ...).
    `base_url` is part of the cache key (two servers with the same model name differ).
    `complete` raises `agentopt.core.errors.ModelCallError` with a `kind` classification
    on failure; it never retries by itself.
    """

    id: str
    base_url: str

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse: ...

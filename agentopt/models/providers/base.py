"""The provider protocol: providers stay dumb (one async method); the call layer owns
caching, limits, retries, cost and logging (style.md rule 3)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol, runtime_checkable

from agentopt.models.types import ChatRequest, ChatResponse

CURRENT_REPEAT: ContextVar[int] = ContextVar("agentopt_current_repeat", default=0)
"""The repeat index of the call being served. The call layer sets it; a provider that samples
with its own seed (the embedded model) derives the seed from it, so repeats differ when
temperature > 0 — as they do on a remote model."""


@runtime_checkable
class Provider(Protocol):
    """A model provider adapter.

    `id` identifies the provider in cache keys and messages ("openai", "azure", "mock", ...).
    `base_url` is part of the cache key (two servers with the same model name differ).
    `complete` raises `agentopt.core.errors.ModelCallError` with a `kind` classification
    on failure; it never retries by itself. Optional: `embed(model, texts) -> Embeddings`,
    `aclose()`, `secrets` (credential values to mask), `wire_request(model, request)` (the body
    sent, for debug logs).
    """

    id: str
    base_url: str

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse: ...

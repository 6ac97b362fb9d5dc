"""The provider contract: providers stay dumb (one async method); the call layer owns caching,
limits, retries, cost and logging (style.md rule 3).

A provider subclasses `Provider` and implements `complete`; the other hooks have defaults the
call layer relies on, so it never probes a provider by attribute name. What a provider *type*
is (in-process, self-hosted, grammar-decoded, speed-measured) is declared once, with
`Capabilities`, when its factory registers (`registry.register_provider`) — not listed by type
name wherever it matters.

What the cache needs from an answer is `ChatResponse.finish_reason`: "stop" or "tool_calls" is
a whole answer, anything else ("length", "content_filter") is not cached. A provider that does
not report one (None) says nothing against the answer: it is cached like a "stop" when it has
text or tool calls (`call_cache.is_complete`), rather than silently never.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentopt.core.errors import ModelCallError
from agentopt.models.types import ChatRequest, ChatResponse, Embeddings

CURRENT_REPEAT: ContextVar[int] = ContextVar("agentopt_current_repeat", default=0)
"""The repeat index of the call being served. The call layer sets it; a provider that samples
with its own seed (the embedded model) derives the seed from it, so repeats differ when
temperature > 0 — as they do on a remote model."""


@dataclass(frozen=True)
class Capabilities:
    """What a provider type is, declared when it registers. The defaults describe a hosted API
    (OpenAI, Azure, Foundry, a plugin's remote service)."""

    in_process: bool = False
    """Answers inside agentopt (the embedded model, `mock:`): there is no server whose
    refusals are learned and remembered (`capabilities.ServerCapabilities`)."""
    self_hosted: bool = False
    """A server the user runs (llama.cpp, Ollama, vLLM, a LiteLLM proxy): priced only by
    eval.yaml `options.prices`, never at a vendor's list price."""
    grammar: bool = False
    """Decodes JSON under a grammar compiled from the schema, so bounded schemas (lengths,
    counts, patterns) are safe to send; a self-hosted server does unless its
    `structured_output` is `json_object` or `prompt`."""
    measured_speed: bool = False
    """Its speed is the machine's: deadlines are fitted to the measured tokens per second and
    a stalled stream is cut (`deadlines.watched`)."""


HOSTED = Capabilities()
"""A hosted API: the default of a provider type that declares nothing."""


class Provider(ABC):
    """A model provider adapter.

    `id` names the provider in messages ("openai", "azure", "mock", ...). `base_url` is part of
    the cache key (two servers with the same model name differ). `complete` raises
    `agentopt.core.errors.ModelCallError` with a `kind` classification on failure; it never
    retries by itself, and its `ChatResponse` says how the answer ended (`finish_reason`, see
    the module docstring). `secrets` are credential values masked in logs, caches and errors.
    """

    id: str
    base_url: str = ""
    secrets: Sequence[str] = ()

    @abstractmethod
    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        """One chat completion, not retried."""

    async def embed(self, model: str, texts: list[str]) -> Embeddings:
        """Embedding vectors; the default is a provider without an embeddings endpoint."""
        raise ModelCallError(
            f"provider '{self.id}' has no embeddings endpoint",
            kind="bad_request",
            provider=self.id,
            model=model,
        )

    @property
    def embeds(self) -> bool:
        """Whether this provider overrides `embed` (the call layer refuses before sending)."""
        return type(self).embed is not Provider.embed

    def wire_request(self, model: str, request: ChatRequest) -> Any:
        """The body as sent, for `--debug` logs (default: the request as JSON)."""
        return request.model_dump(mode="json", exclude_none=True)

    async def aclose(self) -> None:
        """Close clients and sessions (default: nothing to close)."""
        return None

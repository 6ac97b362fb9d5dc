"""The cache step of the call layer: what it keeps of a model call and how it replays it.

Chat answers are keyed by provider type, server, model, the request's semantic fields and the
repeat (`cache_key.py`); embeddings per text. Only whole answers are kept (`is_complete`), and
secrets are masked both ways: on the way in, so a server that echoes the Authorization header
never leaves the key in cache.sqlite (a CI artifact); on the way out, so a row an older version
stored, or one holding a secret that was not known when it was written, is never replayed
verbatim. The call layer (`call.py`) decides when to ask; this module decides what is kept.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from agentopt.core.redaction import current as current_redactor
from agentopt.models.cache import ResponseCache
from agentopt.models.cache_key import chat_cache_key, embed_cache_key
from agentopt.models.cache_sql import payload_json
from agentopt.models.providers.base import Provider
from agentopt.models.resolve import ModelRef
from agentopt.models.types import ChatRequest, ChatResponse

NOT_KEPT: set[str] = {"cached", "latency_s", "cost_usd"}
"""What a cached answer leaves out: a replay sets them (cached, no latency, no cost)."""
COMPLETE_REASONS = frozenset({"stop", "tool_calls"})
"""How a whole answer ends; any other `finish_reason` ("length", "content_filter") is not kept."""


class CallCache:
    """The response cache as the call layer uses it (None: caching is off for the command).

    Args:
        cache: the command's cache (`CallState.cache`, or a cluster proxy of it).
        read: False with `--no-cache`: nothing is replayed, answers are still written.
    """

    def __init__(self, cache: ResponseCache | None, *, read: bool) -> None:
        self.cache = cache
        self.read = read

    @property
    def keeps(self) -> bool:
        """Whether answers are written (they are even with `--no-cache`)."""
        return self.cache is not None

    def chat_key(
        self, ref: ModelRef, provider: Provider, request: ChatRequest, repeat: int
    ) -> str | None:
        """The key of a chat call (None: caching is off)."""
        if self.cache is None:
            return None
        return chat_cache_key(
            provider_type=ref.type,
            base_url=provider.base_url,
            model=ref.model,
            request=request,
            repeat=repeat,
        )

    async def replay(self, key: str | None, provider: Provider, name: str) -> ChatResponse | None:
        """The cached answer of `key`, secrets masked, or None (a miss, reads off, or a row in
        an older version's other shape)."""
        if key is None or self.cache is None or not self.read:
            return None
        return cached_response(await self.cache.get(key), list(provider.secrets), name)

    async def keep(
        self,
        key: str | None,
        ref: ModelRef,
        response: ChatResponse,
        secrets: list[str],
        *,
        request: ChatRequest,
        pool: str,
    ) -> bool:
        """Store a whole answer, masked (a cut-off or empty one is never kept): whether it
        was."""
        if key is None or self.cache is None or not is_complete(response, request, pool):
            return False
        # One serialisation of the model, scanned and stored; dumped and walked only when
        # the scan finds a mark (or pydantic-core cannot write it).
        matcher = current_redactor(secrets)
        text = _stored_json(response)
        if text is None or not matcher.json_text_clean(text):
            payload = matcher.data(response.model_dump(mode="json", exclude=NOT_KEPT))
            text = payload_json(payload)
        await self.cache.put(key, kind="chat", provider=ref.type, model=ref.model, text=text)
        return True

    def vector_keys(self, ref: ModelRef, provider: Provider, texts: list[str]) -> dict[str, str]:
        """Each distinct text → its embedding key."""
        return {
            t: embed_cache_key(
                provider_type=ref.type, base_url=provider.base_url, model=ref.model, text=t
            )
            for t in texts
        }

    async def vectors(self, keys: dict[str, str]) -> dict[str, list[float]]:
        """The cached vectors of the texts of `keys` (absent: not cached)."""
        if self.cache is None or not self.read:
            return {}
        cached = await self.cache.get_many(list(keys.values()))
        return {
            t: cached[k]["vector"]
            for t, k in keys.items()
            if isinstance(cached.get(k, {}).get("vector"), list)
        }

    async def keep_vectors(
        self, keys: dict[str, str], ref: ModelRef, texts: list[str], vectors: list[list[float]]
    ) -> None:
        if self.cache is None:
            return
        await self.cache.put_many(
            [
                (keys[t], "embed", ref.type, ref.model, {"vector": v})
                for t, v in zip(texts, vectors, strict=True)
            ]
        )


def _stored_json(response: ChatResponse) -> str | None:
    """`payload_json` of the answer's dump, written from the model (no dump in between)."""
    try:
        return to_json(response, exclude=NOT_KEPT, inf_nan_mode="constants").decode("utf-8")
    except PydanticSerializationError:  # a lone surrogate: the dump's road escapes it
        return None


def cached_response(
    payload: dict[str, Any] | None, secrets: list[str], provider: str
) -> ChatResponse | None:
    """A cache entry as a response, secrets masked; an older version's other shape: a miss.

    The entry's JSON is scanned once and walked only when the scan finds something to mask
    (the walk of every string was 40% of a cached rerun's call layer)."""
    if payload is None:
        return None
    matcher = current_redactor(secrets)
    if not matcher.json_text_clean(payload_json(payload)):
        payload = matcher.data(payload)
    try:
        return ChatResponse.model_validate(
            {**payload, "cached": True, "cost_usd": 0.0, "latency_s": 0.0, "provider": provider}
        )
    except ValidationError:
        return None


def is_complete(response: ChatResponse, request: ChatRequest, pool: str) -> bool:
    """Only whole answers are cached: a truncated or filtered answer is not worth replaying.
    An answer whose provider reports no `finish_reason` is taken as whole (it is used as
    whole everywhere else; see `providers.base`).

    Except an agent's plain answer cut at its own `max_tokens`: that is the answer the run
    scored, so an unchanged rerun must replay it — asked again, a server with a prompt cache
    (llama.cpp's, by default) answers differently even at temperature 0."""
    if not (response.text.strip() or response.tool_calls):
        return False
    if response.finish_reason is None or response.finish_reason in COMPLETE_REASONS:
        return True
    plain = request.response_format is None and not response.tool_calls
    return response.finish_reason == "length" and pool == "agent" and plain

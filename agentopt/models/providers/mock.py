"""`mock:` — a scripted model addressable by name, for library tests and examples.

Like Inspect's `mockllm/model` and DSPy's `DummyLM`: it stands in for a remote model, never
for the code under test. Built-ins:
- `mock:echo`   answers with the last user message;
- `mock:json`   answers `{}` (or the first example of a JSON schema's `default`s);
Tests register their own script with `register_mock(name, fn)` where `fn(request)` returns a
`ChatResponse`, a `Message`, or a plain string.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping

from agentopt.contracts.usage import Usage
from agentopt.core.errors import ModelCallError
from agentopt.models.providers.base import Capabilities, Provider
from agentopt.models.providers.registry import register_provider
from agentopt.models.settings import CallSettings, ProviderConfig
from agentopt.models.types import ChatRequest, ChatResponse, Embeddings, Message

MockReply = ChatResponse | Message | str
MockFn = Callable[[ChatRequest], MockReply | Awaitable[MockReply]]

_SCRIPTS: dict[str, MockFn] = {}


def register_mock(name: str, fn: MockFn) -> None:
    """Make `mock:<name>` answer with `fn(request)`."""
    _SCRIPTS[name] = fn


def unregister_mock(name: str) -> None:
    _SCRIPTS.pop(name, None)


def _echo(request: ChatRequest) -> str:
    for m in reversed(request.messages):
        if m.role == "user":
            return m.content or ""
    return ""


_SCRIPTS["echo"] = _echo
_SCRIPTS["json"] = lambda request: "{}"


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def bag_of_words_embedding(text: str, dim: int = 256) -> list[float]:
    """Deterministic hashed bag-of-words vector (unit length) for `mock:` embeddings."""
    import hashlib
    import math
    import re

    vec = [0.0] * dim
    for token in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.sha256(token.encode()).digest()[:4], "big")
        vec[h % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class MockProvider(Provider):
    """Provider for `mock:<name>` models."""

    id = "mock"
    base_url = "mock://"

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        fn = _SCRIPTS.get(model)
        if fn is None:
            known = ", ".join(sorted(_SCRIPTS))
            raise ModelCallError(
                f"mock model '{model}' is not registered (known: {known})",
                kind="not_found",
                provider="mock",
                model=model,
            )
        reply = fn(request)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, ChatResponse):
            return reply
        message = reply if isinstance(reply, Message) else Message(role="assistant", content=reply)
        prompt_text = "".join(m.content or "" for m in request.messages)
        finish = "tool_calls" if message.tool_calls else "stop"
        return ChatResponse(
            message=message,
            finish_reason=finish,
            usage=Usage(
                input_tokens=_estimate_tokens(prompt_text),
                output_tokens=_estimate_tokens(message.content or ""),
            ),
            model=model,
            provider="mock",
        )

    async def embed(self, model: str, texts: list[str]) -> Embeddings:
        """`mock:bow` (any name): hashed bag-of-words vectors, for tests of embedding users."""
        return Embeddings(
            vectors=[bag_of_words_embedding(t) for t in texts],
            usage=Usage(input_tokens=sum(_estimate_tokens(t) for t in texts)),
        )

    async def aclose(self) -> None:
        return None


@register_provider("mock", free=True, reads=(), capabilities=Capabilities(in_process=True))
def make_provider(
    name: str, config: ProviderConfig, settings: CallSettings, env: Mapping[str, str]
) -> MockProvider:
    """Factory used by the provider registry."""
    return MockProvider()

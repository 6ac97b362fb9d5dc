"""The adapter every OpenAI-protocol provider shares (openai, azure, foundry, ollama, compat).

It stays dumb (style.md rule 3): one request, one answer or one classified error. Two ways to
send it: the lean path (`models.http_client`: the JSON body encoded once, the answer parsed
straight into our types) when the provider gives a `lean` client, else the SDK client, built
lazily on the first call, always with `max_retries=0` — the call layer owns retrying.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

from agentopt.contracts.usage import Usage
from agentopt.core import redaction
from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.models.call_progress import CallProgress, current_progress
from agentopt.models.classify import answer_too_large, classify, unusable_answer
from agentopt.models.http_client import BodyTooLarge, HTTPStatusError, LeanClient, direct_route
from agentopt.models.providers.base import Provider
from agentopt.models.providers.chat_format import request_to_wire, response_from_wire
from agentopt.models.providers.sse import completion_from_sse, count_events
from agentopt.models.reasoning import is_reasoning_model
from agentopt.models.settings import ProviderConfig
from agentopt.models.types import ChatRequest, ChatResponse, Embeddings

ClientFactory = Callable[[], Any]
Closer = Callable[[], Awaitable[None]]


def extra_headers(name: str, config: ProviderConfig, env: Mapping[str, str]) -> dict[str, str]:
    """The provider's `headers:` with their values read from the environment."""
    out: dict[str, str] = {}
    for header, var in config.headers.items():
        value = env.get(var)
        if not value:
            raise ConfigError(
                f"{var} is not set, but provider '{name}' sends it as the {header} header",
                hint=f"export {var}=..., or remove the header from options.providers.{name}",
            )
        out[header] = value
    return out


def lean_client(
    base_url: str, key: str, headers: Mapping[str, str], env: Mapping[str, str]
) -> Callable[[], LeanClient] | None:
    """The lean client's factory for a bearer-key server, or None when the SDK must send
    (a proxy applies, macOS TLS, `AGENTOPT_HTTP_CLIENT=sdk`: `http_client.direct_route`)."""
    if not direct_route(base_url, env):
        return None
    return partial(LeanClient, base_url, {"authorization": f"Bearer {key}", **headers})


class OpenAIChatProvider(Provider):
    """A provider speaking chat.completions through an `openai.AsyncOpenAI`-like client.

    Args:
        id: provider instance name used in messages ("openai", "azure", "mylab").
        base_url: the server's base URL (part of the cache key).
        client_factory: builds the SDK client (called once, on first use).
        reasoning: forced reasoning flag of the provider, or None to use the model table.
        reasoning_patterns: extra reasoning-model globs from configuration.
        secrets: credential values to mask in error text (in addition to env secrets).
        key_hint: where the credentials come from, for auth error hints ("OPENAI_API_KEY").
        closers: extra async cleanups (Azure credentials, project clients).
        string_content: send `content: ""` rather than null beside `tool_calls` (local
            servers whose chat templates need a string).
        lean: builds the lean HTTP client (called once, on first use) when the provider may
            talk to the server directly (`http_client.direct_route`); None: the SDK.
        stream: ask for a streamed answer on the lean path (self-hosted servers), so the
            call layer sees tokens arrive (`models.call_progress`); the answer is put back
            together into one completion. A server that answers with plain JSON anyway is
            read as such; one that refuses `stream` is asked without it from then on. A call
            the call layer allows to go plain (its answer comes whole well inside the stall
            window: `deadlines.plain_window`) is asked without streaming.
    """

    def __init__(
        self,
        *,
        id: str,
        base_url: str,
        client_factory: ClientFactory,
        reasoning: bool | None = None,
        reasoning_patterns: list[str] | None = None,
        secrets: list[str] | None = None,
        key_hint: str = "",
        closers: list[Closer] | None = None,
        string_content: bool = False,
        lean: Callable[[], LeanClient] | None = None,
        stream: bool = False,
    ) -> None:
        self.id = id
        self.base_url = base_url
        self.secrets = [s for s in (secrets or []) if s]
        redaction.remember(self.secrets)  # its key and header values: masked in every file
        self._factory = client_factory
        self._reasoning = reasoning
        self._patterns = list(reasoning_patterns or [])
        self._key_hint = key_hint
        self._closers = list(closers or [])
        self._client: Any = None
        self._string_content = string_content
        self._lean_factory = lean
        self._lean: LeanClient | None = None
        self._stream = stream and lean is not None
        self._reasoning_of: dict[str, bool] = {}

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._factory()
        return self._client

    def is_reasoning(self, model: str) -> bool:
        # Asked on every call; the answer depends only on the name (the table is shipped data).
        known = self._reasoning_of.get(model)
        if known is None:
            known = is_reasoning_model(model, extra_patterns=self._patterns, forced=self._reasoning)
            self._reasoning_of[model] = known
        return known

    def wire_request(self, model: str, request: ChatRequest) -> dict[str, Any]:
        """The exact body this provider sends for `request` (also used for debug logs)."""
        return request_to_wire(
            model,
            request,
            reasoning=self.is_reasoning(model),
            string_content=self._string_content,
        )

    @property
    def lean(self) -> bool:
        """Whether calls go through the lean HTTP client rather than the SDK."""
        return self._lean_factory is not None

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        body = self.wire_request(model, request)
        if self._lean_factory is not None:
            completion: Any = await self._chat(model, body)
        else:
            try:
                completion = await self.client.chat.completions.create(**body)
            except Exception as exc:
                raise self._error(exc, model) from exc
        if isinstance(completion, str):
            # A 200 with a non-JSON content type: the SDK hands back the raw text.
            raise self._not_json(model, completion)
        return response_from_wire(completion, provider=self.id, model=model)

    async def embed(self, model: str, texts: list[str]) -> Embeddings:
        if self._lean_factory is not None:
            data = await self._post(model, "/embeddings", {"model": model, "input": texts})
            if isinstance(data, str):
                raise self._not_json(model, data)
            try:
                rows = sorted(data.get("data") or [], key=lambda d: int(d.get("index") or 0))
                vectors = [list(map(float, r.get("embedding") or [])) for r in rows]
                tokens = int((data.get("usage") or {}).get("prompt_tokens") or 0)
            except (AttributeError, TypeError, ValueError) as exc:
                detail = f"malformed embeddings: {exc}"
                raise unusable_answer(self.id, model, detail, self.base_url) from None
        else:
            try:
                result = await self.client.embeddings.create(model=model, input=texts)
            except Exception as exc:
                raise self._error(exc, model) from exc
            vectors = [list(map(float, r.embedding)) for r in sorted(result.data, key=_index)]
            tokens = int(getattr(getattr(result, "usage", None), "prompt_tokens", 0) or 0)
        return Embeddings(vectors=vectors, usage=Usage(input_tokens=tokens))

    async def _chat(self, model: str, body: dict[str, Any]) -> dict[str, Any] | str:
        """/chat/completions on the lean path, streamed when this provider streams."""
        progress = current_progress() if self._stream else None
        if progress is not None and progress.plain_s is not None:
            progress.asked_plainly()  # its answers come whole fast (`deadlines.plain_window`)
            progress = None
        if progress is None:
            return await self._post(model, "/chat/completions", body)
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        try:
            return await self._post(model, "/chat/completions", streamed, progress)
        except ModelCallError as exc:
            if exc.kind not in ("bad_request", "unsupported") or "stream" not in exc.message:
                raise
        self._stream = False  # the server refuses to stream: ask it as before, from now on
        return await self._post(model, "/chat/completions", body)

    async def _post(
        self,
        model: str,
        path: str,
        body: dict[str, Any],
        progress: CallProgress | None = None,
    ) -> dict[str, Any] | str:
        """One request on the lean path: the parsed JSON object, or the raw text of an answer
        that is not one (which `complete` reports as such). With `progress`, the answer is
        watched as it arrives and may be a stream (put back together here)."""
        if self._lean is None:
            assert self._lean_factory is not None
            self._lean = self._lean_factory()
        extra = body.pop("extra_body", None)  # the SDK merges it into the body: so do we
        if isinstance(extra, dict):
            body = {**body, **extra}
        payload = _wire_json(body)
        on_data = None
        if progress is not None:
            progress.streaming()
            on_data = lambda data: progress.tick(count_events(data))  # noqa: E731
        try:
            answer = await self._lean.post(path, payload, on_data)
        except BodyTooLarge as exc:
            raise answer_too_large(self.id, model, exc.size) from None
        except (OSError, EOFError) as exc:
            raise self._error(exc, model) from exc
        if not 200 <= answer.status < 300:
            raise self._error(HTTPStatusError(answer.status, answer.headers, answer.body), model)
        if "text/event-stream" in answer.headers.get("content-type", "").lower():
            try:
                streamed = completion_from_sse(answer.body)
            except ValueError as exc:
                raise self._error(exc, model) from exc
            if "error" in streamed:  # an error event inside the stream: as if sent plainly
                code = (streamed["error"] or {}).get("code")
                status = code if isinstance(code, int) and 400 <= code < 600 else 500
                raw = json.dumps(streamed).encode()
                raise self._error(HTTPStatusError(status, answer.headers, raw), model)
            return streamed
        text = answer.body.decode("utf-8", errors="replace")
        if "json" not in answer.headers.get("content-type", "json").lower():
            return text  # as the SDK does: a non-JSON content type is handed back as text
        if not text.strip():
            raise unusable_answer(self.id, model, "an empty body", self.base_url)
        try:
            data = from_json(text)  # a third of `json.loads`'s time on an answer's body
        except ValueError:
            try:  # what pydantic-core refuses (a lone surrogate escape), json may read
                data = json.loads(text)
            except json.JSONDecodeError as exc:  # half a body: a proxy cut it
                msg = f"invalid JSON: {exc}"
                raise unusable_answer(self.id, model, msg, self.base_url) from exc
        return data if isinstance(data, dict) else text

    def _not_json(self, model: str, text: str) -> ModelCallError:
        shown = repr(text[:120]) if text.strip() else "an empty body"
        return unusable_answer(self.id, model, f"not OpenAI JSON: {shown}", self.base_url)

    def _error(self, exc: BaseException, model: str) -> Exception:
        return classify(
            exc,
            provider=self.id,
            model=model,
            base_url=self.base_url,
            key_hint=self._key_hint,
            secrets=list(self.secrets),
        )

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
            self._lean = None
        if self._client is not None:
            await self._client.close()
            self._client = None
        for close in self._closers:
            await close()
        self._closers = []


def _wire_json(body: dict[str, Any]) -> bytes:
    """The body as UTF-8 JSON: pydantic-core's serialiser takes a third of the standard
    library's time on a chat request (6.7 against 20 µs for one with two tools), and writes
    NaN and Infinity as `json.dumps` does. What it refuses is a lone surrogate (a task's JSON
    may spell one, `"\\ud800"`), which has no UTF-8: sent escaped, as JSON spells it."""
    try:
        return to_json(body, inf_nan_mode="constants")
    except PydanticSerializationError:
        return json.dumps(body).encode("ascii")


def _index(row: Any) -> int:
    return int(row.index)

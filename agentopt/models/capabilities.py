"""What a server accepts, found out once and remembered, and requests shaped to fit it.

One `ServerCapabilities` per provider type + base URL + model. On the first structured call
it probes the structured-output ladder (`structured.LADDERS`): a capability error (kind
"unsupported", never retried) moves one rung down, and the first rung that answers is written
to the cache database (`capabilities` table), so the next run starts there with no probe.
While a mode is unconfirmed, structured calls to that server go one at a time, so sixteen
concurrent judges cost one probe, not sixteen. The same memory holds the tool-calling mode
(`native` until the server refuses, ignores or fakes tool calls, then `prompted`) and the
parameters dropped because the server refused them (`seed`, `parallel_tool_calls`), and the
schema dialect (`schema_dialect`): a self-hosted server takes the rich, bounded schemas callers
write until it refuses one naming a schema keyword (a gateway to OpenAI or Azure refuses
`prefixItems`); it then gets the strict form, once and from then on. Hosted APIs always get the
strict form, and replies to it are restored to the rich shape (the nulls it introduced for
optional properties dropped) before the caller reads them.

Each change is said once per server as a notice ("llama: json_schema not supported (HTTP 500
…); using json_object with the schema in the prompt"). `options.providers.<name>`
`structured_output` / `tool_calling` fix a mode and skip the probe.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agentopt.core.errors import ModelCallError
from agentopt.models.prompted_tools import (
    forces_tool_call,
    prompted_request,
    prompted_response,
    tool_calls_in_text,
)
from agentopt.models.providers.registry import capabilities_of
from agentopt.models.schema_dialect import (
    BOUNDED,
    STRICT,
    Dialect,
    names_schema_keyword,
    restore,
    to_strict,
)
from agentopt.models.settings import ProviderConfig
from agentopt.models.structured import (
    DESCRIPTIONS,
    Mode,
    StructuredSpec,
    apply_mode,
    ladder,
    next_mode,
    structured_spec,
)
from agentopt.models.types import ChatRequest, ChatResponse

Send = Callable[[ChatRequest], Awaitable[ChatResponse]]

STRUCTURED = "structured_output"
TOOLS = "tools"
DIALECT = "schema_dialect"
DROPPABLE = ("seed",)
"""Parameters that are safe to drop when a server refuses them: a seed is a determinism hint
(agentopt never sends `parallel_tool_calls`, the other parameter servers refuse this way)."""
_STRUCTURED_PARAMS = frozenset({"response_format"})
_SCHEMA_MODES = frozenset({"json_schema_strict", "json_schema"})
"""Modes that send the schema as a parameter (the others quote the rich one in the prompt)."""
_TOOL_PARAMS = frozenset({"tools", "tool_choice"})


class ServerCapabilities:
    """The remembered capabilities of one server + model, and the request shaping they imply.

    Args:
        provider: the provider name used in notices ("llama", "openai").
        key: (provider type, base URL, model) — what the memory is keyed by.
        config: the provider's configuration (its `structured_output` / `tool_calling`).
        store: the response cache (None = remember for this process only).
        notice: receives the one-line notices.
    """

    def __init__(
        self,
        provider: str,
        key: tuple[str, str, str],
        config: ProviderConfig,
        store: Any,
        notice: Callable[[str], None],
    ) -> None:
        self.provider = provider
        self.key = key
        self._store = store
        self._notice = notice
        self._rungs = ladder(key[0], config.structured_output)
        self._fixed_tools = config.tool_calling != "auto"
        self.mode: Mode = self._rungs[0]
        self.confirmed = len(self._rungs) == 1
        self.tool_mode = "prompted" if config.tool_calling == "prompted" else "native"
        self.dropped: set[str] = set()
        self.dialect: Dialect = initial_dialect(key[0])
        self._remembered: dict[str, str] = {}
        self._refusal: str | None = None
        self._lock = asyncio.Lock()
        self._load_lock = asyncio.Lock()
        self._loaded = False

    def summary(self) -> dict[str, str]:
        """What the run's metadata records about this server."""
        out = {STRUCTURED: self.mode if self.confirmed else f"{self.mode} (unprobed)"}
        out[TOOLS] = self.tool_mode
        out[DIALECT] = self.dialect
        if self.dropped:
            out["dropped"] = ", ".join(sorted(self.dropped))
        return out

    async def load(self) -> None:
        """Read what an earlier run found (once; concurrent first calls wait for it)."""
        if self._loaded:
            return
        async with self._load_lock:
            if not self._loaded:
                await self._read()
                self._loaded = True

    async def _read(self) -> None:
        found = await self._store.get_capabilities(*self.key) if self._store is not None else {}
        self._remembered = dict(found)
        mode = found.get(STRUCTURED)
        if not self.confirmed and mode in self._rungs:
            self.mode, self.confirmed = mode, True  # type: ignore[assignment]
        if not self._fixed_tools and found.get(TOOLS) in ("native", "prompted"):
            self.tool_mode = found[TOOLS]
        self.dropped = {p for p in DROPPABLE if found.get(f"drop:{p}") == "yes"}
        if found.get(DIALECT) == STRICT:
            self.dialect = STRICT

    # -- the request path --------------------------------------------------------------------
    async def complete(self, request: ChatRequest, send: Send) -> ChatResponse:
        """Send `request` shaped for this server, falling back on capability errors."""
        await self.load()
        if request.tools and self.tool_mode == "prompted":
            return prompted_response(request, await self.complete(prompted_request(request), send))
        while True:
            response = await self._attempt(request, send)
            if response is None:  # adapted to a refusal: send again, shaped anew
                if request.tools and self.tool_mode == "prompted":
                    return await self.complete(request, send)
                continue
            if request.tools:
                return await self._native_tools(request, response, send)
            return response

    async def _attempt(self, request: ChatRequest, send: Send) -> ChatResponse | None:
        """One send in the current mode; None when a refusal was adapted to.

        The mode is read, and a refusal adapted to, under the probe gate: a call waiting
        there sends in the mode the probe settled on. Once the mode is confirmed (or the
        call asks for no structure) there is no gate to pass."""
        spec = structured_spec(request)
        if spec is None or self.confirmed:
            return await self._send_shaped(request, spec, send)
        async with self._lock:
            return await self._send_shaped(request, spec, send)

    async def _send_shaped(
        self, request: ChatRequest, spec: StructuredSpec | None, send: Send
    ) -> ChatResponse | None:
        used, dialect = self.mode, self.dialect
        wire = self._without_dropped(request)
        if spec is not None:
            wire = apply_mode(wire, self._in_dialect(spec, used), used)
        wire = self._strict_tools(wire)
        try:
            response = await send(wire)
        except ModelCallError as exc:
            if exc.kind == "unsupported" and await self._fall_back(exc, request, used, dialect):
                return None
            raise
        if spec is not None and not self.confirmed:
            await self._confirm()
        return self._restored(request, spec, used, response)

    def _in_dialect(self, spec: StructuredSpec, mode: Mode) -> StructuredSpec:
        """The spec as this server takes it: the strict form when it only takes that."""
        if self.dialect != STRICT or spec.schema is None or mode not in _SCHEMA_MODES:
            return spec
        return StructuredSpec(spec.name, to_strict(spec.schema), spec.strict)

    def _strict_tools(self, request: ChatRequest) -> ChatRequest:
        """Tools declared `strict: true` get parameters in the strict form when needed."""
        if self.dialect != STRICT or not request.tools:
            return request
        if not any(t.function.get("strict") is True for t in request.tools):
            return request
        tools = [
            t.model_copy(
                update={
                    "function": {
                        **t.function,
                        "parameters": to_strict(t.function.get("parameters") or {}),
                    }
                }
            )
            if t.function.get("strict") is True
            else t
            for t in request.tools
        ]
        return request.model_copy(update={"tools": tools})

    def _restored(
        self, request: ChatRequest, spec: StructuredSpec | None, mode: Mode, response: ChatResponse
    ) -> ChatResponse:
        """The reply to a strict-form request read back in the rich shape (restore)."""
        if self.dialect != STRICT:
            return response
        message = response.message
        update: dict[str, Any] = {}
        if spec is not None and spec.schema is not None and mode in _SCHEMA_MODES:
            text = _restored_json(message.content, spec.schema)
            if text is not None:
                update["content"] = text
        strict = {
            t.name: t.function.get("parameters") or {}
            for t in request.tools or []
            if t.function.get("strict") is True
        }
        if strict and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                args = call.function.arguments
                params = strict.get(call.function.name)
                fixed = _restored_json(args, params) if params is not None else None
                if fixed is not None:
                    call = call.model_copy(
                        update={"function": call.function.model_copy(update={"arguments": fixed})}
                    )
                calls.append(call)
            update["tool_calls"] = calls
        if not update:
            return response
        return response.model_copy(update={"message": message.model_copy(update=update)})

    def _without_dropped(self, request: ChatRequest) -> ChatRequest:
        drop = {p: None for p in self.dropped if getattr(request, p, None) is not None}
        return request.model_copy(update=drop) if drop else request

    async def _native_tools(
        self, request: ChatRequest, response: ChatResponse, send: Send
    ) -> ChatResponse:
        """Accept native tool calls; read JSON-as-text calls; redo a forced call it ignored."""
        if response.tool_calls:
            await self._remember(TOOLS, "native", "tool calls came back")
            return response
        calls = tool_calls_in_text(request, response)
        if calls:
            await self._to_prompted("the server wrote its tool call as text")
            return response.model_copy(
                update={
                    "message": response.message.model_copy(
                        update={"content": None, "tool_calls": calls}
                    ),
                    "finish_reason": "tool_calls",
                }
            )
        if forces_tool_call(request) and not self._fixed_tools:
            await self._to_prompted("tool_choice asked for a tool call and none came back")
            return await self.complete(request, send)
        return response

    # -- falling back ------------------------------------------------------------------------
    async def _fall_back(
        self, exc: ModelCallError, request: ChatRequest, used: Mode, dialect: Dialect
    ) -> bool:
        """Adapt to a refused parameter; False when nothing is left to try."""
        param = exc.unsupported or ""
        cause = _cause(exc)
        if await self._to_strict_dialect(param, cause, request, used, dialect):
            return True
        if param in DROPPABLE and _sends(request, param):
            if param not in self.dropped:
                self.dropped.add(param)
                await self._remember(f"drop:{param}", "yes", cause)
                self._notice(f"{self.provider}: {param} not supported ({cause}); sent without it")
            return True
        if param in _TOOL_PARAMS and request.tools and not self._fixed_tools:
            await self._to_prompted(f"{param} not supported ({cause})")
            return True
        if param in _STRUCTURED_PARAMS and structured_spec(request) is not None:
            if used != self.mode:  # another call already moved down: use its mode
                return True
            following = next_mode(self._rungs, used, cause)
            if following is None:
                return False
            word = "json_schema (strict)" if following == "json_schema" else _mode_word(used)
            self._refusal = self._refusal or f"{word} not supported ({cause})"
            self.mode, self.confirmed = following, False
            return True
        return False

    async def _to_strict_dialect(
        self, param: str, cause: str, request: ChatRequest, used: Mode, dialect: Dialect
    ) -> bool:
        """A bounded schema refused for one of its keywords: send the strict form, once."""
        if dialect != BOUNDED or not names_schema_keyword(cause):
            return False
        schema_sent = param in _STRUCTURED_PARAMS and used in _SCHEMA_MODES
        if not (schema_sent and structured_spec(request) is not None) and not (
            param == "tools" and any(t.function.get("strict") is True for t in request.tools or [])
        ):
            return False
        if self.dialect == BOUNDED:  # another call may have stepped down already
            self.dialect = STRICT
            await self._remember(DIALECT, STRICT, cause)
            self._notice(
                f"{self.provider}: the bounded JSON schema was refused ({cause}); sending the "
                "strict form OpenAI and Azure accept, and checking the rest on our side"
            )
        return True

    async def _confirm(self) -> None:
        self.confirmed = True
        await self._remember(STRUCTURED, self.mode, self._refusal or "accepted")
        if self._refusal:
            self._notice(f"{self.provider}: {self._refusal}; using {DESCRIPTIONS[self.mode]}")
            self._refusal = None

    async def _to_prompted(self, why: str) -> None:
        if self.tool_mode == "prompted":
            return
        self.tool_mode = "prompted"
        await self._remember(TOOLS, "prompted", why)
        self._notice(
            f"{self.provider}: {why}; the agent's tools are described in the prompt and "
            "called through JSON (prompted tool use)"
        )

    async def _remember(self, feature: str, value: str, reason: str) -> None:
        if self._remembered.get(feature) == value:
            return
        self._remembered[feature] = value
        if self._store is not None:
            await self._store.put_capability(*self.key, feature, value, reason)


def grammar_decoded(provider_type: str, config: ProviderConfig) -> bool:
    """Whether a model's JSON answers are decoded under a grammar compiled from the schema:
    the embedded model, and self-hosted servers unless configured not to get the schema
    (json_object or prompt modes). Bounded schemas (lengths, counts, patterns) then keep a small
    model's reply usable; hosted APIs get the portable ones.

    Decided from the configuration only, never from the mode the ladder has learned so far: a
    request built before the server's mode is known must equal the same request built after
    (else a cached answer is missed by every later run). A bounded schema quoted in the prompt
    of the json_object and prompt modes is as readable as the portable one."""
    declared = capabilities_of(provider_type)
    if not declared.grammar:
        return False
    if not declared.self_hosted:
        return True
    return config.structured_output not in ("json_object", "prompt")


def initial_dialect(provider_type: str) -> Dialect:
    """Hosted APIs take the strict form; the embedded model and self-hosted servers decode
    under a grammar and take the bounded one until they refuse it."""
    return BOUNDED if capabilities_of(provider_type).grammar else STRICT


def _restored_json(text: str | None, schema: dict[str, Any]) -> str | None:
    """`text` (JSON) restored to the rich shape, or None when it is not JSON or unchanged."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    fixed = restore(value, schema)
    return None if fixed == value else json.dumps(fixed, ensure_ascii=False)


def _sends(request: ChatRequest, param: str) -> bool:
    return getattr(request, param, None) is not None


def _mode_word(mode: str) -> str:
    return "json_schema" if mode.startswith("json_schema") else mode


def _cause(exc: ModelCallError) -> str:
    """The server's words, short: "HTTP 500: ... json_schema ..."."""
    text = exc.message.split(" failed: ", 1)[-1]
    return text if len(text) <= 160 else text[:157] + "..."

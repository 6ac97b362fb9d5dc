"""Cache keys: the SHA-256 digest of the canonical JSON (sorted keys, no whitespace, UTF-8
kept) of the fields that define an answer (models.md §3).

`chat_cache_key` writes that JSON itself, in the order `json.dumps(sort_keys=True)` would,
because it runs once per model call: the messages field by field (their fields are fixed,
`types.Message`), each string by the standard library's own escaper, and the free-form parts
(tool definitions, a response schema) through a memo of their canonical text keyed by
pydantic-core's serialisation of them (the same bytes, the same content). That takes 20 µs
against 41 µs for `model_dump` + `json.dumps(sort_keys=True)` on a request with four messages
and two tools (the old way took 70 µs a call in place, in the bench's `tool-descriptions`
world). The text is the same, byte for byte (a property test compares the two on hundreds of
generated requests), so every key stays what it was; a value of an unexpected type takes the
old road.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from pydantic_core import to_json

from agentopt.core.digest import sha256_hex
from agentopt.models.types import ChatRequest, Message

MEMO_MAX = 512
"""Distinct free-form parts (tool definitions, response formats) whose canonical text is kept."""

_memo: dict[bytes, str] = {}
_string: Any = encode_basestring  # the escaper `json.dumps(ensure_ascii=False)` uses


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def chat_cache_key(
    *, provider_type: str, base_url: str, model: str, request: ChatRequest, repeat: int
) -> str:
    """The cache key of one chat call (listed semantic fields only)."""
    return _digest(chat_key_text(provider_type, base_url, model, request, repeat))


def chat_key_text(
    provider_type: str, base_url: str, model: str, request: ChatRequest, repeat: int
) -> str:
    """The canonical JSON the chat key digests (`canonical_json` of the listed fields)."""
    messages = [_message(m) for m in request.messages]
    if any(text is None for text in messages):
        return canonical_json(_fields(provider_type, base_url, model, request, repeat))
    tools = request.tools or []
    return (
        f'{{"base_url":{_value(base_url)},"kind":"chat","max_tokens":{_value(request.max_tokens)}'
        f',"messages":[{",".join(messages)}],"model":{_value(model)}'  # type: ignore[arg-type]
        f',"provider":{_value(provider_type)},"repeat":{_value(repeat)}'
        f',"response_format":{_value(request.response_format)},"seed":{_value(request.seed)}'
        f',"stop":{_value(request.stop)},"temperature":{_value(request.temperature)}'
        f',"tool_choice":{_value(request.tool_choice)}'
        f',"tools":[{",".join(_tool(t.type, t.function) for t in tools)}]'
        f',"top_p":{_value(request.top_p)}}}'
    )


def embed_cache_key(*, provider_type: str, base_url: str, model: str, text: str) -> str:
    """The cache key of one text's embedding."""
    fields = {"kind": "embed", "provider": provider_type, "base_url": base_url, "model": model}
    fields["text"] = text
    return _digest(canonical_json(fields))


def _digest(text: str) -> str:
    # "surrogatepass": a lone surrogate (valid JSON escapes can make one) gets a key too, and
    # every other text keeps its bytes, so every key stays what it was.
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _fields(
    provider_type: str, base_url: str, model: str, request: ChatRequest, repeat: int
) -> dict[str, Any]:
    """The key's fields as data: the definition `chat_key_text` spells out faster."""
    return {
        "kind": "chat",
        "provider": provider_type,
        "base_url": base_url,
        "model": model,
        "messages": request.model_dump(include={"messages"}, exclude_none=True)["messages"],
        "tools": request.model_dump(include={"tools"})["tools"] or [],
        "tool_choice": request.tool_choice,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "seed": request.seed,
        "max_tokens": request.max_tokens,
        "response_format": request.response_format,
        "stop": request.stop,
        "repeat": repeat,
    }


def _message(m: Message) -> str | None:
    """`canonical_json(m.model_dump(exclude_none=True))`, or None when a field holds what its
    type does not say (set after validation): the caller then takes the general road."""
    content, name, role, call_id, calls = m.content, m.name, m.role, m.tool_call_id, m.tool_calls
    out = "{"
    if content is not None:
        if type(content) is not str:
            return None
        out += '"content":' + _string(content) + ","
    if name is not None:
        if type(name) is not str:
            return None
        out += '"name":' + _string(name) + ","
    if type(role) is not str:
        return None
    out += '"role":' + _string(role)
    if call_id is not None:
        if type(call_id) is not str:
            return None
        out += ',"tool_call_id":' + _string(call_id)
    if calls is not None:
        written: list[str] = []
        for call in calls:
            fn = call.function
            arguments, fname, cid, ctype = fn.arguments, fn.name, call.id, call.type
            if not (type(arguments) is type(fname) is type(cid) is type(ctype) is str):
                return None
            written.append(
                '{"function":{"arguments":' + _string(arguments) + ',"name":' + _string(fname)
                + '},"id":' + _string(cid) + ',"type":' + _string(ctype) + "}"
            )  # fmt: skip
        out += ',"tool_calls":[' + ",".join(written) + "]"
    return out + "}"


def _tool(kind: str, function: dict[str, Any]) -> str:
    return f'{{"function":{_value(function)},"type":{_value(kind)}}}'


def _value(value: Any) -> str:
    """`canonical_json(value)`, the common scalars written directly and a dict or list
    through the memo."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is str:
        return str(_string(value))
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if kind is dict or kind is list:
        try:
            fast = to_json(value, inf_nan_mode="constants")  # NaN is not null here
        except Exception:  # what pydantic-core refuses, json.dumps may still write
            return canonical_json(value)
        if b'"None"' in fast:  # a None key ("null" to json.dumps), or just the word: no memo
            return canonical_json(value)
        known = _memo.get(fast)
        if known is None:
            known = canonical_json(value)
            if len(_memo) >= MEMO_MAX:
                _memo.clear()
            _memo[fast] = known
        return known
    return canonical_json(value)

"""How a JSON answer is asked for: the structured-output ladder and the output bound.

Callers (judges, generators, the rubric self-check, the optimizer's reflection, the simulator)
all say the same thing — `response_format={"type": "json_schema", "json_schema": {name, schema,
strict}}` — and the call layer rewrites it into what the server accepts, trying in order:

1. `json_schema_strict` — the request as written (OpenAI, Azure, llama.cpp's `llama-server`);
2. `json_schema` — the same without `strict` (servers that refuse strict schemas);
3. `guided_json` — vLLM's own `extra_body={"guided_json": schema}` (vLLM before json_schema);
4. `json_object` — JSON mode, with the schema written into the system prompt;
5. `prompt` — no response_format at all, the schema in the system prompt.

Which rungs a provider type climbs is `LADDERS`; what a server accepted is remembered by
`ServerCapabilities`. Whatever the mode, the caller validates the reply exactly as before
(its reply model), so a weaker mode never lowers what counts as a valid answer.

Every structured request is bounded: without an explicit `max_tokens`, it gets the most tokens
its schema can need (`schema_max_tokens`), so a small model's run-on string ends with
`finish_reason: length` in seconds rather than at the call deadline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from agentopt.models.types import ChatRequest, ChatResponse, Message

Mode = Literal["json_schema_strict", "json_schema", "guided_json", "json_object", "prompt"]

DEFAULT_LADDER: tuple[Mode, ...] = ("json_schema_strict", "json_schema", "json_object", "prompt")
LADDERS: dict[str, tuple[Mode, ...]] = {
    # Ollama's /v1 turns json_schema into its native `format` (and ignores `strict`).
    "ollama": ("json_schema", "json_object", "prompt"),
    "vllm": ("json_schema_strict", "json_schema", "guided_json", "json_object", "prompt"),
}
OVERRIDES: dict[str, Mode] = {
    "json_schema": "json_schema_strict",
    "json_object": "json_object",
    "guided_json": "guided_json",
    "prompt": "prompt",
}
"""`options.providers.<name>.structured_output` → the mode used without probing."""

DESCRIPTIONS: dict[str, str] = {
    "json_schema_strict": "json_schema (strict)",
    "json_schema": "json_schema (non-strict)",
    "guided_json": "vLLM guided_json",
    "json_object": "json_object with the schema in the prompt",
    "prompt": "plain text with the schema in the prompt",
}

STRING_TOKENS = 200
"""Tokens allowed for a string without `maxLength` (a judge's reason, a task's query)."""
DEFAULT_ITEMS = 16
"""Items assumed for an array without `maxItems`."""
FREE_JSON_TOKENS = 2000
"""Bound of a JSON answer without a schema (`json_object`)."""
MIN_TOKENS, MAX_TOKENS = 128, 16000


@dataclass(frozen=True)
class StructuredSpec:
    """What the caller asked for: a named JSON schema (or any JSON object when schema is None)."""

    name: str
    schema: dict[str, Any] | None
    strict: bool


def structured_spec(request: ChatRequest) -> StructuredSpec | None:
    """The JSON answer `request` asks for, or None for a plain-text request."""
    fmt = request.response_format or {}
    kind = fmt.get("type")
    if kind == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec.get("schema"), dict) else None
        return StructuredSpec(str(spec.get("name") or "reply"), schema, bool(spec.get("strict")))
    if kind == "json_object":
        schema = fmt.get("schema") if isinstance(fmt.get("schema"), dict) else None
        return StructuredSpec("reply", schema, False)
    return None


def ladder(provider_type: str, override: str = "auto") -> tuple[Mode, ...]:
    """The modes to try for a provider, best first (one mode when configured)."""
    if override in OVERRIDES:
        return (OVERRIDES[override],)
    return LADDERS.get(provider_type, DEFAULT_LADDER)


def next_mode(rungs: tuple[Mode, ...], mode: Mode, refused: str) -> Mode | None:
    """The rung after `mode` once the server refused it with error text `refused`.

    A server that names `json_schema` without `strict` refuses json_schema as such, so the
    non-strict rung is skipped (one probe request instead of two)."""
    try:
        rest = rungs[rungs.index(mode) + 1 :]
    except ValueError:
        return None
    if mode == "json_schema_strict" and "strict" not in refused.lower():
        rest = tuple(m for m in rest if m != "json_schema")
    return rest[0] if rest else None


def apply_mode(request: ChatRequest, spec: StructuredSpec, mode: Mode) -> ChatRequest:
    """`request` rewritten to ask for `spec` the way `mode` does (the strict rung: as written)."""
    schema = spec.schema
    if mode == "json_schema_strict" or (mode == "json_schema" and schema is None):
        if schema is None or structured_spec(request) == spec:
            return request
        # The same request with the schema in the server's dialect (`schema_dialect`).
        body = {"name": spec.name, "schema": schema, "strict": spec.strict}
        fmt = {"type": "json_schema", "json_schema": body}
        return request.model_copy(update={"response_format": fmt})
    if mode == "json_schema" and schema is not None:
        body = {"name": spec.name, "schema": schema, "strict": False}
        fmt_: dict[str, Any] | None = {"type": "json_schema", "json_schema": body}
        return request.model_copy(update={"response_format": fmt_})
    if mode == "guided_json" and schema is not None:
        return request.model_copy(
            update={"response_format": {"type": "guided_json", "schema": schema}}
        )
    plain = None if mode == "prompt" else {"type": "json_object"}
    messages = with_schema_prompt(request.messages, schema)
    return request.model_copy(update={"response_format": plain, "messages": messages})


def with_schema_prompt(messages: list[Message], schema: dict[str, Any] | None) -> list[Message]:
    """The messages with the reply format appended to the (first) system message."""
    if schema is None:
        text = "Reply with only one JSON object, no prose and no code fence."
    else:
        text = (
            "Reply with only one JSON object that matches this JSON schema, no prose and no "
            f"code fence:\n{json.dumps(schema, separators=(',', ':'))}"
        )
    if messages and messages[0].role == "system":
        first = messages[0]
        content = f"{first.content}\n\n{text}" if first.content else text
        return [first.model_copy(update={"content": content}), *messages[1:]]
    return [Message(role="system", content=text), *messages]


def bounded(request: ChatRequest) -> ChatRequest:
    """`request` with `max_tokens` set from its schema when it is structured and unbounded."""
    if request.max_tokens is not None:
        return request
    spec = structured_spec(request)
    if spec is None:
        return request
    return request.model_copy(update={"max_tokens": schema_max_tokens(spec.schema)})


def schema_max_tokens(schema: dict[str, Any] | None, *, string_tokens: int = STRING_TOKENS) -> int:
    """The most output tokens a reply matching `schema` needs, pretty-printed, with margin.

    Counts every key, bounded string (`maxLength`), enum, const, number and array item
    (`maxItems`, else `DEFAULT_ITEMS`); a free string counts `string_tokens` (a caller whose
    strings are long — rewritten instructions — says so)."""
    if schema is None:
        return FREE_JSON_TOKENS
    estimate = _tokens(schema, 1, string_tokens)
    return max(MIN_TOKENS, min(MAX_TOKENS, int(estimate * 1.25) + 32))


def _tokens(schema: Any, depth: int, free: int) -> int:
    if not isinstance(schema, dict):
        return 4
    indent = depth  # pretty-printers add a line and indentation per value
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return max(_tokens(s, depth, free) for s in schema[key])
    if "const" in schema:
        return _text_tokens(json.dumps(schema["const"])) + indent
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return max(_text_tokens(json.dumps(v)) for v in schema["enum"]) + indent
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:  # any object (a tool's arguments): as much as a free string
            return free + indent
        inner = sum(_text_tokens(k) + 3 + _tokens(v, depth + 1, free) for k, v in props.items())
        return inner + 2 + indent
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and prefix:
            return sum(_tokens(s, depth + 1, free) + 1 for s in prefix) + 2 + indent
        count = schema.get("maxItems")
        count = count if isinstance(count, int) and count >= 0 else DEFAULT_ITEMS
        return count * (_tokens(schema.get("items"), depth + 1, free) + 1) + 2 + indent
    if kind == "string":
        limit = schema.get("maxLength")
        # At least 2 characters a token, even for junk ("1.1.1.").
        return (int(limit) // 2 + 4 if isinstance(limit, int) else free) + indent
    if kind in ("integer", "number"):
        return 8 + indent
    if kind in ("boolean", "null"):
        return 3 + indent
    return free + indent  # a $ref or an untyped value: anything


def _text_tokens(text: str) -> int:
    return len(text) // 3 + 2


def cut_off(response: ChatResponse, max_tokens: int | None) -> str | None:
    """Why a structured reply is unusable when it stopped at the token limit, else None.

    Quoted back to the model when re-asking, then kept in the error (`judgeParseFailed`)."""
    if response.finish_reason != "length":
        return None
    limit = f"the {max_tokens}-token limit" if max_tokens else "its token limit"
    return (
        f"the reply was cut off at {limit} (finish_reason: length) before its JSON was "
        "complete; keep every text in it short"
    )

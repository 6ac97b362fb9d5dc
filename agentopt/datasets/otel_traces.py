"""Read OpenTelemetry traces exported to files and find the agent's real user turns.

Two shapes are read, in `.json`, `.jsonl` and `.ndjson` files (or every such file of a folder):
- OTLP JSON — `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, one document per file
  or one per line, as the OpenTelemetry Collector's file exporter writes it;
- the SDK's console exporter — one span object per span (`span.to_json()`), pretty-printed one
  after another or one per line.

User turns come from the GenAI semantic conventions: `gen_ai.input.messages` (messages with
`parts`, or `content`), `gen_ai.user.message` events, and the older `gen_ai.prompt` (a JSON
list of messages, or text). The last user message a span was sent is the turn it answered.
Malformed input is an InputError naming the file and the line.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentopt.core.errors import InputError, Problem
from agentopt.core.files import bounded

TRACE_SUFFIXES = (".json", ".jsonl", ".ndjson")
AGENT_KEYS = ("gen_ai.agent.name",)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class UserTurn:
    """One thing a real user said to the agent, as a trace recorded it."""

    text: str
    time: datetime | None
    trace_id: str
    span_id: str
    agent: str | None
    operation: str | None
    file: str
    line: int


@dataclass(frozen=True)
class _Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    start: datetime | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    line: int


def trace_files(path: Path) -> list[Path]:
    """`path` itself, or the trace files of a folder (recursively, sorted)."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix.lower() in TRACE_SUFFIXES)
    if not path.is_file():
        raise InputError.at(str(path), "", "no such trace file or folder")
    return [path]


def read_user_turns(path: Path) -> list[UserTurn]:
    """Every user turn in the trace file(s) at `path`, oldest first."""
    turns: list[UserTurn] = []
    files = trace_files(path)
    if not files:
        raise InputError.at(str(path), "", f"no {', '.join(TRACE_SUFFIXES)} trace files in it")
    for file in files:
        spans = _spans(file)
        agents = _agents_by_span(spans)
        for span in spans:
            text = _user_text(span)
            if text is None:
                continue
            turns.append(
                UserTurn(
                    text=text,
                    time=span.start,
                    trace_id=span.trace_id,
                    span_id=span.span_id,
                    agent=agents.get(span.span_id),
                    operation=_str(span.attributes.get("gen_ai.operation.name")),
                    file=str(file),
                    line=span.line,
                )
            )
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(turns, key=lambda t: t.time or epoch)


def _spans(file: Path) -> list[_Span]:
    shown = str(file)
    text = bounded.read_text(file, shown=shown, kind="dataset")
    spans: list[_Span] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            break
        line = text.count("\n", 0, pos) + 1
        try:
            doc, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                problems=[
                    Problem(
                        shown,
                        f"line {exc.lineno}",
                        f"expected OTLP JSON or exported spans, "
                        f"found invalid JSON ({exc.msg}, column {exc.colno})",
                    )
                ],
                hint="export traces with the OpenTelemetry file exporter (OTLP JSON) or the "
                "SDK's console exporter",
            ) from None
        spans.extend(_from_document(doc, shown, line))
        pos = end
    return spans


def _from_document(doc: Any, file: str, line: int) -> list[_Span]:
    if isinstance(doc, list):
        return [s for item in doc for s in _from_document(item, file, line)]
    if not isinstance(doc, dict):
        raise InputError.at(
            file, f"line {line}", f"expected a JSON object, found {type(doc).__name__}"
        )
    if "resourceSpans" in doc or "resource_spans" in doc:
        return _otlp(doc, file, line)
    if "context" in doc and "name" in doc:
        return [_console(doc, line)]
    raise InputError.at(
        file,
        f"line {line}",
        'expected OTLP JSON ({"resourceSpans": [...]}) or an exported span '
        '({"name", "context", "attributes"}), found an object with '
        + (", ".join(sorted(doc)[:5]) or "no keys"),
    )


def _otlp(doc: dict[str, Any], file: str, line: int) -> list[_Span]:
    out: list[_Span] = []
    resources = doc.get("resourceSpans") or doc.get("resource_spans") or []
    for resource in _list(resources, file, line, "resourceSpans"):
        scopes = resource.get("scopeSpans") or resource.get("scope_spans") or []
        for scope in _list(scopes, file, line, "scopeSpans"):
            for span in _list(scope.get("spans") or [], file, line, "spans"):
                out.append(
                    _Span(
                        name=str(span.get("name", "")),
                        trace_id=_hex_id(span.get("traceId") or span.get("trace_id")),
                        span_id=_hex_id(span.get("spanId") or span.get("span_id")),
                        parent_id=_hex_id(span.get("parentSpanId") or span.get("parent_span_id"))
                        or None,
                        start=_nanos(span.get("startTimeUnixNano")),
                        attributes=_otlp_attributes(span.get("attributes")),
                        events=[
                            (str(e.get("name", "")), _otlp_attributes(e.get("attributes")))
                            for e in span.get("events") or []
                            if isinstance(e, dict)
                        ],
                        line=line,
                    )
                )
    return out


def _hex_id(value: Any) -> str:
    """OTLP JSON ids are hex; protobuf's own JSON mapping writes them in base64."""
    text = str(value or "")
    if not text or all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _list(value: Any, file: str, line: int, key: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError.at(file, f"line {line}", f"{key}: expected a list of objects")
    return value


def _otlp_attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and "key" in item:
            out[str(item["key"])] = _otlp_value(item.get("value"))
    return out


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _otlp_attributes((value["kvlistValue"] or {}).get("values"))
    return None


def _nanos(value: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(value) / 1e9, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _console(doc: dict[str, Any], line: int) -> _Span:
    raw = doc.get("context")
    context: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return _Span(
        name=str(doc.get("name", "")),
        trace_id=str(context.get("trace_id", "")),
        span_id=str(context.get("span_id", "")),
        parent_id=doc.get("parent_id") or None,
        start=_iso(doc.get("start_time")),
        attributes=dict(doc.get("attributes") or {}),
        events=[
            (str(e.get("name", "")), dict(e.get("attributes") or {}))
            for e in doc.get("events") or []
            if isinstance(e, dict)
        ],
        line=line,
    )


def _iso(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def _agents_by_span(spans: list[_Span]) -> dict[str, str]:
    """Each span's agent: its own `gen_ai.agent.name`, else its nearest ancestor's."""
    by_id = {s.span_id: s for s in spans}
    out: dict[str, str] = {}
    for span in spans:
        node: _Span | None = span
        seen = 0
        while node is not None and seen < 64:
            name = next((_str(node.attributes.get(k)) for k in AGENT_KEYS), None)
            if name:
                out[span.span_id] = name
                break
            node = by_id.get(node.parent_id or "")
            seen += 1
    return out


def _user_text(span: _Span) -> str | None:
    """The last user message the span was sent, or None (not a GenAI span, no user turn)."""
    attrs = span.attributes
    found: list[str] = []
    raw = attrs.get("gen_ai.input.messages")
    if raw is not None:
        found = _user_messages(_maybe_json(raw))
    if not found:
        for name, event_attrs in span.events:
            if name == "gen_ai.user.message":
                content = event_attrs.get("content") or event_attrs.get("gen_ai.event.content")
                parsed = _maybe_json(content)
                text = parsed.get("content") if isinstance(parsed, dict) else parsed
                if isinstance(text, str) and text.strip():
                    found.append(text)
    if not found and attrs.get("gen_ai.prompt") is not None:
        prompt = _maybe_json(attrs["gen_ai.prompt"])
        found = _user_messages(prompt) if isinstance(prompt, list) else [str(prompt)]
    texts = [t.strip() for t in found if isinstance(t, str) and t.strip()]
    return texts[-1] if texts else None


def _user_messages(messages: Any) -> list[str]:
    if not isinstance(messages, list):
        return []
    out: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        parts = message.get("parts")
        if isinstance(parts, list):
            words = [
                str(p.get("content", ""))
                for p in parts
                if isinstance(p, dict) and p.get("type", "text") == "text"
            ]
            out.append("\n".join(w for w in words if w))
        elif isinstance(message.get("content"), str):
            out.append(message["content"])
    return out


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

"""Helpers that make tests/fake_openai.py play both the agent and the judges of a run."""

from __future__ import annotations

import json
from typing import Any

from tests.fake_openai import RecordedRequest, Reply, text


def instance_from_schema(schema: dict[str, Any]) -> Any:
    """A plausible instance of a JSON schema (what a well-behaved judge would answer)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance_from_schema(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind == "integer":
        lo, hi = schema.get("minimum", 1), schema.get("maximum", 5)
        return max(lo, min(hi, 4))
    if kind == "number":
        return schema.get("minimum", 0.5) if "maximum" not in schema else schema["maximum"]
    if kind == "boolean":
        return True
    return "looks fine"


def judge_reply(req: RecordedRequest) -> Reply | None:
    """Answer structured-output (judge) requests with a schema instance; None otherwise."""
    fmt = (req.body or {}).get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    if not schema:
        return None
    return text(json.dumps(instance_from_schema(schema)), usage=(200, 20))


def last_user(req: RecordedRequest) -> str:
    users = [m for m in (req.body or {}).get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    return content if isinstance(content, str) else json.dumps(content)

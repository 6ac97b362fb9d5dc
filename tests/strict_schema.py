"""What OpenAI's and Azure OpenAI's strict structured outputs refuse, for the test fakes.

Written from the services' documentation, independently of `agentopt.models.schema_dialect`
(which produces schemas; this checks them), so a bug in one is not hidden by the other:

- OpenAI, Structured model outputs, "Supported schemas"
  (platform.openai.com/docs/guides/structured-outputs#supported-schemas): supported types and
  the listed string/number/array keywords only; root an object, not anyOf; every property in
  `required`; `additionalProperties: false` on every object; ≤ 5,000 properties, ≤ 10 levels
  of nesting, ≤ 1,000 enum values, ≤ 120,000 characters of names and enum/const values.
- Azure OpenAI, "Supported schemas and limitations": the same, without `pattern`, `format`,
  `minimum`, `maximum`, `multipleOf`, `minItems`, `maxItems`.

A refusal is worded like the real service's: "Invalid schema for response_format 'name': In
context=('properties', 'verdicts'), 'prefixItems' is not permitted." (HTTP 400,
`invalid_request_error`, param `response_format`).
"""

from __future__ import annotations

from typing import Any, Literal

Flavour = Literal["openai", "azure"]

_COMMON = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
}
_OPENAI_ONLY = {
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
}
ALLOWED: dict[str, set[str]] = {"openai": _COMMON | _OPENAI_ONLY, "azure": set(_COMMON)}
TYPES = {"string", "number", "boolean", "integer", "object", "array", "null"}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
MAX_PROPERTIES, MAX_DEPTH, MAX_ENUM_VALUES, MAX_STRING_CHARS = 5000, 10, 1000, 120_000


class _Refused(Exception):
    pass


def violation(schema: Any, flavour: Flavour = "openai") -> str | None:
    """The first reason the service would refuse `schema` under strict mode, or None."""
    state = {"properties": 0, "enum": 0, "chars": 0}
    try:
        if not isinstance(schema, dict):
            raise _Refused("context=(), schema must be a JSON Schema object")
        if "anyOf" in schema or "oneOf" in schema:
            raise _Refused("context=(), root schema must not be 'anyOf'")
        if schema.get("type") != "object":
            raise _Refused(
                f"context=(), schema must be a JSON Schema of 'type: \"object\"', got "
                f"'type: \"{schema.get('type')}\"'"
            )
        _check(schema, (), 0, flavour, state)
        for key in ("$defs", "definitions"):
            for name, sub in (schema.get(key) or {}).items():
                _check(sub, (key, name), 0, flavour, state)
    except _Refused as exc:
        return str(exc)
    return None


def _ctx(path: tuple[Any, ...]) -> str:
    return "context=(" + ", ".join(repr(p) for p in path) + ("," if len(path) == 1 else "") + ")"


def _check(s: Any, path: tuple[Any, ...], depth: int, flavour: Flavour, state: dict[str, int]):
    if not isinstance(s, dict):
        raise _Refused(f"In {_ctx(path)}, schema must be a JSON Schema object, got {s!r}")
    for key in s:
        if key not in ALLOWED[flavour]:
            raise _Refused(f"In {_ctx(path)}, '{key}' is not permitted.")
    if "$ref" in s:
        return
    kind = s.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "anyOf" in s:
        for i, branch in enumerate(s["anyOf"]):
            _check(branch, (*path, "anyOf", i), depth, flavour, state)
    elif kind is None and "enum" not in s and "const" not in s:
        raise _Refused(f"In {_ctx(path)}, schema must have a 'type' key.")
    for k in kinds:
        if k is not None and k not in TYPES:
            raise _Refused(f"In {_ctx(path)}, type '{k}' is not supported.")
    if "format" in s and s["format"] not in FORMATS:
        raise _Refused(f"In {_ctx(path)}, format '{s['format']}' is not supported.")
    if isinstance(s.get("enum"), list):
        state["enum"] += len(s["enum"])
        state["chars"] += sum(len(str(v)) for v in s["enum"])
        if state["enum"] > MAX_ENUM_VALUES:
            raise _Refused(f"In {_ctx(path)}, more than {MAX_ENUM_VALUES} enum values in total.")
    if "const" in s:
        state["chars"] += len(str(s["const"]))
    if "object" in kinds or "properties" in s:
        if depth + 1 > MAX_DEPTH:
            raise _Refused(f"In {_ctx(path)}, the schema nests objects more than {MAX_DEPTH} deep.")
        props = s.get("properties")
        if not isinstance(props, dict):
            raise _Refused(f"In {_ctx(path)}, 'properties' is required to be an object.")
        if s.get("additionalProperties") is not False:
            raise _Refused(
                f"In {_ctx(path)}, 'additionalProperties' is required to be supplied and to be "
                "false."
            )
        missing = [k for k in props if k not in (s.get("required") or [])]
        if missing or not isinstance(s.get("required"), list):
            raise _Refused(
                f"In {_ctx(path)}, 'required' is required to be supplied and to be an array "
                f"including every key in properties. Missing '{(missing or ['?'])[0]}'."
            )
        state["properties"] += len(props)
        state["chars"] += sum(len(k) for k in props)
        if state["properties"] > MAX_PROPERTIES:
            raise _Refused(f"In {_ctx(path)}, more than {MAX_PROPERTIES} properties in total.")
        for name, sub in props.items():
            _check(sub, (*path, "properties", name), depth + 1, flavour, state)
    if "array" in kinds:
        if not isinstance(s.get("items"), dict):
            raise _Refused(f"In {_ctx(path)}, 'items' is required for arrays.")
        _check(s["items"], (*path, "items"), depth, flavour, state)
    if state["chars"] > MAX_STRING_CHARS:
        raise _Refused(f"the schema's names and values exceed {MAX_STRING_CHARS} characters.")


def refusal(body: dict[str, Any], flavour: Flavour = "openai") -> dict[str, Any] | None:
    """The 400 body the service answers a chat request with, when its strict schemas (the
    response format's or a strict tool's parameters) leave the subset; else None."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if spec.get("strict") is True:
            problem = violation(spec.get("schema"), flavour)
            if problem is not None:
                name = spec.get("name", "")
                return _error(
                    f"Invalid schema for response_format '{name}': In {problem}"
                    if not problem.startswith("In ")
                    else f"Invalid schema for response_format '{name}': {problem}",
                    "response_format",
                    None,
                )
    for i, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") or {}
        if fn.get("strict") is True:
            problem = violation(fn.get("parameters") or {"type": "object"}, flavour)
            if problem is not None:
                text = problem if problem.startswith("In ") else f"In {problem}"
                return _error(
                    f"Invalid schema for function '{fn.get('name', '')}': {text}",
                    f"tools[{i}].function.parameters",
                    "invalid_function_parameters",
                )
    return None


def _error(message: str, param: str, code: str | None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }

"""A quick answer to "does this reply fit its schema?" for the plain keywords judges use.

Every judge reply is checked against its full schema (`schema_dialect.reply_problems`), and
jsonschema took ~50 µs for a two-verdict reply: 3% of an optimize run in the bench's
tool-routing world. The schemas agentopt writes for its judges use a handful of keywords
(`type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const` and the
bounds), so this walks those itself, in a few µs, and says only "valid" when it is sure.
Anything else (another keyword, a reply that breaks a rule) goes to jsonschema, which also
words the problems; so a reply this passes is one jsonschema passes too (a property test
holds the two to that on generated schemas and values).
"""

from __future__ import annotations

from typing import Any

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})
_KNOWN = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "anyOf",
    }
) | _ANNOTATIONS  # fmt: skip
_SCALARS = (str, bool, type(None))


def surely_valid(value: Any, schema: Any) -> bool:
    """True only when `value` fits `schema` and every keyword met is one this module knows;
    False means "ask jsonschema" (invalid, or not sure)."""
    if schema is True:
        return True
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        return False
    kind = schema.get("type")
    if kind is not None and not _has_type(value, kind):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    enum = schema.get("enum")
    if enum is not None and not (isinstance(enum, list) and any(_same(value, e) for e in enum)):
        return False
    if isinstance(value, str):
        return _bounded(len(value), schema.get("minLength"), schema.get("maxLength")) and _any_of(
            value, schema
        )
    if _is_number(value):
        low, high = schema.get("minimum"), schema.get("maximum")
        if not (_limit(low) and _limit(high)):
            return False
        if (low is not None and value < low) or (high is not None and value > high):
            return False
    elif isinstance(value, dict):
        if not _object(value, schema):
            return False
    elif isinstance(value, list) and not _array(value, schema):
        return False
    return _any_of(value, schema)


def _object(value: dict[str, Any], schema: dict[str, Any]) -> bool:
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(required, list):
        return False
    if any(not isinstance(name, str) or name not in value for name in required):
        return False
    for key, item in value.items():
        if key in props:
            if not surely_valid(item, props[key]):
                return False
        elif extra is False or (extra is not True and not surely_valid(item, extra)):
            return False
    return True


def _array(value: list[Any], schema: dict[str, Any]) -> bool:
    if not _bounded(len(value), schema.get("minItems"), schema.get("maxItems")):
        return False
    items = schema.get("items", True)
    return items is True or all(surely_valid(item, items) for item in value)


def _any_of(value: Any, schema: dict[str, Any]) -> bool:
    options = schema.get("anyOf")
    if options is None:
        return True
    return isinstance(options, list) and any(surely_valid(value, o) for o in options)


def _has_type(value: Any, kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    return any(_is(value, k) for k in kinds)


def _is(value: Any, kind: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "number":
        return _is_number(value)
    if kind == "integer":  # 2.0 is one to JSON Schema too: left to jsonschema
        return isinstance(value, int) and not isinstance(value, bool)
    return False  # a type this module does not know: not sure


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(value: Any, expected: Any) -> bool:
    """JSON equality for strings, booleans and null (where Python's `==` agrees); anything
    else is "not sure" (False), as `True == 1` and `1 == 1.0` differ between the two."""
    if isinstance(expected, _SCALARS) and isinstance(value, _SCALARS):
        return type(value) is type(expected) and value == expected
    return False


def _limit(bound: Any) -> bool:
    return bound is None or _is_number(bound)


def _bounded(size: int, low: Any, high: Any) -> bool:
    if not (_limit(low) and _limit(high)):
        return False
    return (low is None or size >= low) and (high is None or size <= high)

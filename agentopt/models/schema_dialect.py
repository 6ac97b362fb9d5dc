"""Every JSON schema agentopt sends, in the dialect of the server it goes to.

Callers write one *rich* schema per reply (`agentopt.models.structured`): what a valid reply
is, with every bound we can state — a judge's reason of at most 400 characters, one verdict per
criterion pinned in place (`prefixItems` + `const`), task texts as word patterns. Servers that
decode JSON under a grammar compiled from the schema (llama.cpp's `llama-server`, Ollama, vLLM,
the embedded model) take it as written: the **bounded** dialect. Hosted structured-output APIs
take only a subset, and refuse the request (HTTP 400 naming `response_format`) when a schema
leaves it: the **strict** dialect, which `to_strict` produces.

The strict dialect is the intersection of what the two hosted services document:

- OpenAI, "Structured model outputs — Supported schemas"
  (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas, read 2026-12):
  types string, number, boolean, integer, object, array, enum, anyOf; string `pattern`/`format`,
  number `multipleOf`/`minimum`/`maximum`/`exclusive*`, array `minItems`/`maxItems`; the root
  an object and not `anyOf`; every property `required` (optional = a union with null);
  `additionalProperties: false` on every object; at most 5,000 properties and 10 levels of
  nesting; at most 1,000 enum values; 120,000 characters of names, enum and const values;
  `allOf`, `not`, `dependentRequired`, `dependentSchemas`, `if`/`then`/`else` not supported —
  and nothing outside that list (`prefixItems`, `minLength`/`maxLength`, `uniqueItems`,
  `contains`, `patternProperties`, `unevaluated*`, `oneOf`, `default` ...).
- Azure OpenAI, "How to use structured outputs — Supported schemas and limitations"
  (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs): the same
  rules, and it also lists `pattern`, `format`, `minimum`, `maximum`, `multipleOf`,
  `minItems`, `maxItems` as unsupported keywords.

So the strict form keeps only `type`, `properties`, `required`, `additionalProperties`,
`items`, `enum`, `anyOf`, `description`, `title` and `$ref`/`$defs`; a `const` becomes a
one-value enum, `oneOf` becomes `anyOf`, positional entries (`prefixItems`) become one item
schema (their pinned keys an enum: a keyed array, checked after parsing), an optional property
a required, nullable one, and a dropped length or count bound is said in the `description`
instead ("at most 400 characters"), so the model still knows it.

What the server no longer enforces is checked here, on our side, against the rich schema:
`restore` drops the nulls the strict form introduced for optional properties, and
`reply_problems` validates the reply against the rich schema — except that pinned positions
are read by key, not by place (an array of `{criterion, verdict, reason}` in any order, exactly
one per criterion, which the caller checks).
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any, Literal

from pydantic_core import PydanticSerializationError, to_json

from agentopt.models.schema_check import surely_valid

Dialect = Literal["bounded", "strict"]
BOUNDED: Dialect = "bounded"
STRICT: Dialect = "strict"

KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "anyOf",
        "description",
        "title",
        "$ref",
        "$defs",
        "definitions",
    }
)
"""The keywords the strict form keeps; every other keyword is dropped (lengths and counts are
said in the description)."""
SCHEMA_KEYWORDS = (
    "prefixItems",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "pattern",
    "patternProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "allOf",
    "oneOf",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
    "default",
)
"""Keywords a server's refusal may name that the strict form removes."""
REFUSAL_PHRASES = ("invalid schema", "is not permitted", "not supported in strict")


def names_schema_keyword(text: str) -> bool:
    """Whether a server's refusal is about a keyword of the schema (the strict form would
    pass) rather than about structured output as such."""
    lower = text.lower()
    if any(phrase in lower for phrase in REFUSAL_PHRASES):
        return True
    return any(f"'{k}'" in text or f'"{k}"' in text or f"`{k}`" in text for k in SCHEMA_KEYWORDS)


# -- the strict form ----------------------------------------------------------------------------
def to_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` in the strict subset of OpenAI/Azure structured outputs (see the module
    docstring). The root becomes an object: a root `anyOf` of objects is merged into one
    object whose properties are each nullable (the branch is told by which are not null)."""
    return json.loads(_strict_text(json.dumps(schema, sort_keys=False)))  # a fresh copy


@lru_cache(maxsize=512)
def _strict_text(text: str) -> str:
    """Memo of `to_strict` by schema text: a judge sends the same schema on every call."""
    return json.dumps(_strict(_merge_root(json.loads(text))))


def _merge_root(schema: dict[str, Any]) -> dict[str, Any]:
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(branches, list) or schema.get("type") not in (None, "object"):
        return schema
    if not all(isinstance(b, dict) and _is_object(b) for b in branches):
        return schema
    merged: dict[str, Any] = {}
    always: set[str] | None = None
    for branch in branches:
        props = branch.get("properties") or {}
        required = set(branch.get("required") or [])
        for name, sub in props.items():
            merged.setdefault(name, sub)
        always = required if always is None else always & required
    out: dict[str, Any] = {"type": "object", "properties": merged}
    out["required"] = sorted(always or ())
    if schema.get("description"):
        out["description"] = schema["description"]
    return out


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return {} if schema is True else schema
    s = dict(schema)
    if "oneOf" in s and "anyOf" not in s:
        s["anyOf"] = s.pop("oneOf")
    s = _inline_all_of(s)
    if "const" in s:
        value = s.pop("const")
        s["enum"] = [value]
    if isinstance(s.get("prefixItems"), list):
        s["items"] = _one_item(s["prefixItems"], s.get("items"))
    hints = _hints(s)
    out: dict[str, Any] = {k: v for k, v in s.items() if k in KEPT}
    if hints:
        text = str(out.get("description") or "").strip()
        out["description"] = f"{text} ({'; '.join(hints)})" if text else "; ".join(hints)
    if isinstance(out.get("items"), dict | bool):
        out["items"] = _strict(out["items"])
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_strict(b) for b in out["anyOf"]]
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), dict):
            out[key] = {k: _strict(v) for k, v in out[key].items()}
    if _is_object(out):
        props = {k: _strict(v) for k, v in (out.get("properties") or {}).items()}
        required = set(s.get("required") or [])
        out["properties"] = {k: v if k in required else _nullable(v) for k, v in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
        out.setdefault("type", "object")
    return out


def _inline_all_of(s: dict[str, Any]) -> dict[str, Any]:
    parts = s.pop("allOf", None)
    if not isinstance(parts, list):
        return s
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties":
                s["properties"] = {**(s.get("properties") or {}), **value}
            elif key == "required":
                s["required"] = list(dict.fromkeys([*(s.get("required") or []), *value]))
            else:
                s.setdefault(key, value)
    return s


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (kind is None and isinstance(schema.get("properties"), dict))


def _one_item(entries: list[Any], rest: Any) -> Any:
    """One item schema for positional entries: entries that differ only in the `const` of
    some keys become one entry with those keys as enums (a keyed item); otherwise anyOf."""
    schemas = [e for e in entries if isinstance(e, dict)]
    if isinstance(rest, dict):
        schemas.append(rest)
    if not schemas:
        return {}
    merged = _merge_pinned(schemas)
    if merged is not None:
        return merged
    unique = list({json.dumps(e, sort_keys=True): e for e in schemas}.values())
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


def _merge_pinned(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    first = entries[0]
    props = first.get("properties")
    if not isinstance(props, dict) or any(
        not isinstance(e.get("properties"), dict) or e["properties"].keys() != props.keys()
        for e in entries
    ):
        return None
    out = copy.deepcopy(first)
    for name in props:
        values = [e["properties"][name] for e in entries]
        if all(v == values[0] for v in values):
            continue
        if not all(isinstance(v, dict) and set(v) == {"const"} for v in values):
            return None
        out["properties"][name] = {"enum": list(dict.fromkeys(v["const"] for v in values))}
    rest = [{k: v for k, v in e.items() if k != "properties"} for e in entries]
    return out if all(r == rest[0] for r in rest) else None


def _hints(s: dict[str, Any]) -> list[str]:
    """The bounds the strict form drops, in words for the description."""
    out = []
    lo, hi = s.get("minLength"), s.get("maxLength")
    if isinstance(hi, int):
        out.append(f"at most {hi} characters")
    elif isinstance(lo, int) and lo > 0:
        out.append(f"at least {lo} characters")
    lo, hi = s.get("minItems"), s.get("maxItems")
    if isinstance(s.get("prefixItems"), list) and lo is None and hi is None:
        lo = hi = len(s["prefixItems"])
    if isinstance(lo, int) and lo == hi:
        out.append(f"exactly {lo} items")
    elif isinstance(lo, int) and isinstance(hi, int):
        out.append(f"{lo} to {hi} items")
    elif isinstance(hi, int):
        out.append(f"at most {hi} items")
    elif isinstance(lo, int) and lo > 0:
        out.append(f"at least {lo} items")
    lo, hi = s.get("minimum"), s.get("maximum")
    if isinstance(lo, int | float) and isinstance(hi, int | float):
        out.append(f"from {lo} to {hi}")
    if isinstance(s.get("prefixItems"), list) and _pinned_keys(s["prefixItems"]):
        out.append("one item for each of: " + ", ".join(_pinned_keys(s["prefixItems"])))
    return out


def _pinned_keys(entries: list[Any]) -> list[str]:
    found = []
    for entry in entries:
        props = entry.get("properties") if isinstance(entry, dict) else None
        for sub in (props or {}).values():
            if isinstance(sub, dict) and "const" in sub:
                found.append(str(sub["const"]))
                break
    return found if len(found) == len(entries) else []


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict) or admits_null(schema):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list):
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        out["type"] = [*kind, "null"]
        return out
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    if isinstance(out.get("enum"), list):
        out["enum"] = [*out["enum"], None]
        return out
    keep = {k: v for k, v in out.items() if k in ("description", "title")}
    branch = {k: v for k, v in out.items() if k not in ("description", "title")}
    return {**keep, "anyOf": [branch, {"type": "null"}]}


def admits_null(schema: Any) -> bool:
    """Whether `schema` (rich or strict) lets a value be null."""
    if not isinstance(schema, dict):
        return schema is True
    if not schema:
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in schema:
        return schema["const"] is None
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    branches = [*(schema.get("anyOf") or []), *(schema.get("oneOf") or [])]
    return any(admits_null(b) for b in branches)


# -- the reply, on our side ---------------------------------------------------------------------
def restore(value: Any, rich: Any) -> Any:
    """`value` (a reply to the strict form) with the nulls it holds for properties the rich
    schema has as optional and not nullable removed: the reply as the rich schema reads it."""
    if isinstance(value, dict):
        props = _properties(rich)
        out = {}
        for key, item in value.items():
            subs = props.get(key, [])
            if item is None and subs and not any(admits_null(s) for s in subs):
                continue
            out[key] = restore(item, subs[0]) if subs else item
        return out
    if isinstance(value, list):
        return [restore(item, _item_schema(rich, i)) for i, item in enumerate(value)]
    return value


def _properties(schema: Any) -> dict[str, list[Any]]:
    """Every schema a key may have at this level (over anyOf/oneOf/allOf branches)."""
    found: dict[str, list[Any]] = {}
    if not isinstance(schema, dict):
        return found
    for name, sub in (schema.get("properties") or {}).items():
        found.setdefault(name, []).append(sub)
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or []:
            for name, subs in _properties(branch).items():
                found.setdefault(name, []).extend(subs)
    return found


def _item_schema(schema: Any, index: int) -> Any:
    if not isinstance(schema, dict):
        return None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return schema.get("items")


def keyed(schema: Any) -> Any:
    """The rich schema as replies to the strict form are checked: pinned positions read by
    key (any order, the count kept), every other bound as written."""
    if isinstance(schema, list):
        return [keyed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: keyed(v) for k, v in schema.items()}
    prefix = out.pop("prefixItems", None)
    if isinstance(prefix, list) and prefix:
        entries = [e for e in prefix if isinstance(e, dict)]
        merged = _merge_pinned(entries) if len(entries) == len(prefix) else None
        out["items"] = merged or ({"anyOf": prefix} if len(prefix) > 1 else prefix[0])
        out.setdefault("minItems", len(prefix))
        out.setdefault("maxItems", len(prefix))
    return out


def reply_problems(value: Any, rich: dict[str, Any], *, limit: int = 3) -> list[str]:
    """What in `value` breaks the rich schema (read `keyed`), in words a model can act on.
    A reply `schema_check` finds valid is not walked again by jsonschema (nor is jsonschema
    imported for it)."""
    text = schema_text(rich)
    if surely_valid(value, _keyed(text)):
        return []
    validator = _validator(text)
    if validator.is_valid(value):
        return []
    problems = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(root)"
        problems.append(f"{where}: {_describe(error)}")
        if len(problems) == limit:
            break
    return problems


def schema_text(schema: Any) -> str:
    """`schema` as JSON text, the key of what is worked out once per schema (pydantic-core
    writes it in a third of `json.dumps`'s time; what it refuses, json.dumps writes)."""
    try:
        return to_json(schema, inf_nan_mode="constants").decode()
    except PydanticSerializationError:  # a lone surrogate
        return json.dumps(schema)


@lru_cache(maxsize=512)
def _keyed(text: str) -> Any:
    """The rich schema as replies are checked (`keyed`), once per schema."""
    return keyed(json.loads(text))


@lru_cache(maxsize=512)
def _validator(text: str) -> Any:
    """One validator per rich schema (building it costs more than using it)."""
    import jsonschema  # 0.1-0.3 s to import: only when a reply needs its check

    return jsonschema.Draft202012Validator(_keyed(text))


def _describe(error: Any) -> str:
    """jsonschema's words, without quoting a whole array or object back."""
    kind, bound, found = error.validator, error.validator_value, error.instance
    if kind in ("maxItems", "minItems") and isinstance(found, list):
        word = "at most" if kind == "maxItems" else "at least"
        return f"expected {word} {bound} items, found {len(found)}"
    if kind in ("maxLength", "minLength") and isinstance(found, str):
        word = "at most" if kind == "maxLength" else "at least"
        return f"expected {word} {bound} characters, found {len(found)}"
    if kind == "enum":
        return f"expected one of {json.dumps(bound)[:120]}, found {json.dumps(found)[:60]}"
    message = str(error.message)
    return message if len(message) <= 160 else message[:157] + "..."

"""The official M365 eval-document schema, and its errors rewritten for people.

jsonschema reports `oneOf` failures as "X is not valid under any of the given schemas" with
every branch's errors nested inside. We pick the branch the user evidently meant (the item
with `turns` is a thread; the score with `"result": "error"` is an errored score) and report
only its errors, each with a key path like `items[3].turns[0].prompt` and an
"expected ..., found ..." message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentopt.core.errors import Problem
from agentopt.core.files.m365_schemas import newest_known_version, official_schema
from agentopt.datasets.problems import describe, did_you_mean, key_path

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


MAX_SCHEMA_ERRORS = 300
"""Schema violations explained per document; a document of 20,000 broken items costs ~0.5 ms
of jsonschema per item, and no one reads past the first hundred (datasets/problems.py)."""


def schema_problems(
    document: Any, file: str, schema: dict[str, Any] | None = None
) -> list[Problem]:
    """Every way `document` breaks `schema` (default: the newest shipped one), as located
    plain-English problems."""
    import jsonschema  # 0.1-0.3 s to import: only when an M365 document is checked

    schema = schema if schema is not None else official_schema()
    validator_cls = jsonschema.validators.validator_for(schema)
    validator = validator_cls(schema)
    found: list[tuple[tuple[Any, ...], str]] = []
    for count, error in enumerate(validator.iter_errors(document), 1):
        if count > MAX_SCHEMA_ERRORS:  # lazily produced: the rest is never computed
            found.append(((), f"the schema check stopped after {MAX_SCHEMA_ERRORS} problems"))
            break
        found.extend(_explain(error, schema))
    found.sort(key=lambda item: tuple((isinstance(p, str), p) for p in item[0]))
    problems: dict[Problem, None] = {}  # de-duplicated in order, O(1) each
    for path, message in found:
        problems.setdefault(Problem(file, key_path(path), message))
    return list(problems)


def _explain(error: ValidationError, root: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    path = tuple(error.absolute_path)
    kind = error.validator
    instance = error.instance
    if kind in ("oneOf", "anyOf") and error.context:
        return _explain_branches(error, root)
    if "propertyNames" in error.relative_schema_path:
        return [
            (
                (*path, instance),
                f"expected an evaluator name that starts with a letter and has only letters, "
                f'digits and "_", found "{instance}"',
            )
        ]
    if kind == "required":
        missing = _missing_key(error)
        found = describe(instance)
        return [((*path, missing), f'missing required key "{missing}": expected it, found {found}')]
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = list(error.schema.get("properties", {}))
        extras = [k for k in instance if k not in allowed]
        shown = ", ".join(allowed)
        return [
            ((*path, k), f'unknown key "{k}"{did_you_mean(k, allowed)}; allowed here: {shown}')
            for k in extras
        ]
    return [(path, _message(error))]


def _missing_key(error: ValidationError) -> str:
    match = re.match(r"^'(.+)' is a required property$", error.message)
    return match[1] if match else str(error.message)


def _message(error: ValidationError) -> str:
    kind, value, instance = error.validator, error.validator_value, error.instance
    found = describe(instance)
    if kind == "pattern" and error.absolute_path and error.absolute_path[-1] == "schemaVersion":
        return f'expected a version like "{newest_known_version()}", found {found}'
    if kind == "not":
        return "this combination of keys is not allowed here"
    expected = _EXPECTED.get(str(kind))
    if expected is not None:
        return f"expected {expected(value)}, found {found}"
    raw = str(error.message)
    return raw if len(raw) <= 200 else raw[:197] + "..."


_TYPE_NAMES = {
    "object": "an object",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _types(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(_TYPE_NAMES.get(str(n), str(n)) for n in names)


_EXPECTED: dict[str, Callable[[Any], str]] = {
    "type": _types,
    "pattern": lambda v: f"text matching {v}",
    "enum": lambda v: f"one of {', '.join(json.dumps(x) for x in v)}",
    "const": json.dumps,
    "minItems": lambda v: f"at least {v} item{'s' if v != 1 else ''}",
    "maxItems": lambda v: f"at most {v} items",
    "minLength": lambda v: "non-empty text",
    "minimum": lambda v: f"a number ≥ {v}",
    "exclusiveMinimum": lambda v: f"a number > {v}",
    "maximum": lambda v: f"a number ≤ {v}",
    "exclusiveMaximum": lambda v: f"a number < {v}",
}
"""What a failed schema keyword expected, given its value: each message is "expected …,
found …"."""


def _explain_branches(
    error: ValidationError, root: dict[str, Any]
) -> list[tuple[tuple[Any, ...], str]]:
    """Report the errors of the alternative the user evidently meant (see module docstring)."""
    path = tuple(error.absolute_path)
    instance = error.instance
    if _is_item_path(path) and isinstance(instance, dict):
        if "prompt" in instance and "turns" in instance:
            return [
                (
                    path,
                    'expected either "prompt" (a single-turn item) or "turns" (a thread), '
                    "found both",
                )
            ]
        if "prompt" not in instance and "turns" not in instance:
            return [
                (
                    path,
                    'expected "prompt" (a single-turn item) or "turns" (a thread), '
                    f"found {describe(instance)}",
                )
            ]
    if not isinstance(instance, dict) and any(
        c.validator == "type" and tuple(c.absolute_path) == path for c in error.context
    ):
        names = [_branch_type(root, b) for b in error.schema.get(error.validator, [])]
        wanted = " or ".join(sorted({n for n in names if n})) or "another shape"
        return [(path, f"expected {wanted}, found {describe(instance)}")]
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    if error.validator == "oneOf" and len(branches) < len(error.schema.get("oneOf", [])):
        return [(path, _message(error))]
    penalty = {i: _penalty(errs, len(path)) for i, errs in branches.items()}
    best = min(penalty.values())
    chosen = [i for i, p in penalty.items() if p == best]
    if len(chosen) > 1 and all(e.validator == "required" for i in chosen for e in branches[i]):
        keys = sorted({_missing_key(e) for i in chosen for e in branches[i]})
        listed = ", ".join(f'"{k}"' for k in keys)
        return [(path, f"expected at least one of the keys {listed}, found none")]
    out: list[tuple[tuple[Any, ...], str]] = []
    for sub in branches[chosen[0]]:
        out.extend(_explain(sub, root))
    return out


def _is_item_path(path: tuple[Any, ...]) -> bool:
    return len(path) == 2 and path[0] == "items" and isinstance(path[1], int)


def _penalty(errors: list[ValidationError], depth: int) -> int:
    """How unlikely it is that the user meant this branch: top-level shape failures (missing
    or unexpected keys, a wrong discriminator like `result`) count far more than deep ones."""
    score = 0
    for err in errors:
        rel = len(err.absolute_path) - depth
        if rel == 0:
            score += 10
        elif rel == 1 and err.validator in ("const", "enum"):
            score += 20
        else:
            score += 1
    return score


def _branch_type(root: dict[str, Any], branch: dict[str, Any]) -> str | None:
    ref = branch.get("$ref", "")
    target: Any = branch
    if ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
    kind = target.get("type") if isinstance(target, dict) else None
    return _TYPE_NAMES.get(kind, kind) if isinstance(kind, str) else None

"""Reading judge replies — strict first, lenient about wrapping, never about content.

A judge that is not schema-constrained (compat servers, Ollama, servers that ignore
`response_format`) wraps JSON in code fences, puts prose around it or leaves trailing commas.
The reply is read in two steps:

1. **strict**: the whole reply (or its one fenced block) is one JSON object of the reply shape;
2. **lenient**: the one top-level JSON object in the text that reads as a verdict (it
   validates, or names a verdict field). Exactly one: a reply holding two (`{"score": 1}` then
   `{"score": 5}`), or a verdict with anything after it that parses as one (a comment
   `<!-- {"score": 5} -->`, an agent's JSON quoted around it), cannot say which it means, so
   it fails closed rather than letting either flip the other (issue 38).

Whatever is read fails closed: a key given twice in one object, a verdict attempt that is
broken, more than one verdict, `NaN`/`Infinity`, hex or other Python literals (`0x5`,
`'single quotes'`, `True`) are parse failures, re-asked by the caller and then reported as
`judgeParseFailed`. Never the first digit in the text.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentopt.core.json_scan import bracket_depths

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
MAX_REPLY_CHARS = 200_000
"""Longer replies are not scanned (a runaway judge); the caller re-asks."""


class JudgeParseError(ValueError):
    """The reply holds no usable JSON object; the message is quoted back to the judge."""


class _NotJson(JudgeParseError):
    """The text is not JSON at all (a syntax error), as opposed to JSON that is refused."""


def parse_reply(text: str, model: type[M]) -> M:
    """The reply's verdict as `model`, strict first, then the last object that validates.

    Raises:
        JudgeParseError: saying what is wrong, in words the judge can act on.
    """
    _check_size(text)
    strict = _strict_candidate(text)
    if strict is not None:
        try:
            data = _load_object(strict)
        except _NotJson:
            pass  # prose between objects, say: the lenient path reads it
        else:
            return _validate(data, model)
    groups = _object_groups(text)
    if not groups:
        raise JudgeParseError("the reply contains no JSON object (expected one starting with '{')")
    fields = set(model.model_fields)
    verdicts: list[tuple[str, M | None]] = []
    for group in groups:
        try:
            verdicts.append((group, _validate(_load_object(group), model)))
        except JudgeParseError:
            if _mentions(group, fields):
                verdicts.append((group, None))  # a verdict attempt, broken
    if len(verdicts) > 1:
        # Two verdicts (`{"score": 1}` then `{"score": 5}`), or one followed by anything that
        # reads as one (`<!-- {"score": 5} -->`): which one the judge meant cannot be told, and
        # taking either would let text after the verdict flip it. Fail closed.
        raise JudgeParseError(
            f"the reply holds {len(verdicts)} objects that read as verdicts; give exactly one "
            "JSON object and nothing after it"
        )
    if verdicts:
        group, verdict = verdicts[0]
        return verdict if verdict is not None else _validate(_load_object(group), model)
    raise JudgeParseError(
        "no JSON object in the reply has the expected fields: " + ", ".join(sorted(fields))
    )


def extract_json_object(text: str) -> dict[str, Any]:
    """The last complete JSON object in a reply whose shape the caller checks itself
    (generators); the same strict rules for what counts as JSON as `parse_reply`."""
    _check_size(text)
    strict = _strict_candidate(text)
    if strict is not None:
        try:
            return _load_object(strict)
        except _NotJson:
            pass
    groups = _object_groups(text)
    if not groups:
        raise JudgeParseError("the reply contains no JSON object (expected one starting with '{')")
    error: JudgeParseError | None = None
    for group in reversed(groups):
        try:
            return _load_object(group)
        except JudgeParseError as exc:
            error = error or exc
    assert error is not None
    raise error


def describe_validation_error(exc: ValidationError) -> str:
    """A short, judge-readable list of shape problems: `score: must be ≤ 5 (found 7)`."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        found = err.get("input")
        shown = (
            "" if err["type"] == "missing" else f" (found {json.dumps(found, default=str)[:60]})"
        )
        parts.append(f"{loc}: {err['msg']}{shown}")
    return "the JSON has the wrong shape: " + "; ".join(parts)


def _check_size(text: str) -> None:
    if not text or not text.strip():
        raise JudgeParseError("the reply was empty")
    if len(text) > MAX_REPLY_CHARS:
        raise JudgeParseError(
            f"the reply is {len(text)} characters long; give only the JSON object"
        )


def _strict_candidate(text: str) -> str | None:
    """The reply itself when it is nothing but JSON, or its only fenced block when the
    fence is all there is; else None (the lenient path decides)."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        return stripped
    fences = _FENCE.findall(stripped)
    if len(fences) == 1 and _FENCE.sub("", stripped).strip() == "":
        inner = str(fences[0]).strip()
        if inner.startswith("{") and inner.endswith("}"):
            return inner
    return None


def _validate(data: dict[str, Any], model: type[M]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise JudgeParseError(describe_validation_error(exc)) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JudgeParseError(f"the key {key!r} is given twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise JudgeParseError(f"{name} is not a number a verdict can hold")


def _json(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)


def _load_object(text: str) -> dict[str, Any]:
    """JSON (then JSON without trailing commas) that is an object; nothing else."""
    try:
        try:
            value = _json(text)
        except json.JSONDecodeError as exc:
            error = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            try:
                value = _json(_TRAILING_COMMA.sub(r"\1", text))
            except json.JSONDecodeError:
                raise _NotJson(error) from None
    except RecursionError:
        raise JudgeParseError("the JSON is nested too deeply") from None
    if not isinstance(value, dict):
        raise JudgeParseError(f"expected a JSON object, found {type(value).__name__}")
    return value


def _mentions(group: str, fields: set[str]) -> bool:
    return any(re.search(rf"[\"']?\b{re.escape(f)}\b[\"']?\s*:", group) for f in fields)


def _object_groups(text: str) -> list[str]:
    """Every top-level `{...}` with balanced braces (string-aware inside), in order; an
    object that never closes is the rest of the text (so it is reported as unterminated)."""
    groups: list[str] = []
    i = text.find("{")
    while i >= 0:
        end = _group_end(text, i)
        groups.append(text[i:end])
        i = text.find("{", end)
    return groups


def _group_end(text: str, start: int) -> int:
    """Just past the `}` closing the group that opens at `start`; the end of the text when
    it never closes."""
    return next((i + 1 for i, depth in bracket_depths(text, start, "{}") if depth == 0), len(text))


def entries_problem(got: list[str], wanted: list[str], noun: str) -> str | None:
    """What is wrong with a reply's list of per-item entries (verdicts per criterion, scores
    per dimension): an item given twice — even with the same value, since a contradiction
    would otherwise be settled by whichever entry is read last — or an item missing."""
    seen: set[str] = set()
    twice: list[str] = []
    for name in got:
        if name in seen and name not in twice:
            twice.append(name)
        seen.add(name)
    if twice:
        return (
            f"{noun} " + ", ".join(repr(n) for n in twice) + " given more than once; give "
            f"exactly one entry for each of: {', '.join(repr(n) for n in wanted)}"
        )
    missing = [n for n in wanted if n not in seen]
    if missing:
        return (
            f"no entry for {noun} " + ", ".join(repr(n) for n in missing) + "; give one "
            f"entry for each of: {', '.join(repr(n) for n in wanted)}"
        )
    return None

"""Lenient JSON extraction from judge replies — lenient about wrapping, strict about shape.

Judges (especially small or non-OpenAI models) wrap JSON in code fences, put prose before it,
leave trailing commas or use Python-style single quotes. We undo exactly those, then validate
the shape with a pydantic model. We never fall back to "the first digit in the text": a reply
we cannot read is re-asked, then reported as an error.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class JudgeParseError(ValueError):
    """The reply holds no usable JSON object; the message is quoted back to the judge."""


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a judge reply.

    Tries, in order: each fenced block, then the whole text; within each, the first balanced
    `{...}`; parsed as JSON, then without trailing commas, then as a Python-style literal
    (single quotes, True/False/None) through `ast` — never `eval`.
    """
    if not text or not text.strip():
        raise JudgeParseError("the reply was empty")
    candidates = [*_FENCE.findall(text), text]
    first_error: str | None = None
    for candidate in candidates:
        obj = _balanced_object(candidate)
        if obj is None:
            continue
        try:
            return _parse_object(obj)
        except JudgeParseError as exc:
            first_error = first_error or str(exc)
    if first_error:
        raise JudgeParseError(first_error)
    raise JudgeParseError("the reply contains no JSON object (expected one starting with '{')")


def parse_reply(text: str, model: type[M]) -> M:
    """Extract and validate a judge reply against `model`; JudgeParseError says what is wrong."""
    data = extract_json_object(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise JudgeParseError(describe_validation_error(exc)) from None


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


def _parse_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        value = _retry_lenient(text)
        if value is None:
            raise JudgeParseError(error) from None
    if not isinstance(value, dict):
        raise JudgeParseError(f"expected a JSON object, found {type(value).__name__}")
    return value


def _retry_lenient(text: str) -> Any:
    without_commas = _TRAILING_COMMA.sub(r"\1", text)
    try:
        return json.loads(without_commas)
    except json.JSONDecodeError:
        pass
    return _python_literal(without_commas)


def _python_literal(text: str) -> Any:
    """Parse a Python-style dict literal safely: only literals and the names true/false/null."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None

    def convert(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in _PY_NAMES:
            return _PY_NAMES[node.id]
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise ValueError("dict unpacking")
            return {convert(k): convert(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
        if isinstance(node, ast.List | ast.Tuple):
            return [convert(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = convert(node.operand)
            if isinstance(inner, int | float):
                return -inner
        raise ValueError(f"not a literal: {type(node).__name__}")

    try:
        return convert(tree.body)
    except (ValueError, TypeError):
        return None


def _balanced_object(text: str) -> str | None:
    """The first `{...}` with balanced braces, string-aware for both quote styles; when the
    object never closes, the rest of the text (so the parser reports it as unterminated)."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            # An apostrophe inside prose-like JSON values is handled by json.loads itself;
            # only treat it as a quote when it opens a token (after a delimiter).
            if ch == '"' or _opens_token(text, i):
                quote = ch
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def _opens_token(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j < 0 or text[j] in "{[,:"

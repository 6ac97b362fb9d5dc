"""Every failure of a model call becomes a classified `ModelCallError` (models.md §3).

The retry loop decides only from `kind`/`retryable`/`retry_after`, never from SDK types:
429, 5xx, 408/409, timeouts and connection errors are retryable; 400/401/403/404,
`insufficient_quota`, context-length and content-filter errors are not. A 200 whose body
cannot be a chat completion is `bad_gateway`: retried once, like a 5xx, then reported.
A 400/422/500/501 whose body names a request parameter (`response_format`, `json_schema`,
`tools`, `tool_choice`, `parallel_tool_calls`, `seed`, ...) is a capability error (kind
"unsupported", never retried): the server will refuse it however often it is sent, and the
call layer falls back (structured-output ladder, prompted tools) or drops the parameter.
Messages name the provider, the model and the cause — never a credential (they are redacted).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import ssl
import sys
import time
from collections.abc import Mapping
from typing import Any

from agentopt.core import limits
from agentopt.core.errors import ModelCallError
from agentopt.core.redaction import redact
from agentopt.models.http_client import HTTPStatusError

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "too many tokens",
)
_FILTER_MARKERS = (
    "content_filter",
    "content_policy_violation",
    "content management policy",
    "responsibleaipolicyviolation",
)

_CAPABILITY_STATUSES = frozenset({400, 422, 500, 501})
# The word a server's error names → the request parameter it refuses.
_CAPABILITY_WORDS: tuple[tuple[str, str], ...] = (
    ("response_format", "response_format"),
    ("json_schema", "response_format"),
    ("json_object", "response_format"),
    ("guided_json", "response_format"),
    ("json schema", "response_format"),
    ("tool_choice", "tool_choice"),
    ("parallel_tool_calls", "parallel_tool_calls"),
    ("tools", "tools"),
    ("tool_calls", "tools"),
    ("seed", "seed"),
)
_CAPABILITY_RES = tuple(
    (re.compile(rf"(?<![a-z0-9_]){word}(?![a-z0-9_])"), param) for word, param in _CAPABILITY_WORDS
)

_HINTS = {
    "auth": "check the credentials for this provider ({key_hint}); the key or token was rejected",
    "not_found": "check the model or deployment name and the base URL",
    "quota": "the account has no quota left: check billing or use another deployment",
    "context_length": "the prompt is longer than the model's context window: shorten it or "
    "use a model with a larger one",
    "content_filter": "the provider's content filter blocked this request or answer",
    "parse": "is the base URL an OpenAI-compatible /v1 endpoint?",
    "bad_gateway": "a proxy or gateway in front of the model answered instead of it; if it "
    "keeps happening, check the base URL",
}


def answer_too_large(provider: str, model: str, size: int) -> ModelCallError:
    """An answer over `core.limits`' cap: an error (never retried: it would be as long again),
    the text discarded."""
    return ModelCallError(
        f"{provider} model '{model}' failed: " + limits.too_large("the answer", size),
        kind="too_large",
        provider=provider,
        model=model,
    )


def unusable_answer(provider: str, model: str, detail: str, base_url: str = "") -> ModelCallError:
    """A 200 whose body cannot be a chat completion (an HTML page, an empty or cut-off body,
    an error object, no `choices`): what a proxy says when the model behind it hiccups, so
    it is retried like a 5xx, once (`attempts.py`), then reported."""
    where = f" from {base_url}" if base_url else ""
    return ModelCallError(
        redact(
            f"{provider} model '{model}' failed: the 200 answer{where} is not a chat "
            f"completion ({detail})"
        ),
        kind="bad_gateway",
        provider=provider,
        model=model,
        retryable=True,
        status_code=200,
        hint=_HINTS["bad_gateway"],
    )


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from `retry-after-ms`, else `Retry-After` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # an HTTP date: rare, and email is heavy

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(
    exc: BaseException,
    *,
    provider: str,
    model: str,
    base_url: str = "",
    key_hint: str = "",
    secrets: list[str] | None = None,
) -> ModelCallError:
    """Turn any exception raised by a provider call into a `ModelCallError`."""
    if isinstance(exc, ModelCallError):
        return exc
    kind, retryable, status, retry_after, cause = _classify(exc, base_url)
    message = redact(f"{provider} model '{model}' failed: {cause}", extra_secrets=secrets)
    hint = _HINTS.get(kind)
    if hint:
        hint = hint.format(key_hint=key_hint or "its API key or Azure login")
    unsupported = None
    if kind == "unsupported":
        unsupported = unsupported_parameter(cause)
    return ModelCallError(
        message,
        kind=kind,
        provider=provider,
        model=model,
        retryable=retryable,
        status_code=status,
        retry_after=retry_after,
        hint=hint,
        unsupported=unsupported,
    )


def unsupported_parameter(text: str) -> str | None:
    """The request parameter an error text names (first in `_CAPABILITY_WORDS` order)."""
    lower = text.lower()
    for pattern, param in _CAPABILITY_RES:
        if pattern.search(lower):
            return param
    return None


def _classify(exc: BaseException, base_url: str) -> tuple[str, bool, int | None, float | None, str]:
    """(kind, retryable, HTTP status, retry_after, cause text)."""
    if isinstance(exc, HTTPStatusError):  # the lean path's answer, shaped like the SDK's error
        return _classify_status(exc)
    # The SDK is only consulted when it is loaded: an exception cannot come from it otherwise.
    openai: Any = sys.modules.get("openai")
    if openai is not None:
        sdk = _classify_openai(exc, openai, base_url)
        if sdk is not None:
            return sdk
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timeout", True, None, None, "the request timed out"
    if isinstance(exc, json.JSONDecodeError):  # the SDK's: a 200 body cut off or not JSON
        where = f" from {base_url}" if base_url else ""
        cause = f"the 200 answer{where} is not valid OpenAI JSON ({exc})"
        return "bad_gateway", True, 200, None, cause
    if isinstance(exc, ssl.SSLCertVerificationError):
        where = f" of {base_url}" if base_url else ""
        return "connection", False, None, None, f"the TLS certificate{where} is not trusted ({exc})"
    if isinstance(exc, ConnectionRefusedError | socket.gaierror):
        where = f" to {base_url}" if base_url else ""
        return "connection", True, None, None, f"could not connect{where} ({exc})"
    if isinstance(exc, ConnectionError | OSError | EOFError):
        return "connection", True, None, None, f"connection error ({exc})"
    return "unknown", False, None, None, f"{type(exc).__name__}: {exc}"


def _classify_openai(
    exc: BaseException, openai: Any, base_url: str
) -> tuple[str, bool, int | None, float | None, str] | None:
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc)
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", True, None, None, "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        where = f" to {base_url}" if base_url else ""
        return "connection", True, None, None, f"could not connect{where} ({_cause_text(exc)})"
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return "content_filter", False, None, None, "the content filter stopped the answer"
    if isinstance(exc, openai.APIResponseValidationError):
        where = f" from {base_url}" if base_url else ""
        cause = f"the 200 answer{where} does not match the OpenAI schema"
        return "bad_gateway", True, 200, None, cause
    return None


def _classify_status(exc: Any) -> tuple[str, bool, int | None, float | None, str]:
    status = int(exc.status_code)
    body = exc.body if isinstance(exc.body, dict) else {}
    err = body.get("error", body) if isinstance(body.get("error", body), dict) else body
    code = str(exc.code or err.get("code") or "")
    detail = str(err.get("message") or exc.message or "")
    text = f"{code} {detail} {exc.message}".lower()
    headers = dict(exc.response.headers) if getattr(exc, "response", None) is not None else {}
    retry_after = parse_retry_after(headers)
    cause = f"HTTP {status}" + (f" {code}" if code else "") + (f": {detail}" if detail else "")
    if status == 429:
        if "insufficient_quota" in text:
            return "quota", False, status, None, cause
        return "rate_limit", True, status, retry_after, cause
    if any(m in text for m in _CONTEXT_MARKERS):
        return "context_length", False, status, None, cause
    if any(m in text for m in _FILTER_MARKERS):
        return "content_filter", False, status, None, cause
    if status in (401, 403):
        return "auth", False, status, None, cause
    if status == 404:
        return "not_found", False, status, None, cause
    if status in _CAPABILITY_STATUSES and unsupported_parameter(text) is not None:
        return "unsupported", False, status, None, cause
    if status in (408, 409):
        return "timeout" if status == 408 else "server", True, status, retry_after, cause
    if status >= 500:
        return "server", True, status, retry_after, cause
    return "bad_request", False, status, None, cause


def _cause_text(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return f"{type(inner).__name__}: {inner}" if inner else str(exc)

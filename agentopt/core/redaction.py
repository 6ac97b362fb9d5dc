"""Secrets never reach logs, results, reports or error text.

Everything that writes user-visible text from data that might hold a credential passes it
through `redact()`: header values named like credentials, bearer tokens, and the value of every
environment variable whose name ends in _KEY, _TOKEN or _SECRET (models.md §3).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
SECRET_HEADER_NAMES = {"api-key", "authorization", "x-api-key", "ocp-apim-subscription-key"}
MASK = "***"

_PATTERNS = [
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*"),
    re.compile(r"(?i)((?:api[-_]?key|authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?)([^\s\"',}]+)"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
]


def looks_like_secret(value: str) -> bool:
    """True for text shaped like a credential rather than a name: a known key prefix, or a
    long run of letters and digits mixed without separators (`3f9aQ7...`, a JWT, a hex key).
    Environment variable names (`LAB_API_KEY`) and model names do not match."""
    if any(p.search(value) for p in _PATTERNS[2:]):
        return True
    compact = value.strip()
    if len(compact) < 20 or re.search(r"[_\s]", compact):
        return False
    has_digit = any(ch.isdigit() for ch in compact)
    has_lower = any(ch.islower() for ch in compact)
    has_upper = any(ch.isupper() for ch in compact)
    return has_digit and (has_lower or has_upper) and sum(ch.isdigit() for ch in compact) >= 4


def secret_env_value(value: str) -> bool:
    """A credential, not a word: `SHOP_TOKEN=true` or `X_KEY=Incorrect` must not turn every
    "true" or "Incorrect" in an error message into ***. Keys and tokens are long, or mix in
    digits or punctuation."""
    if len(value) < 6 or value.isspace():
        return False
    return len(value) >= 24 or not value.isalpha()


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of env vars that look like secrets, longest first (so substrings mask last)."""
    env = os.environ if environ is None else environ
    values = {
        v for k, v in env.items() if k.upper().endswith(SECRET_ENV_SUFFIXES) and secret_env_value(v)
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, extra_secrets: list[str] | None = None) -> str:
    """Mask credentials in free text."""
    if not text:
        return text
    for value in [*(extra_secrets or []), *secret_values()]:
        if value and value in text:
            # Whole tokens only: a secret never hides inside a longer word.
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", MASK, text)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _PATTERNS[2].sub(MASK, text)
    return text


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Copy of headers with credential-bearing values masked."""
    return {
        k: (MASK if k.lower() in SECRET_HEADER_NAMES else redact(v)) for k, v in headers.items()
    }


def redact_data(value: Any, extra_secrets: list[str] | None = None) -> Any:
    """Deep-redact strings inside JSON-like data (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value, extra_secrets)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and k.lower() in SECRET_HEADER_NAMES:
                out[k] = MASK
            else:
                out[k] = redact_data(v, extra_secrets)
        return out
    if isinstance(value, list | tuple):
        return [redact_data(v, extra_secrets) for v in value]
    return value

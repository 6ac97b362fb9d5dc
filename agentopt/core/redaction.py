"""Secrets never reach logs, results, reports, caches or error text.

Everything that writes user-visible text from data that might hold a credential passes it
through `redact()` / `redact_data()`: header values named like credentials, bearer tokens, and
the value of every environment variable whose name ends in _KEY, _TOKEN or _SECRET
(models.md §3).

One matcher does it (`Redactor`), compiled from the secret values: the environment's, rebuilt
only when the environment changes (`current()`), plus the extra values a caller knows (a
provider's key read from an oddly named variable), kept per set of extras. A string that holds
no secret and nothing shaped like a credential costs one regular-expression scan and comes back
as it was; a structure in which nothing changed comes back as the same object. Measured: 11,019
calls per 1,000 tasks cost 2.9 s when each call re-read the environment; now they cost one scan
each.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

M = TypeVar("M", bound=BaseModel)

SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CONNECTION_STRING")
CONNECTION_SECRET_KEYS = (
    "accountkey", "sharedaccesskey", "sharedaccesssignature", "password", "pwd", "sig",
    "apikey", "api-key", "api_key", "key", "code", "token", "access_token", "secret",
    "clientsecret", "client_secret", "auth",
)  # fmt: skip
"""Keys of a connection string (`AccountKey=...;`) or URL query (`?sig=...`) whose value is a
secret on its own: masked wherever it appears, not only inside the whole string."""
MIN_CONFIGURED = 4
"""Shortest configured secret value masked (a header value, an `options.secrets` variable):
shorter ones would mask common words."""
SECRET_HEADER_NAMES = {"api-key", "authorization", "x-api-key", "ocp-apim-subscription-key"}
MASK = "***"
MAX_EXTRA_SETS = 64
"""Matchers kept per redactor for distinct sets of extra secrets (providers, targets)."""

_PATTERNS = [
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*"),
    re.compile(r"(?i)((?:api[-_]?key|authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?)([^\s\"',}]+)"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
]
# What any of the patterns needs to be present at all: the cheap first scan.
_SHAPES = r"(?i:bearer|api[-_]?key|authorization)|\bsk-"
# The same over JSON text, where an escape (`\n` before `sk-`) hides a word boundary and a
# credential header's name is a key: no boundaries, every header name. Plain substrings of the
# lower-cased text (`str.__contains__` is ~6x faster than the case-insensitive alternation).
_JSON_WORDS = (
    "bearer", "apikey", "api-key", "api_key", "authorization", "ocp-apim-subscription-key"
)  # fmt: skip
# Text that is not ASCII is folded first as `re`'s case-insensitive match would fold it: the
# characters it takes for an ASCII letter are İ, ı, ſ and the Kelvin sign, and `str.lower`
# turns only the last into its letter (found by trying every code point; a test keeps it so,
# and the property test of `json_line` fails without the fold). The regular
# expression this replaced took 108 µs on a 2 KB optimizer journal line holding an em dash;
# the substring tests take 18 µs.
ASCII_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_FOLD_TABLE = str.maketrans(ASCII_FOLDS)


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
    """Values of env vars that look like secrets, longest first (so substrings mask last),
    with the secret parts of connection strings and URLs among them on their own, and every
    value configured as secret-bearing (`remember`)."""
    env = os.environ if environ is None else environ
    values = {
        v for k, v in env.items() if k.upper().endswith(SECRET_ENV_SUFFIXES) and secret_env_value(v)
    }
    values |= {part for v in list(values) for part in secret_parts(v)}
    values |= _CONFIGURED
    return sorted(values, key=len, reverse=True)


def secret_parts(value: str) -> list[str]:
    """The secret values inside a connection string (`AccountKey=...;Password=...`) or a URL's
    query (`?sig=...&api-key=...`)."""
    if "=" not in value:
        return []
    out = []
    for piece in re.split(r"[;&?]", value):
        key, sep, part = piece.partition("=")
        if sep and key.strip().lower() in CONNECTION_SECRET_KEYS and len(part) >= MIN_CONFIGURED:
            out.append(part.strip())
    return out


_CONFIGURED: set[str] = set()
"""Values configuration names as secret-bearing (provider and agent headers, query parameters
of configured URLs, `options.secrets`), masked from the moment they are known."""


def remember(values: Iterable[str | None]) -> None:
    """Mask these values everywhere from now on (every file and message written through this
    module): what eval.yaml and the providers know to be secret, whatever the variable that
    holds it is called. Values shorter than `MIN_CONFIGURED` are left alone."""
    new = set()
    for value in values:
        if isinstance(value, str) and len(value.strip()) >= MIN_CONFIGURED:
            new.add(value.strip())
            new.update(secret_parts(value))
    if new - _CONFIGURED:
        _CONFIGURED.update(new)
        _CURRENT.snapshot = None  # rebuilt on the next use


def _key_at_boundary(lowered: str) -> bool:
    """Whether an `sk-` in JSON text may start a key (`\\bsk-`): one preceded by a word
    character (`task-0001`, `risk-free`) cannot, unless an escape ends there (`\\n`, `\\u001b`
    hide the boundary the string has): one within six characters after a backslash counts.
    A bench run's task names made every journal line walk before this (16% of its CPU)."""
    start = 0
    while (at := lowered.find("sk-", start)) >= 0:
        before = lowered[at - 1] if at else " "
        if not (before.isalnum() or before == "_") or "\\" in lowered[max(0, at - 6) : at]:
            return True
        start = at + 3
    return False


class Redactor:
    """A matcher compiled once from a set of secret values.

    `text()` masks a string, `data()` a JSON-like structure; both return their input itself
    when there was nothing to mask, so a caller can tell (`is`) whether anything changed.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        # Whole tokens only: a secret never hides inside a longer word.
        self._whole = [
            re.compile(rf"(?<![A-Za-z0-9]){re.escape(s)}(?![A-Za-z0-9])") for s in self.secrets
        ]
        alternatives = [re.escape(s) for s in self.secrets]
        self._any = re.compile("|".join([*alternatives, _SHAPES]))
        # A secret JSON writes escaped (a quote, a backslash, a control character) cannot be
        # found in the JSON text: such a set is always walked.
        self._json_scannable = all(
            json.dumps(s, ensure_ascii=False)[1:-1] == s for s in self.secrets
        )
        self._extended: dict[tuple[str, ...], Redactor] = {}
        self._given: dict[tuple[str, ...], Redactor] = {}

    def with_extra(self, extra: Iterable[str] | None) -> Redactor:
        """This matcher plus `extra` values (compiled once per distinct set). Looked up first
        by the values as given: every model call asks with its provider's same few keys."""
        if not extra:
            return self
        given = tuple(extra)
        found = self._given.get(given)
        if found is not None:
            return found
        key = tuple(sorted({s for s in given if s and s not in self.secrets}))
        found = self._extended.get(key) if key else self
        if found is None:
            if len(self._extended) >= MAX_EXTRA_SETS:
                self._extended.clear()
            found = self._extended[key] = Redactor([*self.secrets, *key])
        if len(self._given) >= MAX_EXTRA_SETS:
            self._given.clear()
        self._given[given] = found
        return found

    def text(self, text: str) -> str:
        """`text` with every secret and credential-shaped value masked."""
        if not text or self._any.search(text) is None:
            return text
        for value, whole in zip(self.secrets, self._whole, strict=True):
            if value in text:
                text = whole.sub(MASK, text)
        text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {MASK}", text)
        text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{MASK}", text)
        return _PATTERNS[2].sub(MASK, text)

    def _holds_secret_value(self, text: str) -> bool:
        secrets = self.secrets
        return bool(secrets) and any(secret in text for secret in secrets)

    def _json_may_hold(self, line: str) -> bool:
        if self._holds_secret_value(line):
            return True
        if not line.isascii() and any(ch in line for ch in ASCII_FOLDS):
            line = line.translate(_FOLD_TABLE)  # slow (per character), so only when needed
        lowered = line.lower()
        # Every word holds "api" ("ocp-apim-…" too), "bearer" or "authorization": a text with
        # none of the three is not searched for each word (three tests, not six, on nearly
        # every line: 2.3 against 3.6 µs a 900-byte journal line; a test keeps the words so).
        if ("api" in lowered or "bearer" in lowered or "authorization" in lowered) and any(
            word in lowered for word in _JSON_WORDS
        ):
            return True
        return "sk-" in lowered and _key_at_boundary(lowered)

    def json_text_clean(self, text: str) -> bool:
        """Whether JSON text holds nothing `data` would mask in the value it was made from
        (the scan `json_line` makes before it walks)."""
        return self._json_scannable and not self._json_may_hold(text)

    def masked_json_clean(self, text: str) -> bool:
        """Whether JSON text this version masked before (a journal line written by the same
        code) holds nothing to mask now: none of this matcher's secret values. The credential
        shapes it was masked for then are the same now, and masking a masked text again
        changes nothing (`tests/test_redaction.py`); a secret added to the environment since
        is what may be new. 10,000 journal lines: 0.6 ms, against 23 for the full
        scan of every line."""
        return self._json_scannable and not self._holds_secret_value(text)

    def json_line(self, value: Any, default: Any = None) -> tuple[Any, str]:
        """`value` masked (see `data`) and its JSON text (`ensure_ascii=False`): serialised
        first and scanned once, walked only when the text holds something to mask (a results
        file of 1,000 clean tasks: one scan per task instead of a walk of every string)."""
        line = json.dumps(value, ensure_ascii=False, default=default)
        if self._json_scannable and not self._json_may_hold(line):
            return value, line
        masked = self.data(value)
        if masked is value:
            return value, line
        return masked, json.dumps(masked, ensure_ascii=False, default=default)

    def data(self, value: Any) -> Any:
        """Deep-redact strings inside JSON-like data (dicts, lists, tuples, strings); values
        under credential header names are masked whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            changed = not isinstance(value, dict)
            for k, v in value.items():
                if isinstance(k, str) and k.lower() in SECRET_HEADER_NAMES:
                    new: Any = MASK
                else:
                    new = self.data(v)
                changed = changed or new is not v
                out[k] = new
            return out if changed else value
        if isinstance(value, list | tuple):
            items = [self.data(v) for v in value]
            if isinstance(value, list) and all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items
        return value


class _Current:
    """The environment's redactor, rebuilt when the environment's contents change."""

    def __init__(self) -> None:
        self.snapshot: dict[Any, Any] | None = None
        self.redactor = Redactor(())

    def get(self) -> Redactor:
        # os.environ's own store: comparing it with the last copy is one C-level dict
        # comparison, where reading every variable through os.environ decodes each one.
        store = getattr(os.environ, "_data", None)
        if not isinstance(store, dict):
            return Redactor(secret_values())
        if store != self.snapshot:
            self.snapshot = dict(store)
            self.redactor = Redactor(secret_values())
        return self.redactor


_CURRENT = _Current()


def current(extra: Iterable[str] | None = None) -> Redactor:
    """The matcher for the environment as it is now, plus `extra` secret values."""
    return _CURRENT.get().with_extra(extra)


def redact(text: str, extra_secrets: list[str] | None = None) -> str:
    """Mask credentials in free text."""
    if not text:
        return text
    return current(extra_secrets).text(text)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Copy of headers with credential-bearing values masked."""
    matcher = current()
    return {
        k: (MASK if k.lower() in SECRET_HEADER_NAMES else matcher.text(v))
        for k, v in headers.items()
    }


def redact_json(
    value: Any, extra_secrets: list[str] | None = None, default: Any = None
) -> tuple[Any, str]:
    """JSON-like data masked, and its one-line JSON text (the write boundaries)."""
    return current(extra_secrets).json_line(value, default)


def redact_data(value: Any, extra_secrets: list[str] | None = None) -> Any:
    """Deep-redact strings inside JSON-like data (dicts, lists, strings). Data with nothing
    to mask comes back as the same object."""
    return current(extra_secrets).data(value)


def _model_json(model: BaseModel, default: Any = None) -> str | None:
    try:
        return to_json(model, inf_nan_mode="constants", fallback=default).decode("utf-8")
    except PydanticSerializationError:  # a lone surrogate, an unknown type: the general road
        return None


def model_line(model: BaseModel, default: Any = None) -> str:
    """A model's one-line JSON as a journal writes it, secrets masked: pydantic-core's
    serialisation, scanned once, where `redact_json(model.model_dump(mode="json"))` built
    the dump and then serialised it with `json.dumps` (7 + 4 µs against 27 µs for an
    `eval run` journal line). The same value either way; only the spacing differs (no space
    after `,` and `:`), which no reader sees. A text the scan flags, or one pydantic-core
    cannot write, takes `json_line`'s road."""
    return masked_model_line(model, default)[1]


def masked_model_line(model: M, default: Any = None) -> tuple[M, str]:
    """`model_line`, and the model masked: the same object when nothing was masked, else a
    copy validated from the masked dump."""
    matcher = current()
    text = _model_json(model, default)
    if text is not None and matcher.json_text_clean(text):
        return model, text
    data = model.model_dump(mode="json")
    masked, line = matcher.json_line(data, default)
    return (model if masked is data else type(model).model_validate(masked)), line


def redact_model(model: M, extra_secrets: list[str] | None = None) -> M:
    """`model` with secrets masked: the same object when its JSON holds nothing to mask, found
    by one scan of pydantic-core's serialisation (22-24 µs for an agent's turn in a bench run)
    instead of a `model_dump` and a walk of every string (51-54 µs); else a copy validated
    from the masked dump, as before."""
    matcher = current(extra_secrets)
    text = _model_json(model)
    if text is not None and matcher.json_text_clean(text):
        return model
    data = model.model_dump()
    masked = matcher.data(data)
    return model if masked is data else type(model).model_validate(masked)

"""What a registered version's sha256 covers, so that only a change of content is a change.

- evaluators: the evaluator's semantic content (type, definition, threshold) — not its name,
  version, time or description, and not how the YAML is laid out;
- JSON datasets (`.json`, an M365 eval document): the parsed document in canonical form
  (sorted keys, no insignificant white space), so re-indenting it is not a new version;
- JSONL datasets: each non-blank line parsed and re-serialized canonically, one per line, so
  blank lines and spacing inside a line do not count but order and every value do;
- anything else (CSV): the bytes.

Versions registered before this scheme recorded a hash of the bytes; their index entries
have no `hashing` field and are still verified that way (`BYTES`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentopt.core.files import bounded
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, parse_evaluator_yaml

CANONICAL = "canonical-1"
"""The scheme above; recorded in registry.json as `hashing`."""
BYTES = "bytes"


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def evaluator_sha256(spec: EvaluatorSpec) -> str:
    """Hash of what an evaluator *does* (type, definition, threshold)."""
    body = spec.model_dump(mode="json", include={"type", "definition", "threshold"})
    return content_sha256(_canonical(body).encode("utf-8"))


def dataset_sha256(data: bytes, ext: str, scheme: str = CANONICAL) -> str:
    """The hash of dataset bytes under `scheme`; bytes that do not parse hash as bytes, so a
    broken file can never match a registered parsed one."""
    if scheme == BYTES:
        return content_sha256(data)
    try:
        text = data.decode("utf-8-sig")
        if ext == "json":
            return content_sha256(_canonical(bounded.loads(text)).encode("utf-8"))
        if ext in ("jsonl", "ndjson"):
            rows = [_canonical(bounded.loads(line)) for line in text.splitlines() if line.strip()]
            return content_sha256("\n".join(rows).encode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return content_sha256(data)
    return content_sha256(data)


def file_sha256(kind: str, data: bytes, ext: str, scheme: str = CANONICAL) -> str:
    """The hash of a version file's bytes, as its index entry records it."""
    if kind == "evaluators":
        return evaluator_sha256(parse_evaluator_yaml(data.decode("utf-8"), "(registered)"))
    return dataset_sha256(data, ext, scheme)

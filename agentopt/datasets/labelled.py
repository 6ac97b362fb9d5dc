"""Labelled criterion/answer pairs: what a person decided, to measure a judge against.

One JSON object per line:

    {"criterion": "The answer says returns are accepted within 45 days.",
     "response": "You can return it within 30 days.", "label": "fail",
     "query": "How long do I have?", "kind": "contradiction", "agent": "support"}

`label` is pass | fail (true / false and yes / no are read too; `passed: true|false` is the
same). `query`, `kind` (how the pair was built: paraphrase, contradiction, negation, partial,
…) and `agent` are optional and only group the report. `agentopt eval calibrate` reads this.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ConfigDict, Field

from agentopt.core.errors import ConfigError
from agentopt.core.lazy_model import LazyModel

_LABELS = {"pass": "pass", "passed": "pass", "true": "pass", "yes": "pass",
           "fail": "fail", "failed": "fail", "false": "fail", "no": "fail"}  # fmt: skip


class LabelledPair(LazyModel):
    """One labelled pair."""

    model_config = ConfigDict(extra="forbid")

    criterion: str = Field(min_length=1)
    response: str
    label: str
    """pass | fail"""
    query: str = ""
    kind: str = ""
    agent: str = ""
    line: int = 0
    """Line number in the file (for messages)."""


def load_labelled(path: Path) -> list[LabelledPair]:
    """The pairs of a labelled JSONL file.

    Raises:
        ConfigError: the file is missing or a line is not a pair, naming the line, the key,
            what was expected and what was found.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file", hint="pass a labelled JSONL file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    pairs: list[LabelledPair] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        pairs.append(_pair(path, number, raw))
    if not pairs:
        raise ConfigError(
            f"{path}: no labelled pairs",
            hint='one JSON object per line: {"criterion": ..., "response": ..., "label": "pass"}',
        )
    return pairs


def _pair(path: Path, number: int, raw: str) -> LabelledPair:
    where = f"{path}:{number}"
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{where}: expected a JSON object, found invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object, found {type(data).__name__}")
    label = data.pop("label", data.pop("passed", None))
    key = str(label).strip().lower() if label is not None else ""
    if key not in _LABELS:
        raise ConfigError(
            f"{where}: key 'label': expected pass or fail (or passed: true|false), found {label!r}"
        )
    for name in ("criterion", "response"):
        if not isinstance(data.get(name), str):
            found = "nothing" if name not in data else type(data[name]).__name__
            raise ConfigError(f"{where}: key '{name}': expected a string, found {found}")
    known = {"criterion", "response", "query", "kind", "agent"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key '{unknown[0]}' (known: label, {', '.join(sorted(known))})"
        )
    values = {k: str(v) for k, v in data.items() if v is not None}
    if not values["criterion"].strip():
        raise ConfigError(f"{where}: key 'criterion': expected a sentence, found an empty string")
    return LabelledPair(**values, label=_LABELS[key], line=number)

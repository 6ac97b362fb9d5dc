"""Which upstream schema serves which `schemaVersion` (data/m365/versions.json).

Semver, as upstream declares it: the same major is compatible. A document's version picks the
newest shipped schema whose first served version is not newer than the document's; a minor
newer than any we ship is read in compat mode against the newest schema, with one warning,
never refused. Input documents are always checked against the newest schema (upstream's
runevals validates every document against its one current schema); the matching schema is for
the outputs we write, which keep the input's `schemaVersion`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

_VERSION = re.compile(r"^(\d{1,9})\.(\d{1,9})\.(\d{1,9})$")
"""A `schemaVersion` agentopt reads as numbers. A part of more than nine digits is not read
(`int()` refuses 5,000; the loader fuzz found one): the document is read as if it had none."""
Version = tuple[int, int, int]


def _data_file(name: str) -> Any:
    ref = resources.files("agentopt").joinpath("data", "m365", name)
    return json.loads(ref.read_text(encoding="utf-8"))


def parse_version(text: str) -> Version | None:
    match = _VERSION.match(text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@dataclass(frozen=True)
class ShippedSchema:
    version: str
    """The upstream version the file was published as."""
    serves_from: Version
    """The oldest schemaVersion this file is the matching schema for."""
    file: str


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = _data_file("versions.json")
    return table


@cache
def shipped_schemas() -> tuple[ShippedSchema, ...]:
    """Oldest first."""
    out = []
    for version, body in _table()["schemas"].items():
        served = parse_version(body["serves"])
        assert served is not None, body
        out.append(ShippedSchema(version, served, body["file"]))
    return tuple(sorted(out, key=lambda s: s.serves_from))


def newest_known_version() -> str:
    """The newest schemaVersion this agentopt ships a schema for."""
    return str(_table()["newest"])


def schema_id() -> str:
    return str(_table()["schemaId"])


@cache
def _load(file: str) -> dict[str, Any]:
    schema: dict[str, Any] = _data_file(file)
    return schema


def official_schema() -> dict[str, Any]:
    """The newest shipped schema: what every input document is validated against."""
    return _load(shipped_schemas()[-1].file)


def schema_for(version: str | None) -> dict[str, Any]:
    """The upstream schema matching `version` (the newest one for unknown or newer versions)."""
    parsed = parse_version(version) if isinstance(version, str) else None
    chosen = shipped_schemas()[-1]
    if parsed is not None and parsed[0] == 1:
        fitting = [s for s in shipped_schemas() if s.serves_from <= parsed]
        chosen = fitting[-1] if fitting else shipped_schemas()[0]
    return _load(chosen.file)


def at_least(version: Any, wanted: str) -> bool:
    """Whether a document's `schemaVersion` is `wanted` or newer (False when unparseable)."""
    parsed = parse_version(version) if isinstance(version, str) else None
    target = parse_version(wanted)
    return parsed is not None and target is not None and parsed >= target


def version_problem(value: Any) -> str | None:
    """Why a `schemaVersion` cannot be read, or None when it can (or the schema will say)."""
    parsed = parse_version(value) if isinstance(value, str) else None
    if parsed is None or parsed[0] == 1:
        return None
    return (
        f'expected schema major version 1 (like "{newest_known_version()}"), found "{value}": '
        "this version of agentopt cannot read that document format"
    )


def newer_minor_warning(value: Any) -> str | None:
    """The one warning for a document newer than the newest shipped minor (read in compat)."""
    parsed = parse_version(value) if isinstance(value, str) else None
    newest = parse_version(newest_known_version())
    if parsed is None or newest is None or parsed[0] != 1 or parsed[:2] <= newest[:2]:
        return None
    return (
        f'schemaVersion "{value}" is newer than the newest this agentopt knows '
        f'("{newest_known_version()}"): read in compat mode against the {newest_known_version()} '
        "schema (same major version, so compatible); keys it does not know are kept, not used"
    )


# The documented item codes of schemas that list them in prose only (1.4–1.8).
_ITEM_CODES_BEFORE_ENUM = ("agentRequestFailed", "turnSkipped", "evaluatorsFailed")


@dataclass(frozen=True)
class ErrorCodes:
    """Which error codes an output document of one schemaVersion may carry."""

    item: frozenset[str]
    """`ErrorObject.code` values (item, turn)."""
    evaluator: frozenset[str]
    """`ErroredScore.code` values; empty when that schema has no `code` on errored scores."""


def error_codes(version: Any) -> ErrorCodes:
    """Read from the matching schema itself, so a new upstream file needs no code change."""
    defs = schema_for(version if isinstance(version, str) else None)["$defs"]
    item = defs["ErrorObject"]["properties"]["code"].get("enum", _ITEM_CODES_BEFORE_ENUM)
    scored = defs["ErroredScore"]["properties"].get("code", {}).get("enum", ())
    return ErrorCodes(frozenset(item), frozenset(scored))


RETIRED_EVALUATORS = {
    "taskcompletionevaluator": (
        "TaskCompletionEvaluator is not a runevals evaluator: the schema refused it up to 1.5.0 "
        "(upstream's example schema/v1/examples/invalid/multi-turn-unknown-evaluator.json) and "
        "1.6.0 dropped that example, when any other name became a custom evaluator (a folder "
        "custom-evaluators/TaskCompletionEvaluator/ would define one)"
    ),
}
"""Names older runevals documents carry that no runevals version runs (lower-cased)."""
RETIRED_HINT = (
    "remove it, or use agentopt's builtin.task_adherence (per-task criteria) or "
    "builtin.intent_resolution"
)


def retired_evaluator(name: str) -> str | None:
    """Why `name` names no evaluator, when it is one of `RETIRED_EVALUATORS`."""
    return RETIRED_EVALUATORS.get(name.strip().lower())

"""M365 eval documents (`runevals` shape, files.md §4.2) → tasks.

Mapping, so outputs can be written back into the same document:
- a single-turn item becomes a one-turn Task; its `evaluators`/`evaluators_mode` are on the
  Task (item level);
- a thread becomes a multi-turn Task; each turn's `evaluators`/`evaluators_mode` are on its
  Turn, and the thread's `name`/`description` on the Task;
- `Task.index` is the item's index in `items`; every source key not mapped to a field
  (`response`, `scores`, `testId`, `notes`, ...) is kept verbatim in `extra`.

Compat mode (the default) also accepts `testId`, `category`, `notes`, `name` on single-turn
items and a root `description`, because the Learn docs show them although the schema rejects
them: exactly those keys are set aside before validating, so everything else the official
schema rejects is still reported. `strict=True` validates the document as it is.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.task import EvaluatorRef, Task, Turn
from agentopt.core.errors import Problem
from agentopt.core.files.m365_schemas import (
    RETIRED_HINT,
    newer_minor_warning,
    official_schema,
    retired_evaluator,
    version_problem,
)
from agentopt.datasets.m365_schema import schema_problems
from agentopt.datasets.problems import ProblemLog, describe, did_you_mean, join_path

TOLERATED_ITEM_KEYS = ("testId", "category", "notes", "name")
TOLERATED_ROOT_KEYS = ("description",)
_TOLERATED_AT = re.compile(r"^items\[\d+\]\.(" + "|".join(TOLERATED_ITEM_KEYS) + r")$")
_MAPPED_ITEM_KEYS = (
    "prompt",
    "expected_response",
    "context",
    "evaluators",
    "evaluators_mode",
    "allowed_tools",
    "allowed_tools_mode",
)
_MAPPED_THREAD_KEYS = ("name", "description", "turns")


@dataclass
class M365Content:
    """What one eval document holds, once validated."""

    tasks: list[Task]
    default_evaluators: list[EvaluatorRef] | None
    """None when the document has no `default_evaluators`."""
    name: str | None
    """`metadata.name`, when given."""


def is_versioned_document(data: Any) -> bool:
    """An object that looks like an eval document (as opposed to a task or a legacy shape)."""
    return isinstance(data, dict) and ("items" in data or "schemaVersion" in data)


def check_document(document: Any, file: str, *, strict: bool = False) -> ProblemLog:
    """Every problem of an eval document: version, official schema, unknown root keys."""
    log = ProblemLog(file)
    if not isinstance(document, dict):
        log.error(
            "",
            'expected an eval document object like {"schemaVersion": "1.7.0", "items": [...]}, '
            f"found {describe(document)}",
        )
        return log
    why = version_problem(document.get("schemaVersion"))
    if why:
        log.error("schemaVersion", why)
        return log
    newer = newer_minor_warning(document.get("schemaVersion"))
    if newer:
        log.warn("schemaVersion", newer)
    validated = document if strict else _set_aside_tolerated(document, log)
    problems = schema_problems(validated, file)
    if strict:
        problems = [_mention_compat(p) for p in problems]
    elif newer:  # keys a newer minor added are kept, not refused (semver: same major)
        problems = [_as_warning(p) if _is_unknown_key(p) else p for p in problems]
    log.extend(problems)
    for where, name in _evaluator_names(document):
        why = retired_evaluator(name)
        if why:
            log.warn(join_path(where, name), f"{why}; {RETIRED_HINT}")
    known = [*official_schema()["properties"], *([] if strict else TOLERATED_ROOT_KEYS)]
    for key in document:
        if key not in known:
            log.warn(
                key,
                f'unknown top-level key "{key}"{did_you_mean(key, known)}; kept, but agentopt '
                "does not use it",
            )
    return log


def read_document(
    document: Any, file: str, *, strict: bool = False
) -> tuple[M365Content, ProblemLog]:
    """Validate and convert; the content is empty when the log has errors."""
    log = check_document(document, file, strict=strict)
    if log.errors:
        return M365Content([], None, None), log
    defaults = document.get("default_evaluators")
    metadata = document.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else None
    allowed = _allowed_list(document.get("default_allowed_tools"))
    tasks = [_task(item, index, allowed) for index, item in enumerate(document["items"])]
    _unique_names(tasks)
    return M365Content(tasks, _refs(defaults), name), log


def _evaluator_names(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(path of the map, name) of every evaluator the document names."""
    maps: list[tuple[str, Any]] = [("default_evaluators", document.get("default_evaluators"))]
    items = document.get("items")
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        maps.append((f"items[{i}].evaluators", item.get("evaluators")))
        turns = item.get("turns")
        for j, turn in enumerate(turns if isinstance(turns, list) else []):
            if isinstance(turn, dict):
                maps.append((f"items[{i}].turns[{j}].evaluators", turn.get("evaluators")))
    return [(where, n) for where, m in maps if isinstance(m, dict) for n in m if isinstance(n, str)]


def _is_unknown_key(problem: Problem) -> bool:
    return problem.message.startswith("unknown key")


def _as_warning(problem: Problem) -> Problem:
    return Problem(problem.file, problem.location, problem.message, "warning")


def _mention_compat(problem: Problem) -> Problem:
    """In strict mode, say which rejected keys the default (compat) mode accepts."""
    match = _TOLERATED_AT.match(problem.location)
    if not match or not problem.message.startswith("unknown key"):
        return problem
    note = " (accepted without --strict: the Learn docs show it)"
    return Problem(problem.file, problem.location, problem.message + note, problem.severity)


def _set_aside_tolerated(document: dict[str, Any], log: ProblemLog) -> dict[str, Any]:
    """A copy without exactly the keys compat mode tolerates, after checking their types."""
    copied = copy.deepcopy(document)
    for key in TOLERATED_ROOT_KEYS:
        value = copied.pop(key, None)
        if value is not None and not isinstance(value, str):
            log.error(key, f"expected text, found {describe(value)}")
    items = copied.get("items")
    if not isinstance(items, list):
        return copied
    for index, item in enumerate(items):
        if not isinstance(item, dict) or "turns" in item:
            continue
        for key in TOLERATED_ITEM_KEYS:
            if key not in item:
                continue
            value = item.pop(key)
            allowed = (str, int) if key == "testId" else (str,)
            if isinstance(value, bool) or not isinstance(value, allowed):
                wanted = "text or a number" if key == "testId" else "text"
                where = join_path(join_path("items", index), key)
                log.error(where, f"expected {wanted}, found {describe(value)}")
    return copied


def _task(item: dict[str, Any], index: int, default_allowed: list[str] | None) -> Task:
    tags = [t for t in item.get("tags") or [] if isinstance(t, str)]
    if "turns" in item:
        turns = [_turn(raw, default_allowed) for raw in item["turns"]]
        return Task(
            name=item.get("name") or f"task_{index + 1}",
            turns=turns,
            description=item.get("description"),
            tags=tags,
            index=index,
            extra={k: v for k, v in item.items() if k not in _MAPPED_THREAD_KEYS},
        )
    turn = Turn(
        query=item["prompt"],
        ground_truth=item.get("expected_response"),
        context=item.get("context"),
        response=_text(item.get("response")),
        allowed_tools=_allowed_tools(item, default_allowed),
    )
    name = item.get("name") or item.get("testId")
    category = item.get("category")
    return Task(
        name=str(name) if name not in (None, "") else f"task_{index + 1}",
        turns=[turn],
        category=category if isinstance(category, str) else None,
        tags=tags,
        index=index,
        evaluators=_refs(item.get("evaluators")),
        evaluators_mode=item.get("evaluators_mode", "extend"),
        extra={k: v for k, v in item.items() if k not in _MAPPED_ITEM_KEYS},
    )


def _turn(raw: dict[str, Any], default_allowed: list[str] | None) -> Turn:
    return Turn(
        query=raw["prompt"],
        ground_truth=raw.get("expected_response"),
        context=raw.get("context"),
        evaluators=_refs(raw.get("evaluators")),
        evaluators_mode=raw.get("evaluators_mode", "extend"),
        response=_text(raw.get("response")),
        allowed_tools=_allowed_tools(raw, default_allowed),
        extra={k: v for k, v in raw.items() if k not in _MAPPED_ITEM_KEYS},
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _allowed_list(value: Any) -> list[str] | None:
    """Entries are trimmed before matching (schema 1.11 `AllowedToolList`)."""
    if not isinstance(value, list):
        return None
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _allowed_tools(raw: dict[str, Any], default_allowed: list[str] | None) -> list[str] | None:
    """The effective allowlist of an item or turn: `extend` (default) is the union with
    `default_allowed_tools`, `replace` the own list only. None when the document declares no
    list for it at all: agentopt then restricts nothing (docs/file-formats.md §4.3 says why)."""
    own = _allowed_list(raw.get("allowed_tools"))
    if own is None:
        return default_allowed
    if raw.get("allowed_tools_mode") == "replace" or default_allowed is None:
        return own
    return [*default_allowed, *(t for t in own if t not in default_allowed)]


def _refs(evaluators: dict[str, Any] | None) -> list[EvaluatorRef] | None:
    """`{"Relevance": {"threshold": 4}}` → [EvaluatorRef("Relevance", {"threshold": 4})]."""
    if evaluators is None:
        return None
    return [EvaluatorRef(name=name, options=dict(opts or {})) for name, opts in evaluators.items()]


def _unique_names(tasks: list[Task]) -> None:
    """M365 allows repeated thread names; results are keyed by name, so repeats get " (2)"."""
    seen: set[str] = set()
    for task in tasks:
        base, k = task.name, 2
        while task.name in seen:
            task.name, k = f"{base} ({k})", k + 1
        seen.add(task.name)

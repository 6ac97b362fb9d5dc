"""Turning one generated task (a JSON object from the generator) into a checked `Task`.

The record is built in the Foundry JSONL shape and loaded with the dataset loader itself
(`agentopt.datasets.jsonl.load_jsonl`), so a generated task is valid exactly when the same
line in a user's file would be. On top of the loader's rules, generation asks for more: 2–4
criteria per task, each a real sentence, and 2+ turns for a thread. Small slips are repaired
(names to snake_case, the category the batch asked for); anything else rejects the task with a
reason that ends up in the shortfall message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentopt.contracts.task import Task
from agentopt.datasets.jsonl import load_jsonl

MIN_CRITERIA = 2
MAX_CRITERIA = 4
MIN_CRITERION_WORDS = 3
MIN_THREAD_TURNS = 2
MAX_THREAD_TURNS = 6
_SNAKE = re.compile(r"[^a-z0-9]+")


class Rejected(ValueError):
    """A generated task that cannot be used; the message says why."""


def snake_case(text: str, *, fallback: str = "item") -> str:
    """`"Refund After-Deadline!"` → `refund_after_deadline`; always `^[a-z][a-z0-9_]*$`."""
    slug = _SNAKE.sub("_", text.strip().lower()).strip("_")
    if not slug:
        return fallback
    if not slug[0].isalpha():
        slug = f"{fallback}_{slug}"
    return slug[:60].rstrip("_")


def task_record(
    raw: Any, category: str, *, thread: bool, simulated: bool = False
) -> dict[str, Any]:
    """The JSONL record of one generated task, thread or simulated-user task (repairs
    applied), or Rejected."""
    if not isinstance(raw, dict):
        raise Rejected(f"expected a task object, found {type(raw).__name__}")
    record: dict[str, Any] = {}
    name = raw.get("name")
    if isinstance(name, str) and name.strip():
        record["name"] = snake_case(name, fallback="task")
    if thread:
        turns = raw.get("turns")
        if not isinstance(turns, list):
            raise Rejected("expected a list of turns")
        if not MIN_THREAD_TURNS <= len(turns) <= MAX_THREAD_TURNS:
            raise Rejected(
                f"expected {MIN_THREAD_TURNS}–{MAX_THREAD_TURNS} turns, found {len(turns)}"
            )
        used: set[str] = set()  # criterion names are unique over the whole thread
        record["turns"] = [_turn_record(t, used) for t in turns]
        if raw.get("criteria"):
            record["criteria"] = _criteria(raw["criteria"], used)
    else:
        record["query"] = raw.get("query")
        _put_truth(record, "ground_truth", raw.get("ground_truth"))
        record["criteria"] = _criteria(raw.get("criteria"))
    if simulated:
        for key in ("persona", "goal", "stop_when"):
            value = raw.get(key)
            if not isinstance(value, str) or len(value.split()) < 3:
                raise Rejected(f'expected a "{key}" of a few words, found {value!r}')
            record[key] = " ".join(value.split())
    record["category"] = category
    return record


def check_task(record: dict[str, Any], index: int) -> Task:
    """Load the record with the dataset loader and apply the generation rules, or Rejected."""
    tasks, log = load_jsonl(json.dumps(record, ensure_ascii=False), "generated task")
    if log.errors or len(tasks) != 1:
        first = log.errors[0] if log.errors else None
        raise Rejected(first.message if first else "the loader found no task")
    task = tasks[0]
    criteria = task.criteria
    if not MIN_CRITERIA <= len(criteria) <= MAX_CRITERIA:
        raise Rejected(f"expected {MIN_CRITERIA}–{MAX_CRITERIA} criteria, found {len(criteria)}")
    names = [c.name for c in criteria]
    if len(set(names)) != len(names):
        raise Rejected("expected distinct criterion names")
    for c in criteria:
        if len(c.instruction.split()) < MIN_CRITERION_WORDS:
            raise Rejected(f'criterion "{c.name}" is not a checkable sentence: {c.instruction!r}')
    if any(len(t.query.split()) < 2 and len(t.query) < 8 for t in task.turns):
        raise Rejected("a query is too short to be a realistic user message")
    return task.model_copy(update={"index": index, "line": None})


def _turn_record(raw: Any, used: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise Rejected(f"expected a turn object, found {type(raw).__name__}")
    turn: dict[str, Any] = {"prompt": raw.get("query", raw.get("prompt"))}
    _put_truth(turn, "expected_response", raw.get("ground_truth"))
    criteria = raw.get("criteria")
    if criteria:
        turn["criteria"] = _criteria(criteria, used)
    return turn


def _put_truth(record: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and value.strip():
        record[key] = value.strip()


def _criteria(raw: Any, used: set[str] | None = None) -> Any:
    """Criterion names to snake_case, unique among `used` (the names already given in this
    task; updated); anything malformed is left for the loader."""
    if not isinstance(raw, list):
        return raw
    out: list[Any] = []
    used = set() if used is None else used
    for k, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            out.append(item)
            continue
        item = dict(item)
        name = item.get("name")
        base = snake_case(name, fallback="check") if isinstance(name, str) else f"check_{k}"
        unique, n = base, 2
        while unique in used:
            unique, n = f"{base}_{n}", n + 1
        used.add(unique)
        item["name"] = unique
        if isinstance(item.get("instruction"), str):
            item["instruction"] = " ".join(item["instruction"].split())
        out.append({"name": item["name"], "instruction": item.get("instruction")})
    return out

"""Canonical Foundry task JSONL, written by `eval generate` and the registry.

Canonical means the same tasks always give the same bytes (stable key order, no defaults
written), so a registry content hash changes only when the tasks do; loading the output gives
back equal tasks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentopt.contracts.task import EvaluatorRef, Task, Turn


def dump_tasks_jsonl(tasks: Iterable[Task]) -> str:
    """One task per line, UTF-8 text kept readable, ending with a newline."""
    lines = [json.dumps(task_to_record(t), ensure_ascii=False) for t in tasks]
    return "".join(line + "\n" for line in lines)


def task_to_record(task: Task) -> dict[str, Any]:
    """The JSONL record of one task; single-turn tasks use `query`/`ground_truth`."""
    record: dict[str, Any] = {"name": task.name}
    if _fits_single_turn(task):
        turn = task.turns[0]
        if turn.query or not task.goal:  # no query: the simulated user writes the opening
            record["query"] = turn.query
        _put(record, "ground_truth", turn.ground_truth)
        _put(record, "context", turn.context)
        _put(record, "criteria", [c.model_dump() for c in turn.criteria])
    else:
        record["turns"] = [_turn_record(t) for t in task.turns]
    if task.evaluators is not None:
        record["evaluators"] = _evaluator_map(task.evaluators)
    if task.evaluators_mode != "extend":
        record["evaluators_mode"] = task.evaluators_mode
    _put(record, "desired_num_turns", task.desired_num_turns)
    _put(record, "persona", task.persona)
    _put(record, "goal", task.goal)
    _put(record, "stop_when", task.stop_when)
    _put(record, "category", task.category)
    _put(record, "tags", task.tags)
    _put(record, "metadata", task.metadata)
    if task.tool_mocks is not None:
        record["tool_mocks"] = task.tool_mocks
    _put(record, "description", task.description)
    for key, value in task.extra.items():
        record.setdefault(key, value)
    return record


def _fits_single_turn(task: Task) -> bool:
    if len(task.turns) != 1:
        return False
    turn = task.turns[0]
    return turn.evaluators is None and turn.evaluators_mode == "extend" and not turn.extra


def _turn_record(turn: Turn) -> dict[str, Any]:
    record: dict[str, Any] = {"prompt": turn.query}
    _put(record, "expected_response", turn.ground_truth)
    _put(record, "context", turn.context)
    _put(record, "criteria", [c.model_dump() for c in turn.criteria])
    if turn.evaluators is not None:
        record["evaluators"] = _evaluator_map(turn.evaluators)
    if turn.evaluators_mode != "extend":
        record["evaluators_mode"] = turn.evaluators_mode
    for key, value in turn.extra.items():
        record.setdefault(key, value)
    return record


def _evaluator_map(refs: list[EvaluatorRef]) -> dict[str, Any]:
    return {ref.name: ref.options for ref in refs}


def _put(record: dict[str, Any], key: str, value: Any) -> None:
    if value is None or value == [] or value == {}:
        return
    record[key] = value

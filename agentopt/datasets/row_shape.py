"""Rows of an azure.eval.yaml eval → the tasks `eval run` and `optimize` already play.

The extension binds an evaluator's inputs to dataset columns (`data_mapping:
{ground_truth: "{{item.expected}}"}`), grades rows that already hold their responses when the
eval has no `target:`, and caps the rows at `max_samples`. agentopt loads the dataset as any
task JSONL (unknown columns are kept in `Task.extra`), then applies exactly that here, once.
"""

from __future__ import annotations

from typing import Any

from agentopt.contracts.task import Dataset, Task
from agentopt.core.errors import InputError, Problem
from agentopt.core.files.azure_eval import RowShape

RESPONSE_COLUMN = "response"


def shape_rows(dataset: Dataset, shape: RowShape | None) -> Dataset:
    """The dataset with mapped columns, captured responses and the row cap applied.

    Raises:
        InputError: a mapped column or a captured response is missing, naming each line.
    """
    if shape is None:
        return dataset
    tasks = list(dataset.tasks)
    if shape.cap:
        tasks = tasks[: shape.cap]
    columns = dict(shape.columns)
    if shape.captured:
        columns.setdefault("response", RESPONSE_COLUMN)
    if not columns:
        return dataset if len(tasks) == len(dataset.tasks) else _with(dataset, tasks)
    problems: list[Problem] = []
    shaped = [_shape(task, columns, dataset.source, problems) for task in tasks]
    if problems:
        raise InputError(
            problems=problems,
            hint=f"eval {shape.eval_name}: its data_mapping (or, with no target:, the rows' "
            "responses) names columns every row must have",
        )
    used = tuple(f'unknown key "{c}"' for c in columns.values())
    warnings = [w for w in dataset.warnings if not w.message.startswith(used)]
    return _with(dataset, shaped, warnings)


def _with(dataset: Dataset, tasks: list[Task], warnings: list[Problem] | None = None) -> Dataset:
    update: dict[str, Any] = {"tasks": tasks}
    if warnings is not None:
        update["warnings"] = warnings  # a column the eval reads is not an unknown key
    return dataset.model_copy(update=update)


def _shape(task: Task, columns: dict[str, str], source: str, problems: list[Problem]) -> Task:
    if task.is_multi_turn:
        return task  # conversations keep their turns; a mapping binds single-row inputs
    turn = task.turns[0]
    updates: dict[str, Any] = {}
    for field, column in columns.items():
        value = _column(task, column)
        if value is None:
            where = f"line {task.line}" if task.line else f"task {task.name}"
            problems.append(
                Problem(source, where, f'expected a "{column}" column (for {field}), found none')
            )
            continue
        updates[field] = value
    if not updates:
        return task
    return task.model_copy(update={"turns": [turn.model_copy(update=updates)]})


def _column(task: Task, column: str) -> str | None:
    turn = task.turns[0]
    known = {"query": turn.query, "ground_truth": turn.ground_truth, "context": turn.context}
    value = task.extra.get(column, known.get(column))
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)

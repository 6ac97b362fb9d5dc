"""A grid of tasks × columns, shared by a matrix run's report (one column per variant) and the
view's Compare page (one column per run): one row per task, in the first column's task order
and then the tasks only later columns have, one cell per column.

Both grids show a task's outcome the same way (its status, its repeat-averaged score, the
answer and the error), so the rows, the cell and the reading of a task are written once here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Self, TypeVar

from pydantic import ConfigDict, Field

from agentopt.contracts.task_record import TaskOutcome
from agentopt.core.lazy_model import LazyModel

__all__ = ["TaskCell", "TaskRow", "task_rows", "task_score"]


def task_score(task: TaskOutcome) -> float | None:
    """The task's score as a grid shows it: the mean over repeats, else the one score."""
    return task.mean if task.mean is not None else task.score


class TaskCell(LazyModel):
    """One task under one column."""

    model_config = ConfigDict(extra="forbid")

    status: str | None = None
    """None: the column has no result for the task (not in that run, or its run stopped
    first)."""
    score: float | None = None
    response: str = ""
    error: str | None = None

    @classmethod
    def of(cls, task: TaskOutcome, *, answer_limit: int | None = None, **more: Any) -> Self:
        """The cell of a task the column has (`more`: a subclass's own fields)."""
        return cls(
            status=task.status,
            score=task_score(task),
            response=task.response[:answer_limit],
            error=f"{task.error.code}: {task.error.message}" if task.error else None,
            **more,
        )


C = TypeVar("C", bound=TaskCell)


class TaskRow(LazyModel, Generic[C]):
    """One task across the columns."""

    model_config = ConfigDict(extra="forbid")

    task: str
    category: str | None = None
    query: str = ""
    cells: list[C] = Field(default_factory=list)


R = TypeVar("R", bound=TaskRow[Any])


def task_rows(
    columns: Sequence[Mapping[str, TaskOutcome]],
    row: Callable[..., R],
    cells: Callable[[str], list[Any]],
) -> list[R]:
    """The grid's rows: `columns` maps each column's task names to its outcomes, `cells`
    gives the cells of one task name; a task's category and query are the first column's
    that has it."""
    names: dict[str, None] = {}
    for tasks in columns:
        for name in tasks:
            names.setdefault(name)
    rows = []
    for name in names:
        first = next(tasks[name] for tasks in columns if name in tasks)
        rows.append(row(task=name, category=first.category, query=first.query, cells=cells(name)))
    return rows

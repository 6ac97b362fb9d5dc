"""`--filter EXPR`: select tasks by name glob, `category:X` or `tag:Y`; a comma means "or".

Examples: `refund*`, `category:edge`, `tag:smoke,category:core`, `!category:adversarial`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from agentopt.contracts.packed_tasks import PackedTasks
from agentopt.contracts.task import Task
from agentopt.core.errors import ConfigError


def parse_filter(expr: str) -> list[tuple[bool, str, str]]:
    """Terms as (negated, field, pattern)."""
    terms: list[tuple[bool, str, str]] = []
    for raw in expr.split(","):
        term = raw.strip()
        if not term:
            continue
        negated = term.startswith("!")
        term = term[1:] if negated else term
        field, sep, pattern = term.partition(":")
        if not sep:
            field, pattern = "name", term
        field = field.strip().lower()
        if field not in {"name", "category", "tag"}:
            raise ConfigError(
                f"--filter: unknown field '{field}' in '{raw.strip()}'",
                hint="use a name glob, category:X or tag:Y (comma-separated)",
            )
        terms.append((negated, field, pattern.strip()))
    if not terms:
        raise ConfigError("--filter is empty", hint="e.g. --filter 'category:edge,refund*'")
    return terms


def _matches(task: Task, field: str, pattern: str) -> bool:
    if field == "name":
        return fnmatch.fnmatchcase(task.name, pattern)
    if field == "category":
        return fnmatch.fnmatchcase(task.category or "", pattern)
    return any(fnmatch.fnmatchcase(t, pattern) for t in task.tags)


def select_tasks(
    tasks: Sequence[Task], expr: str | None, limit: int | None = None
) -> Sequence[Task]:
    """Tasks matching any positive term and no negated term, then the first `limit` (packed
    tasks stay packed)."""
    chosen = tasks
    if expr:
        terms = parse_filter(expr)
        positive = [t for t in terms if not t[0]]
        negative = [t for t in terms if t[0]]
        kept = (
            task
            for task in tasks
            if (not positive or any(_matches(task, f, p) for _, f, p in positive))
            and not any(_matches(task, f, p) for _, f, p in negative)
        )
        chosen = PackedTasks(kept) if isinstance(tasks, PackedTasks) else list(kept)
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


def tasks_to_run(tasks: Sequence[Task], expr: str | None, limit: int | None) -> Sequence[Task]:
    """`select_tasks`, refusing an empty selection (a run of nothing is a usage error)."""
    chosen = select_tasks(tasks, expr, limit)
    if not chosen:
        raise ConfigError(
            "no task to run", hint="the dataset is empty or --filter/--limit selected nothing"
        )
    return chosen

"""Tasks typed on the command line: `eval run --prompts P1 P2 [--expected E1 E2]`."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from agentopt.contracts.task import Dataset, Task, Turn
from agentopt.core.errors import ConfigError, Problem
from agentopt.datasets.writer import dump_tasks_jsonl


def dataset_from_prompts(
    prompts: Sequence[str], expected: Sequence[str] | None = None, *, first: int = 1
) -> Dataset:
    """One single-turn task per prompt, paired by position with `expected` when given, named
    `task_<first>`, `task_<first+1>`… (`eval run --interactive` numbers its prompts on).

    The sha256 is over the canonical JSONL of the tasks, so two runs with the same prompts
    share a dataset identity in `run.json`.
    """
    problems: list[Problem] = []
    if not prompts:
        problems.append(Problem("", "--prompts", "expected at least one prompt, found none"))
    for n, prompt in enumerate(prompts, start=1):
        if not prompt.strip():
            problems.append(
                Problem("", "--prompts", f"prompt {n}: expected text, found an empty string")
            )
    if expected is not None and len(expected) != len(prompts):
        problems.append(
            Problem(
                "",
                "--expected",
                f"expected {len(prompts)} value{'s' if len(prompts) != 1 else ''} "
                f"(one per --prompts, paired by position), found {len(expected)}",
            )
        )
    if problems:
        raise ConfigError(problems=problems)
    tasks = [
        Task(
            name=f"task_{first + i}",
            turns=[Turn(query=prompt, ground_truth=expected[i] if expected else None)],
            index=i,
        )
        for i, prompt in enumerate(prompts)
    ]
    digest = hashlib.sha256(dump_tasks_jsonl(tasks).encode("utf-8")).hexdigest()
    return Dataset(tasks=tasks, source="", format="adhoc", sha256=digest)

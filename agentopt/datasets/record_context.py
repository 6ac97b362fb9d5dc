"""Where a dataset record came from, where its problems go, and what it is built into: the
task models, or plain namespaces when a file is only checked (`eval validate`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentopt.datasets.foundry import UnknownKeys
    from agentopt.datasets.problems import ProblemLog

Locate = Callable[[str], tuple[str, str]]
"""Maps a key path inside the record to (Problem.location, message prefix)."""

CHECK_ONLY: Any = SimpleNamespace(
    Criterion=SimpleNamespace,
    EvaluatorRef=SimpleNamespace,
    Turn=SimpleNamespace,
    Task=SimpleNamespace,
)
"""What a record that is only checked (`eval validate`) is built into: its fields as given,
no model. Every problem is found before a model is made (a model takes what the checks let
through); importing and building the task models was a third of the CPU of checking a
5-task file (issue 37)."""


def task_models() -> Any:
    """The task models (`agentopt.contracts.task`), imported when a loader first needs them."""
    from agentopt.contracts import task

    return task


@dataclass
class RecordContext:
    """Where one record came from, where its problems go, and what it is built into."""

    log: ProblemLog
    line: int
    locate: Locate
    unknown: UnknownKeys
    models: Any = None
    """`task_models()` (the default) or `CHECK_ONLY`."""

    def __post_init__(self) -> None:
        if self.models is None:
            self.models = task_models()

    def error(self, path: str, message: str) -> None:
        location, prefix = self.locate(path)
        self.log.error(location, prefix + message)

    def warn(self, path: str, message: str) -> None:
        location, prefix = self.locate(path)
        self.log.warn(location, prefix + message)


def line_locator(line: int) -> Locate:
    """JSONL: the location is the line; the key path goes in front of the message."""
    return lambda path: (f"line {line}", f"{path}: " if path else "")

"""The verdict of one (task, repeat) and of each of its turns: what the evaluators' results add
up to. The run journal stores a `TaskScore` per finished unit, the optimizer ranks candidates
on them, and the run summary is computed from them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.record import Record
from agentopt.contracts.transcript import TurnError

TaskStatus = Literal["pass", "fail", "partial", "error"]
PRECEDENCE: tuple[TaskStatus, ...] = ("error", "partial", "fail", "pass")


def worst(statuses: Iterable[TaskStatus]) -> TaskStatus:
    """The status that wins by precedence (error > partial > fail > pass); none → pass."""
    present = set(statuses)
    return next((s for s in PRECEDENCE if s in present), "pass")


class TurnScore(Record):
    """One turn's verdict."""

    index: int = 0
    """0-based turn number."""
    status: TaskStatus
    """error > partial > fail > pass."""
    score: float | None = None
    """Mean of the evaluators' normalized values (errors left out); None when none scored."""
    results: list[EvalResult] = Field(default_factory=list)
    """Every evaluator's result for this turn."""
    error: TurnError | None = None
    """The agent's error on this turn (agentRequestFailed, turnSkipped, ...)."""


class TaskScore(Record):
    """One task's verdict for one repeat (a thread's turns included)."""

    name: str
    """The task name."""
    repeat: int = 0
    """Which repeat (0-based)."""
    status: TaskStatus
    """Worst turn status by precedence."""
    score: float | None = None
    """Mean of the turn scores that have one."""
    turns: list[TurnScore] = Field(default_factory=list)
    """Per-turn verdicts (one for a single-turn task)."""
    error: TurnError | None = None
    """The first agent error, if the agent failed."""

    @property
    def results(self) -> list[EvalResult]:
        """Every evaluator result of every turn."""
        return [r for t in self.turns for r in t.results]

    @property
    def agent_failed(self) -> bool:
        """The agent failed on some turn (a turn skipped after it does not count again)."""
        return any(t.error is not None and t.error.code != "turnSkipped" for t in self.turns)

    def errors(self) -> list[tuple[str, str]]:
        """(code, message) of every agent error and every evaluator error: what --max-errors
        counts, and what --resume and optimize run again. Empty = a real verdict."""
        out = [
            (t.error.code, t.error.message)
            for t in self.turns
            if t.error is not None and t.error.code != "turnSkipped"
        ]
        out += [
            (r.error.code, r.error.message) if r.error else ("evaluatorError", "")
            for r in self.results
            if r.status == "error"
        ]
        return out

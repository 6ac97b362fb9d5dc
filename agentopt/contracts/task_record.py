"""The record of a task as a run saves it: one `RepeatOutcome` per (task, repeat) in the run's
journal (and the optimizer's), merged into one `TaskOutcome` per task in results.json.

`UnitResult` is what the run engine returns for one (task, repeat) (`workflows/run/records.py`
builds it from the transcript and the scores): a plain record, so a unit played in another
process comes back as JSON and parses into the same types.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.record import Record, SparseRecord, sparse
from agentopt.contracts.scores import TaskScore, TaskStatus
from agentopt.contracts.simulation import SimulationEnd
from agentopt.contracts.transcript import Citation, ToolCallRecord, Transcript, TurnError
from agentopt.contracts.usage import Usage


class TokenCount(Record):
    """Agent tokens of one turn, one repeat, or one task (all turns and repeats)."""

    input: int = 0
    output: int = 0

    @classmethod
    def of(cls, usage: Usage) -> TokenCount:
        return cls(input=usage.input_tokens, output=usage.output_tokens)


class TurnOutcome(SparseRecord):
    """One turn of a multi-turn task: the exchange and its verdicts."""

    query: str = ""
    response: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    status: TaskStatus = "pass"
    score: float | None = None
    evaluators: list[EvalResult] = Field(default_factory=list)
    error: TurnError | None = None
    latency_s: float = 0.0
    tokens: TokenCount = Field(default_factory=TokenCount)
    simulated: bool = sparse(False)
    """The user message was written by the simulated user."""
    diagnostics: dict[str, Any] | None = sparse()
    """The M365 `diagnostics` of this turn: reported by the agent's protocol or the captured
    document, or derived from its tool calls (evaluators/diagnostics_out.py)."""


class RepeatOutcome(SparseRecord):
    """One (task, repeat): the last turn's exchange, every turn of a thread, the verdicts."""

    repeat: int = 0
    status: TaskStatus = "pass"
    score: float | None = None
    response: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    """Every turn's tool calls, in order."""
    citations: list[Citation] = Field(default_factory=list)
    evaluators: list[EvalResult] = Field(default_factory=list)
    """A single-turn task's verdicts, or a conversation's when it was scored as a whole (a
    thread's per-turn verdicts are on its turns)."""
    error: TurnError | None = None
    turns: list[TurnOutcome] | None = None
    """Multi-turn tasks (and simulated conversations) only."""
    latency_s: float = 0.0
    tokens: TokenCount = Field(default_factory=TokenCount)
    simulation: SimulationEnd | None = sparse()
    """How a simulated conversation ended."""
    evaluation_level: Literal["conversation"] | None = sparse()
    """"conversation" when `evaluators` judged the whole conversation (eval.yaml
    `options.evaluation_level`); absent when each turn was scored."""
    diagnostics: dict[str, Any] | None = sparse()
    """A single-turn task's diagnostics (a thread's are on its turns)."""


class UnitResult(Record):
    """What the run engine returns for one (task, repeat): the verdict and the record."""

    score: TaskScore
    record: RepeatOutcome
    transcript: Transcript | None = Field(default=None, exclude=True)
    """The agent's answers as played (journaled by eval run, so --resume can re-score them)."""

    @property
    def tokens(self) -> int:
        """Agent tokens (input + output) of the unit."""
        return self.record.tokens.input + self.record.tokens.output


class TaskOutcome(SparseRecord):
    """One task's result. For a multi-turn task `turns` holds each turn's verdicts, the
    task-level `evaluators` is empty, and `score`/`status` are the thread's; a conversation
    scored as a whole (`evaluation_level: conversation`) has its verdicts in `evaluators` and
    only the exchanges in `turns`."""

    name: str
    index: int = 0
    """Position in the source dataset (0-based): M365 outputs are written back by index."""
    query: str = ""
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    ground_truth: str | None = None
    response: str = ""
    """The final response text."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    status: TaskStatus = "pass"
    score: float | None = None
    evaluators: list[EvalResult] = Field(default_factory=list)
    error: TurnError | None = None
    turns: list[TurnOutcome] | None = None
    repeats: list[RepeatOutcome] | None = None
    mean: float | None = None
    """Mean score over repeats."""
    std: float | None = None
    pass_fraction: float | None = None
    flaky: bool = False
    """Verdicts differed across repeats."""
    latency_s: float = 0.0
    tokens: TokenCount = Field(default_factory=TokenCount)
    simulation: SimulationEnd | None = sparse()
    """How the (first repeat's) simulated conversation ended."""
    evaluation_level: Literal["conversation"] | None = sparse()
    """"conversation" when `evaluators` judged the whole conversation."""
    description: str | None = sparse()
    """The task's `description`, kept for reports."""
    metadata: dict[str, Any] | None = sparse()
    """The task's free `metadata` labels, kept for reports (absent when it has none)."""
    diagnostics: dict[str, Any] | None = sparse()
    """A single-turn task's diagnostics, from its first repeat (a thread's are on its turns)."""

    def as_turn(self) -> TurnOutcome:
        """The task's own exchange, verdicts, error and diagnostics as one turn (what a
        single-turn task is)."""
        return TurnOutcome(
            query=self.query,
            response=self.response,
            tool_calls=self.tool_calls,
            citations=self.citations,
            status=self.status,
            score=self.score,
            evaluators=self.evaluators,
            error=self.error,
            diagnostics=self.diagnostics,
        )

    def transcript_turns(self) -> list[TurnOutcome]:
        """The turns to show: a thread's own, or the task as one turn (its error left to the
        task, which the reports show once, above the turns)."""
        if self.turns:
            return list(self.turns)
        return [self.as_turn().model_copy(update={"error": None})]


def iter_results(task: TaskOutcome) -> Iterator[tuple[str, EvalResult]]:
    """Every verdict of a task as (where, result); `where` is "" or "turn 2" / "repeat 1".

    With repeats, the repeats' verdicts are used (the task-level copy would count twice).
    """
    if task.repeats:
        for rep in task.repeats:
            prefix = f"repeat {rep.repeat + 1}"
            for res in rep.evaluators:
                yield prefix, res
            for i, turn in enumerate(rep.turns or [], 1):
                for res in turn.evaluators:
                    yield f"{prefix} turn {i}", res
        return
    for res in task.evaluators:
        yield "", res
    for i, turn in enumerate(task.turns or [], 1):
        for res in turn.evaluators:
            yield f"turn {i}", res

"""The results.json contract (cli.md `eval run`): what the run engine writes and every report
reads. Models here accept unknown keys, because a results.json written by an older or newer
agentopt must still load for `eval show` / `--compare`; unknown keys are kept on round-trip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentopt.contracts.scores import TaskStatus
from agentopt.core.errors import InputError, Problem
from agentopt.core.redaction import redact_data

RunStatus = Literal["completed", "interrupted", "budget_exhausted", "too_many_errors"]


class _Open(BaseModel):
    """Boundary model: unknown keys load and survive a round-trip."""

    model_config = ConfigDict(extra="allow")


class ErrorInfo(_Open):
    """A machine-readable error code with a human message."""

    code: str = "error"
    """e.g. agentRequestFailed, turnSkipped, judgeParseFailed, evaluatorCrashed."""
    message: str = ""


class EvalOutcome(_Open):
    """One evaluator's verdict on one task or turn (evaluators.md §1), as stored."""

    evaluator: str
    """Canonical name (builtin.relevance, or the custom/rubric evaluator's name)."""
    status: Literal["pass", "fail", "error"]
    score: float | None = None
    """Native scale (1–5, 0..1, bool as 0/1, counts); None for errors."""
    normalized: float | None = None
    """0..1, comparable across evaluators; None for errors."""
    threshold: float | None = None
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    """Evaluator-specific extras: criterion `verdicts`, rubric `dimension_scores`, ..."""
    error: ErrorInfo | None = None
    cost: dict[str, Any] = Field(default_factory=dict)
    """Judge tokens and cost of this verdict: input_tokens, output_tokens, cost_usd."""


class ToolCallOut(_Open):
    """A tool call the agent made and what the tool answered."""

    name: str
    arguments: Any = None
    result: Any = None
    error: str | None = None
    source: str = ""
    """Which implementation answered: mock, python, mcp, none, hosted."""


class CitationOut(_Open):
    """A citation returned by the agent."""

    index: int | None = None
    url: str | None = None
    title: str | None = None


class TurnOutcome(_Open):
    """One turn of a multi-turn task: the exchange and its verdicts."""

    query: str = ""
    response: str = ""
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    citations: list[CitationOut] = Field(default_factory=list)
    status: TaskStatus = "pass"
    score: float | None = None
    evaluators: list[EvalOutcome] = Field(default_factory=list)
    error: ErrorInfo | None = None
    latency_s: float = 0.0


class RepeatOutcome(_Open):
    """One repeat of a task under `--repeat N`."""

    repeat: int = 0
    status: TaskStatus = "pass"
    score: float | None = None
    response: str = ""
    evaluators: list[EvalOutcome] = Field(default_factory=list)
    turns: list[TurnOutcome] | None = None


class TokenCount(_Open):
    """Agent tokens of one task (all turns and repeats)."""

    input: int = 0
    output: int = 0


class TaskOutcome(_Open):
    """One task's result. For a multi-turn task `turns` holds each turn's verdicts, the
    task-level `evaluators` is empty, and `score`/`status` are the thread's."""

    name: str
    index: int = 0
    """Position in the source dataset (0-based): M365 outputs are written back by index."""
    query: str = ""
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    ground_truth: str | None = None
    response: str = ""
    """The final response text."""
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    citations: list[CitationOut] = Field(default_factory=list)
    status: TaskStatus = "pass"
    score: float | None = None
    evaluators: list[EvalOutcome] = Field(default_factory=list)
    error: ErrorInfo | None = None
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

    def transcript_turns(self) -> list[TurnOutcome]:
        """The turns to show: a thread's own, or one turn made of the task's fields."""
        if self.turns:
            return list(self.turns)
        return [
            TurnOutcome(
                query=self.query,
                response=self.response,
                tool_calls=self.tool_calls,
                citations=self.citations,
                status=self.status,
                score=self.score,
                evaluators=self.evaluators,
            )
        ]


class UsageBucket(_Open):
    """Calls, tokens and cost of one kind of model use (agent, judge or generator)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0


class EvaluatorSummary(_Open):
    """Aggregate of one evaluator over the run."""

    name: str
    count: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    pass_rate: float | None = None
    mean: float | None = None
    """Mean normalized score over results that have one."""


class RunSummary(_Open):
    """Run-level aggregates (evaluators.md §6)."""

    score: float | None = None
    score_ci: list[float] | None = None
    """95% bootstrap confidence interval [lo, hi] of the run score."""
    pass_rate: float = 0.0
    tasks: int = 0
    passed: int = 0
    failed: int = 0
    partial: int = 0
    errors: int = 0
    evaluators: list[EvaluatorSummary] = Field(default_factory=list)
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    usage: dict[str, UsageBucket] = Field(default_factory=dict)
    """Keyed agent / judge / generator."""
    cost_usd: float = 0.0
    cache_hits: int = 0
    limiter: str = ""
    """What the adaptive limiter did, e.g. "rate limited 14×, concurrency 16 → 4 → 11"."""
    flaky: list[str] = Field(default_factory=list)
    duration_s: float = 0.0


class AgentInfo(_Open):
    """The agent under test."""

    name: str | None = None
    target: str | None = None
    """local | hosted | endpoint | command | foundry"""
    model: str | None = None
    config_id: str | None = None
    """The `.agent_configs/<id>/` that was run (baseline or a candidate)."""


class DatasetInfo(_Open):
    """Which dataset, pinned by registered version and content hash."""

    name: str | None = None
    version: str | None = None
    sha256: str | None = None
    source: str | None = None
    """The dataset file as given (an M365 `.json` output over it is backed up first)."""
    format: str | None = None
    """jsonl | m365 | csv | adhoc"""


class ModelsInfo(_Open):
    """Model ids actually used by the agent and the judge."""

    agent: str | None = None
    judge: str | None = None


class RemoteRunInfo(_Open):
    """`eval run --remote`: the Foundry evaluation this run is (docs/foundry-remote.md)."""

    endpoint: str
    """The Foundry project endpoint."""
    eval_id: str
    run_id: str
    status: str | None = None
    """queued | in_progress | completed | failed | canceled, as last read."""
    report_url: str | None = None
    """The run's report in the Foundry portal."""
    agent: str | None = None
    """The deployed agent's name in the project."""
    agent_version: str | None = None
    source: str | None = None
    """How the rows were sent: `file_content` (inline) or `file_id` (a registered dataset)."""
    criteria: dict[str, str] = Field(default_factory=dict)
    """Testing criterion name → the evaluator its results are recorded under."""
    result_counts: dict[str, int] | None = None
    """Foundry's own tally: total, passed, failed, errored, skipped."""


class RunInfo(_Open):
    """Who ran what, when, with which assets."""

    id: str
    name: str | None = None
    started_at: str | None = None
    """ISO-8601."""
    finished_at: str | None = None
    status: RunStatus | str = "completed"
    config: dict[str, Any] = Field(default_factory=dict)
    agent: AgentInfo = Field(default_factory=AgentInfo)
    dataset: DatasetInfo = Field(default_factory=DatasetInfo)
    evaluators: list[str] = Field(default_factory=list)
    models: ModelsInfo = Field(default_factory=ModelsInfo)
    repeat: int = 1
    seed: int | None = None
    cli_version: str | None = None
    remote: RemoteRunInfo | None = None
    """Set when the run happened in a Foundry project (`--remote`)."""


class RunResults(_Open):
    """A whole results.json."""

    run: RunInfo
    summary: RunSummary = Field(default_factory=RunSummary)
    tasks: list[TaskOutcome] = Field(default_factory=list)

    @property
    def title(self) -> str:
        """The run's display name: its name, else the dataset name, else its id."""
        return self.run.name or self.run.dataset.name or self.run.id

    def task(self, name: str) -> TaskOutcome | None:
        return next((t for t in self.tasks if t.name == name), None)


def iter_results(task: TaskOutcome) -> Iterator[tuple[str, EvalOutcome]]:
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


def redacted(results: RunResults) -> RunResults:
    """A copy with credentials masked in every string (applied before anything is written)."""
    return RunResults.model_validate(redact_data(results.model_dump(mode="json")))


def load_results(path: Path) -> RunResults:
    """Read a results.json; a broken file is an InputError naming the file and key path."""
    shown = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError.at(shown, "", "file not found") from exc
    except json.JSONDecodeError as exc:
        raise InputError.at(shown, f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from exc
    return parse_results(data, source=shown)


def parse_results(data: Any, *, source: str = "results.json") -> RunResults:
    """Validate a results dict, turning pydantic errors into located Problems."""
    try:
        return RunResults.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(
                source,
                ".".join(str(p) for p in err["loc"]),
                f"{err['msg']} (found {_short(err.get('input'))})",
            )
            for err in exc.errors()[:20]
        ]
        raise InputError(
            problems=problems, hint="is this a results.json written by agentopt?"
        ) from exc


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

"""The run's files (cli.md `eval run`, files.md §7): run.json (`RunRecord`, rewritten as the
run goes) and results.json (`RunResults`: the run, its summary and one `TaskOutcome` per task),
which the run workflow writes and every report reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentopt.contracts.matrix import VariantTag
from agentopt.contracts.outcomes import OutcomeCounts
from agentopt.contracts.record import (
    Record,
    SparseRecord,
    VersionedRecord,
    parse_record,
    sparse,
)
from agentopt.contracts.task_record import TaskOutcome
from agentopt.core.errors import InputError
from agentopt.core.files import bounded
from agentopt.core.redaction import redact_data

RunStatus = Literal[
    "running", "completed", "interrupted", "budget_exhausted", "too_many_errors", "stopped"
]
RESULTS_HINT = "is this a results.json written by agentopt?"
TURN_SKIPPED = "turnSkipped"
"""The error code of a turn never sent (agents.conversation.TURN_SKIPPED)."""


class UsageBucket(Record):
    """Calls, tokens and cost of one kind of model use (agent, judge or generator)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0


class EvaluatorSummary(Record):
    """Aggregate of one evaluator over the run."""

    name: str
    """Canonical or custom evaluator name."""
    count: int = 0
    """Results (turns × repeats) it produced."""
    passed: int = 0
    failed: int = 0
    errors: int = 0
    """Results with status error (no verdict)."""
    pass_rate: float | None = None
    """passed / (passed + failed); errors are counted apart, never as failures."""
    mean: float | None = None
    """Mean normalized score over results that have one."""

    @property
    def evaluator(self) -> str:
        """The evaluator's name (as `EvalResult.evaluator` spells it)."""
        return self.name


class RunSummary(SparseRecord):
    """Run-level aggregates (evaluators.md §6)."""

    score: float | None = None
    """Mean over tasks of each task's (repeat-averaged) score, tasks without one left out."""
    score_ci: list[float] | None = None
    """95% bootstrap confidence interval [lo, hi] of the run score."""
    pass_rate: float = 0.0
    """Passed task runs / all task runs (partial and error count as not passed)."""
    tasks: int = 0
    """Distinct tasks."""
    runs: int = 0
    """Task runs (tasks × repeats)."""
    passed: int = 0
    failed: int = 0
    partial: int = 0
    """Task runs where an evaluator errored (no agent failure)."""
    errors: int = 0
    """Task runs where the agent failed."""
    evaluators: list[EvaluatorSummary] = Field(default_factory=list)
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    """Evaluator error codes and agent error codes, counted."""
    usage: dict[str, UsageBucket] = Field(default_factory=dict)
    """Keyed agent / judge / generator / optimizer."""
    flaky: list[str] = Field(default_factory=list)
    """Names of tasks whose verdicts differed across repeats."""
    cost_usd: float = 0.0
    cache_hits: int = 0
    limiter: str = ""
    """What the adaptive limiter did, e.g. "rate limited 14×, concurrency 16 → 4 → 11"."""
    duration_s: float = 0.0
    turns_to_goal: float | None = sparse()
    """Mean agent turns the simulated users took to reach their goal, over the conversations
    scored as a whole that reached it (absent when none did)."""

    @property
    def skipped_turns(self) -> int:
        """Turns never sent because an earlier turn of their conversation failed."""
        return self.errors_by_kind.get(TURN_SKIPPED, 0)

    @property
    def evaluator_errors(self) -> int:
        """Evaluator results with no verdict (every one is also counted by its code)."""
        return sum(e.errors for e in self.evaluators)

    @property
    def agent_errors(self) -> int:
        """Agent turns that failed after retries: the codes of `errors_by_kind` that are not
        an evaluator's, turns skipped after a failed one left out."""
        total = sum(self.errors_by_kind.values())
        return max(0, total - self.skipped_turns - self.evaluator_errors)

    @property
    def counts(self) -> OutcomeCounts:
        """The run's tally, as live progress carried it."""
        return OutcomeCounts(
            passed=self.passed,
            failed=self.failed,
            partial=self.partial,
            errors=self.errors,
            agent_errors=self.agent_errors,
            evaluator_errors=self.evaluator_errors,
            skipped_turns=self.skipped_turns,
        )


class AgentInfo(Record):
    """The agent under test."""

    name: str | None = None
    target: str | None = None
    """local | hosted | endpoint | command | foundry"""
    model: str | None = None
    config_id: str | None = None
    """The `.agent_configs/<id>/` that was run (baseline or a candidate)."""


class DatasetInfo(Record):
    """Which dataset, pinned by registered version and content hash."""

    name: str | None = None
    version: str | None = None
    sha256: str | None = None
    source: str | None = None
    """The dataset file as given (an M365 `.json` output over it is backed up first)."""
    format: str | None = None
    """jsonl | m365 | csv | adhoc"""


class ModelsInfo(Record):
    """Model ids actually used by the agent and the judge."""

    agent: str | None = None
    judge: str | None = None


class RemoteRunInfo(Record):
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


class RunInfo(Record):
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
    """Set when the run happened in a Foundry project (`--remote`); absent from the file
    otherwise."""
    model_capabilities: dict[str, dict[str, str]] | None = None
    """Per `provider:model` called over HTTP: the structured-output mode used and whether tools
    were native or prompted (docs/providers.md); absent when no such server was called."""
    variant: VariantTag | None = None
    """Set when the run is one variant of a matrix run (contracts/matrix.py); absent
    otherwise."""

    @model_serializer(mode="wrap")
    def _no_remote_key(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in ("remote", "model_capabilities", "variant"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data


class RunRecord(RunInfo, VersionedRecord):
    """run.json: the run's identity, rewritten at the start and the end (and read by
    `--resume`, which continues the usage counts and the clock)."""

    usage_before: dict[str, UsageBucket] = Field(default_factory=dict)
    """Per pool, everything spent by the earlier sessions of this run."""
    duration_s: float = 0.0
    """Wall time of the earlier sessions."""

    def info(self) -> RunInfo:
        """The `run` section of results.json: this record without the session bookkeeping."""
        return RunInfo.model_validate(
            self.model_dump(mode="json", exclude={"schema_version", "usage_before", "duration_s"})
        )


class RunResults(VersionedRecord):
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


def redacted(results: RunResults) -> RunResults:
    """A copy with credentials masked in every string (applied before anything is written)."""
    return RunResults.model_validate(redact_data(results.model_dump(mode="json")))


def load_results(path: Path) -> RunResults:
    """Read a results.json; a broken file is an InputError naming the file and key path."""
    shown = str(path)
    try:
        data = bounded.loads(bounded.read_text(Path(path), shown=shown, kind="results"))
    except json.JSONDecodeError as exc:
        raise InputError.at(shown, f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        found = _kind(data)
        raise InputError.at(shown, "", f"expected a JSON object (run results), found {found}")
    return parse_results(data, source=shown)


def parse_results(data: Any, *, source: str = "results.json") -> RunResults:
    """Validate a results dict, turning pydantic errors into located Problems."""
    return parse_record(RunResults, data, source=source, hint=RESULTS_HINT)


def load_run_record(path: Path) -> RunRecord:
    """Read a run.json (InputError naming the file when it is unreadable)."""
    shown = str(path)
    try:
        data = bounded.loads(bounded.read_text(Path(path), shown=shown, kind="results"))
    except json.JSONDecodeError as exc:
        raise InputError.at(shown, f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError.at(
            shown, "", f"expected a JSON object (a run record), found {_kind(data)}"
        )
    return parse_record(RunRecord, data, source=shown, hint="start a new run")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    return {list: "a list", str: "a string", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )

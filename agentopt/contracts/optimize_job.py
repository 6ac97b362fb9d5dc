"""The shape of `.agentopt/optimize/<job-id>/job.json` (optimizer.md §4).

The optimize workflow builds these models and writes them; every optimize renderer (live
table, final report, HTML, `optimize status|list|show`) reads them back, so a job can be
reported on from its file alone, in this process or a later one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentopt.contracts.record import Record, VersionedRecord, parse_record
from agentopt.core.errors import ConfigError, InputError
from agentopt.core.files import bounded

JobStatus = Literal["running", "completed", "interrupted", "failed", "cancelled"]
Termination = Literal["completed", "budget_exhausted", "screening_stalled", "interrupted"]
TERMINATION_TEXT: dict[str, str] = {
    "completed": "completed: the search reached its end",
    "budget_exhausted": "stopped: the call or cost budget ran out",
    "screening_stalled": "stopped: proposals kept failing screening (--max-stalls)",
    "interrupted": "interrupted (Ctrl-C)",
}
"""The one human phrase for each stop reason; the job's `stop_detail` adds the particulars."""


def empty_limit(max_stalls: int) -> int:
    """Proposals in a row that put nothing on screening before a search ends: no screening
    failed, so they are no stall (optimizer.md §2), but a search whose proposers have nothing
    new must end. Twice the stall limit: such a proposal runs no child, so it costs less than a
    failed screening."""
    return 2 * max_stalls


def termination_text(reason: str | None) -> str:
    """The one human phrase for why a job stopped, used by every view (the final report,
    `optimize status` and `list`, the HTML report, `view`, the bench table); '' while it has
    not stopped."""
    if not reason:
        return ""
    return TERMINATION_TEXT.get(reason, reason)


Outcome = Literal["improved", "no_improvement"]
CandidateStatus = Literal[
    "baseline", "screening", "evaluating", "evaluated", "screened_out", "incomplete", "outranked"
]
"""`incomplete`: its screening had evaluation errors (after a re-run), so it was neither
accepted nor screened out — an error is never a score. `outranked`: accepted by screening, but
so many of its validation tasks failed that it could no longer reach the best's score even by
passing all the others, so those were never run (it has no validation score)."""
BASELINE_ID = "baseline"


class ScoreSummary(Record):
    """A candidate's numbers on one split (always the full split, never a minibatch)."""

    score: float | None = None
    """Mean task score over tasks that have one (evaluator errors left out)."""
    pass_rate: float = 0.0
    """Passed tasks / tasks."""
    ci: list[float] | None = None
    """95% bootstrap interval of `score` over tasks, [low, high]."""
    n: int = 0
    """Tasks in the split."""
    errors: int = 0
    """Tasks with an agent error or an evaluator error."""
    error_rate: float = 0.0
    """errors / n."""
    per_task: dict[str, float | None] = Field(default_factory=dict)
    """Task name → score (None when nothing could be scored)."""


class Screening(Record):
    """The cheap minibatch comparison of a child with its parent (optimizer.md §2c)."""

    tasks: list[str]
    """The train tasks of the minibatch (where the parent was weakest)."""
    child: float | None
    """Child's mean score on the minibatch tasks without an error (None: none had a score)."""
    parent: float | None
    """Parent's mean score on the same tasks (without an error)."""
    accepted: bool
    """child > parent, and no child task ended in an error."""
    errors: int = 0
    """Minibatch tasks whose child evaluation ended in an agent or evaluator error, after a
    re-run. Counted, never scored 0 (written only when non-zero)."""

    @model_serializer(mode="wrap")
    def _omit_no_errors(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_empty(handler(self), "errors", 0)


class Outranked(Record):
    """Why a candidate's validation stopped early: a bound, not a score."""

    tasks: int
    """Validation tasks it was run on before the others were skipped."""
    of: int
    """Tasks in the validation split."""
    at_most: float
    """The highest validation score it could still have reached (every other task at 1)."""
    best: str
    """The candidate that held the best score then."""
    best_score: float


class Delta(Record):
    """Paired bootstrap interval of (candidate − baseline) over shared tasks."""

    mean: float
    low: float
    high: float
    n: int


class ParetoFlags(Record):
    """Whether no other evaluated candidate is at least as good on both axes and better on one."""

    tokens: bool = False
    """On (score ↑, mean tokens per task ↓)."""
    cost: bool = False
    """On (score ↑, cost ↓)."""

    @property
    def any(self) -> bool:
        return self.tokens or self.cost


class CandidateRecord(Record):
    """One candidate configuration and what is known about it."""

    id: str
    """`baseline` or `cand_NN` (NN = creation order)."""
    number: int = 0
    """Creation order (baseline 0)."""
    parent: str | None = None
    """The candidate it was mutated from."""
    strategy: str = "-"
    """instructions | rules | tools:<name> | skills:<name> | model:<name> | toolset:-<name>."""
    rationale: str = ""
    """One line: why this mutation should help."""
    mutation: dict[str, Any] = Field(default_factory=dict)
    """What changed (rules added, tool rewritten, model, tool dropped…)."""
    model: str | None = None
    """The agent model of this configuration."""
    status: CandidateStatus = "evaluating"
    screening: Screening | None = None
    outranked: Outranked | None = None
    """Set when its validation stopped early (status `outranked`)."""
    validation: ScoreSummary | None = None
    """The candidate's score: always the full validation split."""
    tokens: float | None = None
    """Mean agent tokens (input + output) per validation task."""
    cost: float | None = None
    """Agent cost of the validation split in USD, from token counts and the price table."""
    pareto: ParetoFlags = Field(default_factory=ParetoFlags)
    eligible: bool = True
    """False when its error rate exceeds the baseline's by more than 10 points."""
    star: bool = False
    """The best, and better than the baseline beyond the noise."""
    delta: Delta | None = None
    """Validation: candidate − baseline."""
    test: ScoreSummary | None = None
    """Held-out split, evaluated once at the end (baseline and best only)."""
    config_dir: str = ""
    """Its configuration, relative to the job folder (`candidates/<id>`): written when the
    candidate passes its screening, and for one screened out from its journal line when
    `optimize show` or `apply` first asks for it (`JobStore.candidate_folder`)."""
    created_at: str = ""

    @model_serializer(mode="wrap")
    def _omit_not_outranked(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Written only when set: the job files of earlier versions read back unchanged.
        return _without_empty(handler(self), "outranked", None)


class SplitInfo(Record):
    """Which tasks serve for what (task names)."""

    source: Literal["seeded", "eval.yaml"] = "seeded"
    seed: int = 0
    train: list[str] = Field(default_factory=list)
    validation: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    validation_is_train: bool = False
    """True when the dataset was too small to split (validation = train, no test)."""
    warning: str | None = None


class Estimate(Record):
    """Model calls, tokens and dollars (token counts are estimates: characters / 4)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Estimate) -> Estimate:
        return Estimate(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )

    def times(self, k: int) -> Estimate:
        return Estimate(
            calls=self.calls * k,
            input_tokens=self.input_tokens * k,
            output_tokens=self.output_tokens * k,
            cost_usd=self.cost_usd * k,
        )


class OptimizePlan(Record):
    """What the job will do and roughly what it costs, printed before anything is sent."""

    agent: str
    agent_model: str | None = None
    eval_model: str | None = None
    optimization_model: str | None = None
    """None: no usable reflection model (the rule proposer still works)."""
    targets: list[str] = Field(default_factory=list)
    proposers: list[str] = Field(default_factory=list)
    """instructions:reflect, instructions:rules, tools, skills, model, toolset."""
    model_search_space: list[str] = Field(default_factory=list)
    train: int = 0
    validation: int = 0
    test: int = 0
    split_warning: str | None = None
    baseline: Estimate = Field(default_factory=Estimate)
    """Agent + judge, validation and train."""
    per_candidate: Estimate = Field(default_factory=Estimate)
    """Screening of one proposal plus, when accepted, the full validation split."""
    per_proposal_reflection: Estimate = Field(default_factory=Estimate)
    """One reflection call (optimizer pool)."""
    test_split: Estimate = Field(default_factory=Estimate)
    """Baseline and best on the held-out split."""
    total: Estimate = Field(default_factory=Estimate)
    """Baseline + max_candidates × (candidate + reflection) + test."""
    max_candidates: int = 5
    max_stalls: int = 5
    screening_size: int = 3
    parallel_proposals: int = 2
    budget_calls: int | None = None
    max_cost: float | None = None
    real_tools: bool = False
    notes: list[str] = Field(default_factory=list)

    @property
    def max_empty(self) -> int:
        return empty_limit(self.max_stalls)


class TestReport(Record):
    """Baseline and best on the held-out split, and how optimistic validation was."""

    __test__ = False  # not a pytest class

    best: str
    baseline_score: ScoreSummary | None = None
    best_score: ScoreSummary | None = None
    delta: Delta | None = None
    validation_gain: float | None = None
    test_gain: float | None = None
    optimism_gap: float | None = None
    """validation gain − test gain."""
    note: str | None = None
    """Why the split was not (fully) evaluated, when it was not."""


class EvaluationErrors(Record):
    """Units (candidate × task) of the job that ended in an error after their re-run."""

    units: int = 0
    """How many; the job exits 3 when more than `options.max_errors` (default 0)."""
    by_code: dict[str, int] = Field(default_factory=dict)
    """Error code (agentTimeout, agentRequestFailed, judgeRateLimited, …) → units."""
    candidates: list[str] = Field(default_factory=list)
    """Candidates with at least one such unit (their numbers are incomplete)."""
    first: str = ""
    """The first error's message, for the summary line."""


def _without_empty(data: Any, key: str, empty: Any) -> Any:
    """`data` without `key` when it holds `empty`: a file without errors is written exactly
    as versions before this field wrote it."""
    if isinstance(data, dict) and data.get(key, None) == empty:
        del data[key]
    return data


class CandidateCounts(Record):
    """The job's candidates by state: the one tally `optimize list/status/show`, the report
    and `view` show. The baseline is not a candidate."""

    proposed: int = 0
    """Candidates created (every `cand_NN`)."""
    evaluated: int = 0
    """Fully evaluated on the validation split."""
    screened_out: int = 0
    incomplete: int = 0
    """Screening had evaluation errors: neither accepted nor screened out."""
    outranked: int = 0
    """Accepted, but stopped early in validation (could no longer reach the best)."""
    in_progress: int = 0
    """Screening or evaluating when the job.json was written."""
    pareto: int = 0
    """Evaluated candidates on a Pareto front (score vs tokens or cost)."""

    def line(self) -> str:
        """`5 proposed: 2 evaluated (1 Pareto), 3 screened out` — the words every view uses."""
        parts = [
            f"{self.evaluated} evaluated" + (f" ({self.pareto} Pareto)" if self.pareto else "")
        ]
        for n, what in (
            (self.screened_out, "screened out"),
            (self.incomplete, "incomplete (errors)"),
            (self.outranked, "outranked in validation"),
            (self.in_progress, "in progress"),
        ):
            if n:
                parts.append(f"{n} {what}")
        return f"{self.proposed} proposed: " + ", ".join(parts)


class JobRecord(VersionedRecord):
    """job.json."""

    id: str
    status: JobStatus = "running"
    started_at: str = ""
    finished_at: str | None = None
    termination_reason: Termination | None = None
    outcome: Outcome | None = None
    best: str | None = None
    """The top-ranked eligible candidate (may be the baseline)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The options the job was started with (used by --resume) and the resolved settings."""
    plan: OptimizePlan | None = None
    splits: SplitInfo = Field(default_factory=SplitInfo)
    candidates: list[CandidateRecord] = Field(default_factory=list)
    test: TestReport | None = None
    usage: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per pool (agent, judge, optimizer): calls, cache hits, tokens, cost, all sessions."""
    phase_calls: dict[str, int] = Field(default_factory=dict)
    """Agent + judge provider calls per phase (baseline, search, test), all sessions."""
    proposals: int = 0
    """Proposal slots used (ids cand_01… are numbered by them)."""
    stalls: int = 0
    """Failed screenings in a row at the end."""
    stop_detail: str = ""
    """The particulars of `termination_reason` (which candidate, how many stalls), shown after
    `termination_phrase` (written only when set)."""
    leak_refusals: int = 0
    """Proposed texts refused before evaluation because they carried a task's query or its
    expected answer (`workflows/optimize/leak.py`): whole candidates and reflection lines
    (written only when non-zero)."""
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Things the report should say (e.g. why a target was skipped)."""
    errors: EvaluationErrors = Field(default_factory=EvaluationErrors)
    """Evaluations that failed: the decision rests on incomplete evaluations when non-zero
    (written only when there are some)."""

    @model_serializer(mode="wrap")
    def _omit_no_errors(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = _without_empty(handler(self), "errors", EvaluationErrors().model_dump())
        data = _without_empty(data, "stop_detail", "")
        return _without_empty(data, "leak_refusals", 0)

    def candidate(self, cand_id: str) -> CandidateRecord | None:
        return next((c for c in self.candidates if c.id == cand_id), None)

    @property
    def baseline(self) -> CandidateRecord | None:
        return self.candidate(BASELINE_ID)

    @property
    def evaluated(self) -> list[CandidateRecord]:
        """Baseline and every fully evaluated candidate, in creation order."""
        return [c for c in self.candidates if c.validation is not None]

    @property
    def counts(self) -> CandidateCounts:
        """The candidates by state (the baseline left out), counted here and nowhere else."""
        cands = [c for c in self.candidates if c.id != BASELINE_ID]
        by = {
            state: sum(c.status == state for c in cands)
            for state in ("screened_out", "incomplete", "outranked")
        }
        return CandidateCounts(
            proposed=len(cands),
            evaluated=sum(c.validation is not None for c in cands),
            screened_out=by["screened_out"],
            incomplete=by["incomplete"],
            outranked=by["outranked"],
            in_progress=sum(c.status in ("screening", "evaluating") for c in cands),
            pareto=sum(c.validation is not None and c.pareto.any for c in cands),
        )

    @property
    def leak_note(self) -> str:
        """How many proposed texts were refused for quoting a task ("" when none), in the
        words every view uses."""
        n = self.leak_refusals
        if not n:
            return ""
        return (
            f"{n} proposed text{'s' if n != 1 else ''} refused before evaluation: "
            "they quoted a task's query or its expected answer"
        )

    @property
    def stop_reason(self) -> str:
        """Why the job stopped: the one phrase (`termination_text`), then its particulars
        (`stop_detail`); '' while it runs. Every view prints this line."""
        phrase = termination_text(self.termination_reason)
        return f"{phrase} ({self.stop_detail})" if phrase and self.stop_detail else phrase


def load_job(path: Path) -> JobRecord:
    """Read a job.json (ConfigError naming the file when it is unreadable)."""
    shown = str(path)
    try:
        data = bounded.loads(bounded.read_text(Path(path), shown=shown, kind="results"))
    except InputError as exc:
        raise ConfigError(problems=exc.problems) from None
    except json.JSONDecodeError as exc:
        raise ConfigError.at(shown, f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        found = "null" if data is None else type(data).__name__
        raise ConfigError.at(shown, "", f"expected a JSON object (an optimize job), found {found}")
    try:
        return parse_record(JobRecord, data, source=shown, hint=JOB_HINT)
    except InputError as exc:
        raise ConfigError(problems=exc.problems, hint=exc.hint) from None


JOB_HINT = "is this a job.json written by agentopt? start a new job with `agentopt optimize`"

"""The evaluator extension point: one Protocol with one async method, and the one input it gets.

Every evaluator — deterministic, embedding, LLM judge, rubric, user code — sees an `EvalSample`
(one task turn, already run) and returns an `EvalResult`. Evaluators never see the agent target,
so the same catalogue scores local, hosted and endpoint agents alike (agents.md).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentopt.contracts.eval_result import EvalCost, EvalResult
from agentopt.contracts.simulation import SimulationEnd
from agentopt.contracts.task import Criterion
from agentopt.contracts.transcript import Citation, ToolCallRecord
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.lazy_model import LazyModel

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer


class HistoryTurn(LazyModel):
    """An earlier turn of the same thread, shown to judges as conversation history."""

    model_config = ConfigDict(extra="forbid")

    query: str
    """What the user said in that turn."""
    response: str = ""
    """What the agent answered in that turn."""


class EvalSample(LazyModel):
    """Everything an evaluator may look at for one task turn (one repeat).

    Built by the run workflow from a `Task` turn and the agent's `Transcript` (see
    `agentopt.evaluators.samples.samples_from_run`). Fields an evaluator needs but finds empty
    make it return a `missingInput` error rather than a guess.
    """

    model_config = ConfigDict(extra="forbid")

    query: str = ""
    """The user message of this turn."""
    response: str = ""
    """The agent's answer to this turn."""
    ground_truth: str | None = None
    """The reference answer, when the dataset has one."""
    context: str | None = None
    """Grounding context given by the dataset item (M365 `context`)."""
    criteria: list[Criterion] = Field(default_factory=list)
    """Binary checks for this turn (judged by builtin.task_adherence)."""
    history: list[HistoryTurn] = Field(default_factory=list)
    """Earlier turns of the thread, oldest first (empty for single-turn tasks)."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    """Tool calls the agent made in this turn, with the tools' answers."""
    tool_definitions: list[dict[str, Any]] = Field(default_factory=list)
    """The tools offered to the agent (chat-completions function tools)."""
    agent_name: str = ""
    """The agent's name: the plugin of its own function tools in tool-call evidence."""
    tool_calls_known: bool = True
    """False when `tool_calls` cannot be told from "no call" (answers replayed from a captured
    document): tool-call evidence then comes from `diagnostics` only."""
    citations: list[Citation] = Field(default_factory=list)
    """Citations the agent returned next to its text (hosted agents, M365)."""
    diagnostics: dict[str, Any] | None = None
    """What the agent's protocol (or the captured document) reported beside the answer, in
    the M365 `Diagnostics` shape (contracts/diagnostics.py); None: nothing reported."""
    latency_s: float | None = None
    """Wall time of the agent's answer to this turn, seconds."""
    tokens: int | None = None
    """Agent tokens (input + output) spent on this turn."""
    instructions: str | None = None
    """The agent's instructions (system prompt), for judging without criteria."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Per-sample evaluator options (e.g. an M365 item's threshold); they override the options
    the evaluator was built with, key by key."""
    task_name: str = ""
    """The task this sample belongs to, for messages."""
    turn_index: int = 0
    """0-based turn number inside the task."""
    repeat: int = 0
    """Which repeat of the task this is (`--repeat N`); judge calls are cached per repeat."""
    scope: Literal["turn", "conversation"] = "turn"
    """conversation: the sample is a whole conversation scored at once (eval.yaml
    `options.evaluation_level: conversation`) — `history` holds every turn before the last,
    `query`/`response` the last exchange, `tool_calls` and `criteria` those of every turn."""
    goal: str | None = None
    """A simulated user's goal (conversation scope)."""
    simulation: SimulationEnd | None = None
    """How a simulated conversation ended (conversation scope; builtin.goal_reached)."""

    @property
    def tool_outputs(self) -> str:
        """The tools' answers joined, the grounding context of a run without item context."""
        parts: list[str] = []
        for call in self.tool_calls:
            if call.error:
                continue
            if call.result is None or call.result == "":
                continue
            text = call.result if isinstance(call.result, str) else _json(call.result)
            parts.append(f"[{call.name}] {text}")
        return "\n".join(parts)


class EvaluatorUse(LazyModel):
    """One evaluator as configured: a name, its options, and where its definition lives.

    What eval.yaml entries, `--evaluator` flags and M365 evaluator maps all become
    (`EvaluatorUse.coerce` reads each shape); `build_evaluator` turns it into an `Evaluator`.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    """As written (`Relevance`, `builtin.exact_match`, `support-agent-quality`, `my_check`)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """eval.yaml `initialization_parameters`, or an M365 evaluator map value."""
    version: str | None = None
    """A registered evaluator's pinned version; None = the latest."""
    local_uri: str | None = None
    """A rubric_dimensions.json, evaluator YAML, .py file or folder defining it."""

    @classmethod
    def coerce(cls, value: Any) -> EvaluatorUse:
        """From a name, an `EvaluatorRef`, an eval.yaml `EvaluatorEntry`, or a mapping."""
        if isinstance(value, EvaluatorUse):
            return value
        if isinstance(value, str):
            return cls(name=value)
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise ConfigError(
                problems=[Problem("", "evaluators", f"expected an evaluator name, found {value!r}")]
            )
        options = value.get("options")
        if options is None:
            options = value.get("initialization_parameters")
        local_uri = value.get("local_uri")
        version = value.get("version")
        return cls(
            name=value["name"],
            options=dict(options or {}),
            version=None if version is None else str(version),
            local_uri=None if local_uri is None else str(local_uri),
        )


@runtime_checkable
class Evaluator(Protocol):
    """An evaluator: `name` is its canonical name; `evaluate` never raises for a bad sample.

    A sample it cannot judge (missing input, judge unreachable, unparseable judge output, user
    code that crashed) gives an `EvalResult` with status "error" — only systemic failures
    (e.g. a budget stop) propagate as exceptions.
    """

    name: str

    async def evaluate(self, sample: EvalSample) -> EvalResult: ...


Offload = Callable[..., Awaitable[Any]]
"""`await offload(fn, *args)`: `fn(*args)` in a worker process."""


@dataclass(frozen=True)
class BuildContext:
    """What a factory may use to build an evaluator.

    Attributes:
        judge_model: the model judges call (`[provider:]model`), e.g. eval.yaml `eval_model`.
        layer: the call layer every judge and embedding call goes through (pool "judge").
        project_dir: the agent project directory (custom evaluators, registry, rubric files).
    """

    judge_model: str | None
    layer: CallLayer | None
    project_dir: Path
    offload: Offload | None = None
    """Runs a picklable function in a worker process (the run's CPU pool): where code
    evaluators that burn CPU go (code_worker.py). None: everything stays in this process."""
    run_code: bool = True
    """False: code evaluators are checked (file, syntax, class) but never imported."""


def flat_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """One flat option dict from the shapes users write.

    M365 custom evaluators nest their settings (`{"threshold": 3, "options": {...}}`), eval.yaml
    `initialization_parameters` are flat; both end up as one dict, the outer keys winning.
    """
    options = dict(options or {})
    nested = options.pop("options", None)
    if isinstance(nested, dict):
        return {**nested, **options}
    if nested is not None:
        options["options"] = nested
    return options


def passed(score: float, threshold: float | None) -> bool:
    """The pass rule: higher is better, `score >= threshold` (no threshold: a true bool)."""
    if threshold is None:
        return score >= 1.0
    return score >= threshold


def verdict(
    evaluator: str,
    *,
    score: float,
    normalized: float,
    threshold: float | None,
    reason: str,
    details: dict[str, Any] | None = None,
    is_pass: bool | None = None,
    cost: EvalCost | None = None,
) -> EvalResult:
    """A scored result; `is_pass` overrides the pass rule for evaluators with their own;
    `cost` is what a judge or embedding call spent on it."""
    ok = passed(score, threshold) if is_pass is None else is_pass
    return EvalResult(
        evaluator=evaluator,
        status="pass" if ok else "fail",
        score=score,
        normalized=max(0.0, min(1.0, normalized)),
        threshold=threshold,
        reason=reason,
        details=details or {},
        cost=EvalCost() if cost is None else cost,
    )


def pass_fail(
    evaluator: str,
    ok: bool,
    *,
    reason: str,
    details: dict[str, Any] | None = None,
    threshold: float | None = None,
) -> EvalResult:
    """The result of a check that passes or fails outright: score 1.0 or 0.0, the check's own
    verdict deciding (`threshold` is only reported, for evaluators that pin one)."""
    score = 1.0 if ok else 0.0
    return verdict(
        evaluator,
        score=score,
        normalized=score,
        threshold=threshold,
        reason=reason,
        details=details,
        is_pass=ok,
    )


EMPTY_RESPONSE = "emptyAgentResponse"


def missing_input(evaluator: str, what: str, code: str = "missingInput") -> EvalResult:
    """The error result for a sample lacking something the evaluator needs."""
    return EvalResult.failed_to_evaluate(evaluator, code, f"{evaluator} needs {what}")


def option_error(evaluator: str, key: str, expected: str, found: Any) -> ConfigError:
    """A bad evaluator option: names the evaluator, the key, what was expected and found."""
    return ConfigError(
        problems=[Problem("", f"{evaluator}.{key}", f"expected {expected}, found {found!r}")]
    )


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class EvaluatorBase:
    """Convenience base for evaluators: keeps the name, options and build context.

    Subclasses implement `evaluate`; `options_for(sample)` merges the per-sample options over
    the configured ones. Not required by the Protocol — a plugin may implement it directly.
    """

    name: str = ""
    default_threshold: float | None = None

    def __init__(
        self,
        *,
        name: str | None = None,
        options: dict[str, Any] | None = None,
        context: BuildContext | None = None,
    ) -> None:
        if name is not None:  # an evaluator defined by a file is named by its definition
            self.name = name
        self.options = flat_options(options)
        self.context = context or BuildContext(judge_model=None, layer=None, project_dir=Path("."))
        # A bad option fails at build time, not mid-run: the threshold, then the rest.
        self._threshold(self.options)
        self.check_options(self.options)

    def check_options(self, options: dict[str, Any]) -> None:
        """Raise a ConfigError for an option this evaluator cannot use, beyond what its typed
        options model checks (a regex that must compile, a list that must not be empty).
        Called when built; nothing to check by default."""

    def options_for(self, sample: EvalSample) -> dict[str, Any]:
        """The configured options with the sample's own on top."""
        return {**self.options, **flat_options(sample.options)}

    def threshold_for(self, sample: EvalSample) -> float | None:
        """The pass threshold for this sample (None = the evaluator has its own rule)."""
        return self._threshold(self.options_for(sample))

    def _threshold(self, options: dict[str, Any]) -> float | None:
        value = options.get("threshold", self.default_threshold)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise option_error(self.name, "threshold", "a number", value)
        return float(value)

    async def evaluate(self, sample: EvalSample) -> EvalResult:  # pragma: no cover - abstract
        raise NotImplementedError

"""What every LLM judge shares: the judge model and call layer, the sample's untrusted texts,
and the 1–5 reply shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import EvalSample, EvaluatorBase, verdict
from agentopt.evaluators.judges.judge_call import JudgeOutcome
from agentopt.evaluators.judges.prompting import (
    format_history,
    format_tool_calls,
    format_tool_definitions,
)
from agentopt.evaluators.options import no_bool

SCORE_EXAMPLE = '{"reason": "<one or two sentences>", "score": <integer 1-5>}'
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
    },
    "required": ["reason", "score"],
    "additionalProperties": False,
}


reject_bool = no_bool("an integer")
"""`true` is not a score."""


def strict_bool(value: Any) -> Any:
    """A before-validator for a judge's yes/no field: only true/false, not "yes" or "1"."""
    if isinstance(value, str) and value.strip().lower() not in {"true", "false"}:
        raise ValueError("expected true or false")
    return value


def judge_passes(score: float, threshold: float | None) -> bool:
    """A judge's pass rule: `score >= threshold`; without a threshold (`threshold: null`) the
    verdict passes."""
    return threshold is None or score >= threshold


class ScoreReply(LazyModel):
    """A 1–5 judge's reply."""

    model_config = ConfigDict(extra="ignore")

    reason: str = ""
    """Why the score was given (kept in results; fed to the optimizer)."""
    score: int = Field(ge=1, le=5)
    """The score on the 1–5 scale."""

    _no_bool = field_validator("score", mode="before")(reject_bool)


class JudgeEvaluator(EvaluatorBase):
    """Base for evaluators that call a judge model through the call layer (pool "judge")."""

    def check_options(self, options: dict[str, Any]) -> None:
        """A judge needs its model (option `model` / `deployment_name`, else the suite's eval
        model) and the call layer to reach it: both are found when it is built."""
        model = options.get("model") or options.get("deployment_name") or self.context.judge_model
        if not model:
            raise ConfigError(
                problems=[
                    Problem(
                        "",
                        "options.eval_model",
                        f"{self.name} needs a judge model, and none is configured",
                    )
                ],
                hint="set options.eval_model in eval.yaml or pass --eval-model MODEL",
            )
        if self.context.layer is None:
            raise ConfigError(f"{self.name} needs the call layer to reach its judge model")
        self.model: str = str(model)
        self.layer = self.context.layer

    @property
    def grammar_decoded(self) -> bool:
        """True when the judge's JSON output is decoded under a grammar (the embedded model,
        self-hosted servers): schemas may then pin array lengths that strict remote modes
        could refuse."""
        return self.layer is not None and bool(self.layer.grammar_decoded(self.model))

    def judged(
        self,
        outcome: JudgeOutcome[Any],
        score: float,
        threshold: float | None,
        *,
        normalized: float,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> EvalResult:
        """The verdict of a judge that replied (`judge_passes`): its details name the judge
        model and the attempts, its cost is the judge's."""
        return verdict(
            self.name,
            score=score,
            normalized=normalized,
            threshold=threshold,
            reason=reason,
            details={**(details or {}), "judge_model": self.model, "attempts": outcome.attempts},
            is_pass=judge_passes(score, threshold),
            cost=outcome.cost,
        )


_TEXTS: dict[str, Callable[[EvalSample], str | None]] = {
    "query": lambda s: s.query or None,
    "response": lambda s: s.response,
    "history": lambda s: format_history(s.history) if s.history else None,
    "ground_truth": lambda s: s.ground_truth or None,
    "context": lambda s: s.context or None,
    "tool_calls": lambda s: format_tool_calls(s.tool_calls) if s.tool_calls else None,
    "tool_definitions": lambda s: (
        format_tool_definitions(s.tool_definitions) if s.tool_definitions else None
    ),
    "instructions": lambda s: s.instructions or None,
    "goal": lambda s: s.goal if s.scope == "conversation" and s.goal else None,
}


def sample_texts(sample: EvalSample, only: tuple[str, ...] | None = None) -> dict[str, str | None]:
    """The sample's texts as judge data blocks (None = absent); `only` these, when a judge
    says which it shows (formatting the tool definitions for a judge that never shows them
    was a tenth of its own work)."""
    return {name: _TEXTS[name](sample) for name in (only or _TEXTS)}


def scope_params(sample: EvalSample) -> dict[str, Any]:
    """The trusted prompt parameter every judge template reads through `_scope.j2`: whether
    the sample is a whole conversation (`evaluation_level: conversation`)."""
    return {"conversation": sample.scope == "conversation"}


def scoped(sample: EvalSample, data: dict[str, str | None]) -> dict[str, str | None]:
    """`data` plus, for a whole conversation, its earlier turns and the user's goal (every
    judge shows them then, including those that look only at the answer for one turn)."""
    if sample.scope != "conversation":
        return data
    texts = sample_texts(sample, ("history", "goal"))
    return {**data, **texts}

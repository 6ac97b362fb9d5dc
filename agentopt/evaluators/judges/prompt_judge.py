"""Evaluator YAML `type: prompt`: a user-written jinja2 judge prompt with its own score range.

The user's variables (`{{ query }}`, `{{ response }}`, `{{ ground_truth }}`, `{{ context }}`,
`{{ history }}`, `{{ tool_calls }}`, `{{ instructions }}`) render as fenced data blocks, and the
output format is appended, so a hand-written prompt gets the same injection resistance and
parsing as the built-in judges.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, field_validator

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.files.evaluator_yaml import PromptDefinition
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import BuildContext, EvalSample, verdict
from agentopt.evaluators.judges.judge_base import JudgeEvaluator, reject_bool, sample_texts
from agentopt.evaluators.judges.judge_call import JudgeOutcome, call_judge
from agentopt.evaluators.judges.prompting import judge_environment, render_user_template
from agentopt.models.types import Message

DEFAULT_THRESHOLD = 0.5
"""On the normalized 0..1 scale (files.md §5.2)."""


class PromptReply(LazyModel):
    """A prompt judge's reply; the range check needs the definition, so it is done later."""

    model_config = ConfigDict(extra="ignore")

    reason: str = ""
    """Why the score was given."""
    score: int
    """On the definition's score range."""

    _no_bool = field_validator("score", mode="before")(reject_bool)


def scale_schema(lo: int, hi: int) -> dict[str, Any]:
    """The reply schema of a judge scoring from `lo` to `hi`."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "score": {"type": "integer", "enum": list(range(lo, hi + 1))},
        },
        "required": ["reason", "score"],
        "additionalProperties": False,
    }


class RangeJudge(JudgeEvaluator):
    """A judge whose user-written prompt is scored from `lo` to `hi` (an evaluator YAML prompt,
    a .prompty): the output format appended to the prompt, the reply schema, the range check."""

    lo: int = 1
    hi: int = 5
    example_reason = "<one or two sentences>"
    """How the re-ask example describes the reason."""

    def footer(self) -> str:
        """The output-format instructions appended to the user's prompt."""
        template = judge_environment().get_template("_prompt_output.j2")
        return str(template.render(score_min=self.lo, score_max=self.hi))

    def _check(self, reply: PromptReply) -> str | None:
        if not self.lo <= reply.score <= self.hi:
            return f"score must be an integer from {self.lo} to {self.hi} (found {reply.score})"
        return None

    async def ask(self, sample: EvalSample, messages: list[Message]) -> JudgeOutcome[PromptReply]:
        """The judge's reply to the rendered prompt, its score checked against the range."""
        return await call_judge(
            self.layer,
            self.model,
            messages,
            schema_name=self.name.replace(".", "_").replace("-", "_"),
            schema=scale_schema(self.lo, self.hi),
            reply_model=PromptReply,
            example=(
                f'{{"reason": "{self.example_reason}", "score": <integer {self.lo}-{self.hi}>}}'
            ),
            check=self._check,
            repeat=sample.repeat,
        )


class PromptJudge(RangeJudge):
    """A judge defined by an evaluator YAML prompt; `threshold` is on the 0..1 scale."""

    def __init__(
        self,
        *,
        name: str,
        definition: PromptDefinition,
        threshold: float | None = None,
        options: dict[str, Any] | None = None,
        context: BuildContext | None = None,
    ) -> None:
        super().__init__(name=name, options=options, context=context)
        self.prompt = definition.prompt
        self.lo = definition.score_range.min
        self.hi = definition.score_range.max
        self.default_threshold = DEFAULT_THRESHOLD if threshold is None else threshold

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        from jinja2 import TemplateError  # loaded by the first prompt judged (see templates.py)

        try:
            messages = render_user_template(
                self.prompt.rstrip() + "\n\n" + self.footer(), data=sample_texts(sample)
            )
        except TemplateError as exc:
            return EvalResult.failed_to_evaluate(
                self.name,
                "promptRenderFailed",
                f"{self.name}: the judge prompt failed to render: {exc}",
            )
        outcome = await self.ask(sample, messages)
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=self.model)
        score = float(outcome.value.score)
        normalized = (score - self.lo) / (self.hi - self.lo)
        t = self.threshold_for(sample)
        t = DEFAULT_THRESHOLD if t is None else t
        return verdict(
            self.name,
            score=score,
            normalized=normalized,
            threshold=self.lo + t * (self.hi - self.lo),
            reason=outcome.value.reason.strip(),
            details={
                "score_range": [self.lo, self.hi],
                "judge_model": self.model,
                "attempts": outcome.attempts,
            },
            is_pass=normalized >= t,
            cost=outcome.cost,
        )

"""Rubric evaluators (evaluators.md §4): one judge call scores every dimension 1–5 and says
whether it applies; the score is the weighted mean of the applicable ones, normalized to 0..1."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, field_validator

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.files.rubric import RubricDimension
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import BuildContext, EvalSample
from agentopt.evaluators.judges.judge_base import (
    JudgeEvaluator,
    reject_bool,
    sample_texts,
    scope_params,
    scoped,
)
from agentopt.evaluators.judges.judge_call import call_judge, entries_schema, named_entries
from agentopt.evaluators.judges.parsing import entries_problem
from agentopt.evaluators.judges.prompting import render_messages

DEFAULT_THRESHOLD = 0.5
EXAMPLE = (
    '{"dimensions": [{"id": "<dimension id>", "applicable": true, "score": <integer 1-5>, '
    '"reason": "<one sentence>"}]}'
)
SCHEMA = entries_schema(
    "dimensions",
    {
        "id": {"type": "string"},
        "applicable": {"type": "boolean"},
        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        "reason": {"type": "string"},
    },
)


def schema_for(ids: list[str], *, exact_count: bool = False) -> dict[str, Any]:
    """SCHEMA with `id` restricted to this rubric's ids (`named_entries`)."""
    return named_entries(SCHEMA, "dimensions", "id", ids, exact_count=exact_count)


class DimensionReply(LazyModel):
    """The judge's view of one dimension."""

    model_config = ConfigDict(extra="ignore")

    id: str
    """The dimension id, as given in the prompt."""
    applicable: bool = True
    """Whether the dimension applies to this query and response."""
    score: int = Field(ge=1, le=5)
    """1–5."""
    reason: str = ""
    """One sentence."""

    _no_bool = field_validator("score", mode="before")(reject_bool)


class RubricReply(LazyModel):
    """The rubric judge's reply."""

    model_config = ConfigDict(extra="ignore")

    dimensions: list[DimensionReply] = Field(min_length=1)
    """One entry per rubric dimension."""


class DimensionScore(LazyModel):
    """One row of `details.dimension_scores`."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """The dimension id."""
    score: int
    """1–5, as the judge gave it."""
    applicable: bool
    """After forcing `always_applicable` dimensions to apply."""
    weight: int
    """The dimension's weight (1–10)."""
    reason: str
    """The judge's one-sentence reason."""


def rubric_score(
    dimensions: list[RubricDimension], replies: dict[str, DimensionReply]
) -> tuple[float | None, list[DimensionScore]]:
    """(normalized score or None when nothing applies, per-dimension rows).

    Score = (weighted mean of applicable 1–5 scores − 1) / 4.
    """
    rows = [
        DimensionScore(
            id=d.id,
            score=replies[d.id].score,
            applicable=d.always_applicable or replies[d.id].applicable,
            weight=d.weight,
            reason=replies[d.id].reason.strip(),
        )
        for d in dimensions
    ]
    applicable = [r for r in rows if r.applicable]
    if not applicable:
        return None, rows
    total = sum(r.weight for r in applicable)
    wmean = sum(r.score * r.weight for r in applicable) / total
    return (wmean - 1.0) / 4.0, rows


class RubricEvaluator(JudgeEvaluator):
    """A named rubric (from rubric_dimensions.json or a `type: rubric` evaluator YAML)."""

    default_threshold = DEFAULT_THRESHOLD

    def __init__(
        self,
        *,
        name: str,
        dimensions: list[RubricDimension],
        threshold: float | None = None,
        options: dict[str, Any] | None = None,
        context: BuildContext | None = None,
    ) -> None:
        super().__init__(name=name, options=options, context=context)
        self.dimensions = dimensions
        if threshold is not None:
            self.default_threshold = threshold

    def _check(self, reply: RubricReply) -> str | None:
        return entries_problem(
            [d.id.strip() for d in reply.dimensions], [d.id for d in self.dimensions], "dimensions"
        )

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        texts = sample_texts(sample)
        data = {k: texts[k] for k in ("query", "response", "history", "ground_truth", "tool_calls")}
        data["query"] = data["query"] or "(no query)"
        params = {"dimensions": self.dimensions, **scope_params(sample)}
        outcome = await call_judge(
            self.layer,
            self.model,
            render_messages("rubric.j2", data=scoped(sample, data), params=params),
            schema_name="rubric",
            schema=schema_for([d.id for d in self.dimensions], exact_count=self.grammar_decoded),
            reply_model=RubricReply,
            example=EXAMPLE,
            check=self._check,
            repeat=sample.repeat,
        )
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=self.model)
        replies = {d.id.strip(): d for d in outcome.value.dimensions}
        score, rows = rubric_score(self.dimensions, replies)
        details = {"dimension_scores": [r.model_dump() for r in rows]}
        if score is None:
            return EvalResult.failed_to_evaluate(
                self.name,
                "noApplicableDimension",
                f"{self.name}: the judge found no rubric dimension applicable to this response",
                details={**details, "judge_model": self.model, "attempts": outcome.attempts},
                cost=outcome.cost,
            )
        threshold = self.threshold_for(sample)
        weak = sorted((r for r in rows if r.applicable), key=lambda r: (r.score, -r.weight))[:2]
        reason = f"Rubric score {score:.2f}. " + " ".join(
            f"{r.id} {r.score}/5: {r.reason}" for r in weak
        )
        return self.judged(
            outcome,
            score,
            threshold,
            normalized=score,
            reason=reason.strip(),
            details=details,
        )

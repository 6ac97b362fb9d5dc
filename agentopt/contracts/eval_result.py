"""The one result model every evaluator returns (evaluators.md §1)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from agentopt.contracts.record import Record

Status = Literal["pass", "fail", "error"]


class EvalCost(Record):
    """Judge tokens and dollars spent on this verdict (0 for deterministic evaluators)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class EvalError(Record):
    """Why an evaluator could not produce a verdict. `code` is stable (used in counts)."""

    code: str
    """e.g. missingInput, judgeUnavailable, judgeParseFailed, evaluatorCrashed."""
    message: str


class EvalResult(Record):
    """One evaluator's verdict on one task or turn (one repeat).

    Tri-state: an evaluator that cannot decide returns status "error" with `error` set and
    no score — an error is never a score, a pass or a NaN.
    """

    evaluator: str
    """Canonical name, e.g. builtin.relevance, or the custom/rubric evaluator's name."""
    status: Status
    score: float | None = None
    """Native scale (1–5, 0..1, bool as 0/1, counts)."""
    normalized: float | None = None
    """0..1, comparable across evaluators."""
    threshold: float | None = None
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    """Evaluator-specific extras: criterion `verdicts`, rubric `dimension_scores`, ..."""
    error: EvalError | None = None
    cost: EvalCost = Field(default_factory=EvalCost)

    @model_validator(mode="after")
    def _tri_state(self) -> EvalResult:
        if self.status == "error":
            if self.error is None:
                raise ValueError("an error result needs `error`")
            if self.score is not None or self.normalized is not None:
                raise ValueError("an error result carries no score")
        return self

    @classmethod
    def failed_to_evaluate(cls, evaluator: str, code: str, message: str, **kw: Any) -> EvalResult:
        """Shorthand for an error result."""
        return cls(
            evaluator=evaluator, status="error", error=EvalError(code=code, message=message), **kw
        )

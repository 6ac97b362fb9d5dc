"""builtin.latency and builtin.token_budget: checks on what the run measured, not its text."""

from __future__ import annotations

from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import (
    EvalSample,
    EvaluatorBase,
    missing_input,
    option_error,
    pass_fail,
)
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator


class _LimitCheck(EvaluatorBase):
    """Pass when the measured value is at most the configured limit (lower is better)."""

    limit_key = ""
    unit = ""
    measured_what = ""

    def check_options(self, options: dict[str, Any]) -> None:
        self._limit(options)

    def _limit(self, opts: dict[str, Any]) -> float:
        value = opts.get(self.limit_key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise option_error(self.name, self.limit_key, "a positive number", value)
        return float(value)

    def measured(self, sample: EvalSample) -> float | None:
        raise NotImplementedError

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        limit = self._limit(self.options_for(sample))
        value = self.measured(sample)
        if value is None:
            return missing_input(self.name, f"the measured {self.measured_what}")
        ok = value <= limit
        rel = "within" if ok else "over"
        return pass_fail(
            self.name,
            ok,
            reason=f"{self.measured_what.capitalize()} {value:g}{self.unit} is {rel} the limit "
            f"of {limit:g}{self.unit}.",
            details={"measured": value, self.limit_key: limit},
        )


class LatencyOptions(EvaluatorOptions):
    max_seconds: Any = None
    """The limit, a positive number of seconds (checked when built)."""


class TokenBudgetOptions(EvaluatorOptions):
    max_tokens: Any = None
    """The limit, a positive number of tokens (checked when built)."""


@evaluator("builtin.latency", needs=("latency_s",), options=LatencyOptions)
class Latency(_LimitCheck):
    """The agent answered within `max_seconds`."""

    limit_key = "max_seconds"
    unit = " s"
    measured_what = "latency"

    def measured(self, sample: EvalSample) -> float | None:
        return None if sample.latency_s is None else round(sample.latency_s, 3)


@evaluator("builtin.token_budget", needs=("tokens",), options=TokenBudgetOptions)
class TokenBudget(_LimitCheck):
    """The agent spent at most `max_tokens` tokens on the turn."""

    limit_key = "max_tokens"
    unit = " tokens"
    measured_what = "token use"

    def measured(self, sample: EvalSample) -> float | None:
        return None if sample.tokens is None else float(sample.tokens)

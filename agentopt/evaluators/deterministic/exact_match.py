"""builtin.exact_match (M365 `ExactMatch`): the response equals the expected answer."""

from __future__ import annotations

from typing import Literal

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import EvalSample, EvaluatorBase, missing_input, pass_fail
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator


class ExactMatchOptions(EvaluatorOptions):
    mode: Literal["exact", "contains"] = "exact"
    """exact: the whole response; contains: the expected text anywhere in it."""
    case_sensitive: bool = False


@evaluator(
    "builtin.exact_match", m365=True, needs=("response", "ground_truth"), options=ExactMatchOptions
)
class ExactMatch(EvaluatorBase):
    """Response equals the ground truth (trimmed; case-insensitive by default).

    `case_sensitive: true` compares case too; `mode: contains` passes when the expected text
    occurs anywhere in the response — the usual need when the agent wraps a short answer ("The
    answer is 4.").
    """

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        opts = self.options_for(sample)
        mode = opts.get("mode", "exact")
        expected = (sample.ground_truth or "").strip()
        if not expected:
            return missing_input(self.name, "a ground truth (expected_response)")
        response = sample.response.strip()
        if not opts.get("case_sensitive", False):
            expected, response = expected.casefold(), response.casefold()
        match = expected in response if mode == "contains" else expected == response
        if match:
            reason = (
                "The response contains the expected text."
                if mode == "contains"
                else ("The response matches the expected response.")
            )
        else:
            reason = (
                "The expected text does not occur in the response."
                if mode == "contains"
                else "The response does not match the expected response."
            )
        return pass_fail(self.name, match, reason=reason, details={"match": match, "mode": mode})

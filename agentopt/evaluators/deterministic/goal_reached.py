"""builtin.goal_reached: did the simulated user reach its goal, and in how many turns.

The verdict is the simulated user's own (its structured reply after each agent turn), read
from how the conversation ended; this evaluator makes it a result like any other, so it is
counted per evaluator, gated on and shown in reports. `details.turns_to_goal` is the number of
agent turns it took. A conversation the simulated user could not finish (no usable reply) is
an error, never a fail.
"""

from __future__ import annotations

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.simulation import SIMULATOR_FAILED
from agentopt.evaluators.base import EvalSample, EvaluatorBase, missing_input, pass_fail
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

_FAILED = {
    "abandoned": "The simulated user gave up",
    "max_turns": "The goal was not reached within",
}


@evaluator("builtin.goal_reached", needs=("simulation",), options=EvaluatorOptions)
class GoalReached(EvaluatorBase):
    """The simulated user reached its goal (and in how many turns)."""

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        end = sample.simulation
        if end is None:
            return missing_input(self.name, "a conversation played by a simulated user")
        if end.reason in ("simulator_error", "agent_error"):
            return EvalResult.failed_to_evaluate(
                self.name,
                SIMULATOR_FAILED if end.reason == "simulator_error" else "agentRequestFailed",
                f"the conversation did not finish: {end.explanation}",
            )
        details = {
            "turns_to_goal": end.turns_to_goal,
            "turns": end.turns,
            "desired_num_turns": end.desired_num_turns,
            "end": end.reason,
        }
        said = f" ({end.explanation})" if end.explanation else ""
        if end.goal_reached:
            reason = f"Goal reached in {end.turns} of at most {end.desired_num_turns} turns{said}."
        elif end.reason == "abandoned":
            reason = f"{_FAILED['abandoned']} after {end.turns} turns{said}."
        else:
            reason = f"{_FAILED['max_turns']} {end.desired_num_turns} turns{said}."
        return pass_fail(self.name, end.goal_reached, reason=reason, details=details)

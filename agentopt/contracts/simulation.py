"""Simulated conversations: the simulated user's reply after each agent turn (`UserReply`)
and how a conversation ended (`SimulationEnd`).

The simulated user (`workflows/run/simulated_user.py`) answers every agent turn with a
structured reply, so its stop signal is a field, never a guess from free text. Both records
are saved: the reply in the run's `turns.jsonl` (a resumed conversation does not ask again),
the end in the task's record.
"""

from __future__ import annotations

from typing import Literal

from agentopt.contracts.record import Record

UserAction = Literal["continue", "goal_reached", "abandoned"]
SIMULATOR_FAILED = "simulatorFailed"
"""The error code of a conversation the simulated user could not go on with (no usable reply
after re-asking): the unit's last turn carries it, so the unit is an error, never a score."""


class UserReply(Record):
    """The simulated user's structured reply after an agent turn."""

    reason: str = ""
    """Why it continues or stops (kept in the record, shown to the optimizer)."""
    action: UserAction
    """continue: `message` is the next user turn; goal_reached / abandoned: it stops."""
    message: str = ""
    """The next user message (ignored when it stops)."""


EndReason = Literal["goal_reached", "abandoned", "max_turns", "agent_error", "simulator_error"]


class SimulationEnd(Record):
    """How one simulated conversation ended (saved in the run's records)."""

    reason: EndReason
    """goal_reached / abandoned (the simulated user said so), max_turns (desired_num_turns
    agent turns were played without either), agent_error (an agent turn failed),
    simulator_error (the simulated user gave no usable reply)."""
    turns: int
    """Agent turns played."""
    desired_num_turns: int
    """The most agent turns the conversation could have had."""
    explanation: str = ""
    """The simulated user's last reason, or the simulator's error message."""

    @property
    def goal_reached(self) -> bool:
        return self.reason == "goal_reached"

    @property
    def turns_to_goal(self) -> int | None:
        """Agent turns it took to reach the goal (None when it was not reached)."""
        return self.turns if self.goal_reached else None

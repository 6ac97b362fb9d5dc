"""The simulated-user fields of a Foundry task record: the goal's names, `desired_num_turns`
and Foundry's per-test-case `simulation_configuration` (files.md §4.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentopt.contracts.task_limits import MAX_TURNS
from agentopt.datasets.problems import describe, join_path

if TYPE_CHECKING:
    from agentopt.datasets.record_context import RecordContext

GOAL_KEYS = ("goal", "test_case_description")
"""The simulated user's goal; Foundry's simulation datasets call it `test_case_description`
("scenario, simulated user goal, and behavioral constraints")."""
SIMULATION_KEYS = ("desired_num_turns", "max_num_turns")
"""The keys of Foundry's `simulation_configuration` agentopt acts on (desired_num_turns is
the conversation's cap here; max_num_turns is read as the cap when desired_num_turns is absent)."""


def desired_turns(value: Any, path: str, ctx: RecordContext) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TURNS:
        ctx.error(path, f"expected a whole number from 1 to {MAX_TURNS}, found {describe(value)}")
        return None
    return value


def simulation_configuration(value: Any, ctx: RecordContext) -> int | None:
    """Foundry's per-test-case `simulation_configuration`: the conversation's cap, from
    `desired_num_turns` (else `max_num_turns`). Its other keys (conversation_repetitions,
    audio_effects, user_behavior) are not acted on, and the warning names each."""
    if value is None:
        return None
    path = "simulation_configuration"
    if not isinstance(value, dict):
        ctx.error(path, f"expected an object, found {describe(value)}")
        return None
    for key in value:
        if key not in SIMULATION_KEYS:
            ctx.warn(
                join_path(path, key),
                "not supported by agentopt's simulated user: ignored"
                + (" (use --repeat for repetitions)" if key == "conversation_repetitions" else ""),
            )
    desired = desired_turns(
        value.get("desired_num_turns"), join_path(path, "desired_num_turns"), ctx
    )
    cap = desired_turns(value.get("max_num_turns"), join_path(path, "max_num_turns"), ctx)
    return desired if desired is not None else cap

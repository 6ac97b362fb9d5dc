"""The simulated user: an LLM that plays a task's persona and goal against the agent, one
message at a time, and says when the goal is reached or abandoned.

Which tasks it plays (`Simulation.plays`): a task without scripted `turns` that asks for it (a
`persona`, `goal`, `stop_when` or `desired_num_turns`), and every such task when the suite is
scored per conversation (`options.evaluation_level: conversation`). The task's `query` opens
the conversation (no query: the simulated user writes the opening too); after each agent turn
the simulated user answers with a structured reply — `{"reason", "action", "message"}` — so the
stop signal is a field, never a guess from free text. It is asked after the last allowed turn
as well, so a goal reached on that turn counts as reached.

The calls are structured-output calls through the call layer, the same path judges take
(`call_judge`: JSON schema, re-asks on an unusable reply), in the call layer's `simulator`
pool. They are seeded (the run's seed plus the repeat) and cached like every call, so an
unchanged rerun replays the same conversations with no call. A simulated user that gives no
usable reply ends the conversation with `simulator_error`: an error, never a score.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentopt.contracts.simulation import EndReason, SimulationEnd, UserReply
from agentopt.contracts.task import MAX_TURNS, Task
from agentopt.contracts.transcript import TurnResult
from agentopt.core.files.eval_yaml import Options
from agentopt.models.call import CallLayer
from agentopt.models.types import Message

EvaluationLevel = Literal["item", "conversation"]
DEFAULT_DESIRED_TURNS = 5
"""Most agent turns of a simulated conversation when neither the task nor eval.yaml says."""
DEFAULT_GOAL = "Get a complete and correct answer to what you asked in your first message."
"""The goal of a task that has none (its query is the whole request)."""
SIMULATOR_TEMPERATURE = 0.7
"""Users vary; the seed (and the cache) keep each conversation reproducible."""

ReplyHook = Callable[[int, UserReply], Awaitable[None]]
"""Told of the simulated user's reply after turn n (the run journals it)."""
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "action": {"type": "string", "enum": ["continue", "goal_reached", "abandoned"]},
        "message": {"type": "string"},
    },
    "required": ["reason", "action", "message"],
    "additionalProperties": False,
}
REPLY_EXAMPLE = (
    '{"reason": "<one sentence on why>", "action": "<continue, goal_reached or abandoned>", '
    '"message": "<your next message; empty when you stop>"}'
)


@dataclass(frozen=True)
class Simulation:
    """How a suite plays simulated users: plain values, so a unit played in another process
    builds the same simulated user."""

    model: str
    """The simulator model (`options.simulator_model`, default the eval model)."""
    level: EvaluationLevel = "item"
    """`options.evaluation_level` (None in eval.yaml = item)."""
    default_turns: int = DEFAULT_DESIRED_TURNS
    """`options.desired_num_turns`: the cap of a task that sets none."""
    seed: int = 0
    """The run's seed."""
    users: bool = True
    """False when no agent is asked (`--evaluate-only` scores captured answers): no task is
    played by a simulated user, whatever it asks for."""

    def plays(self, task: Task) -> bool:
        """Whether `task` is a simulated conversation (see the module docstring)."""
        if task.is_multi_turn or not self.users:
            return False
        asked = task.has_user_profile or task.desired_num_turns is not None
        return asked or self.level == "conversation" or not task.query

    def turns_for(self, task: Task) -> int:
        """The most agent turns of `task`'s conversation (capped at 20)."""
        return min(task.desired_num_turns or self.default_turns, MAX_TURNS)


def simulation_of(options: Options | None, eval_model: str, seed: int) -> Simulation:
    """The suite's simulation settings from eval.yaml `options` (one owner for all three
    keys: `simulator_model`, `evaluation_level`, `desired_num_turns`)."""
    o = options or Options()
    return Simulation(
        model=o.simulator_model or eval_model,
        level=o.evaluation_level or "item",
        default_turns=o.desired_num_turns or DEFAULT_DESIRED_TURNS,
        seed=seed,
    )


class SimulatedUser:
    """Plays one (task, repeat): implements `agents.UserSimulator` and remembers how the
    conversation ended (`end`). Replies given in an earlier session (`known`: after turn n →
    reply) are used again, not asked for; each new reply is told to `on_reply`."""

    def __init__(
        self,
        layer: CallLayer,
        simulation: Simulation,
        task: Task,
        repeat: int,
        *,
        known: Mapping[int, UserReply] | None = None,
        on_reply: ReplyHook | None = None,
    ) -> None:
        self.layer = layer
        self.simulation = simulation
        self.task = task
        self.repeat = repeat
        self.max_turns = simulation.turns_for(task)
        self.known = dict(known or {})
        self.on_reply = on_reply
        self.last: UserReply | None = None
        self.failure: str | None = None

    async def next_message(self, turns: Sequence[TurnResult]) -> str | None:
        """The next user message, or None when the user stops, the turns are used up, or the
        simulator gave no usable reply."""
        reply = await self._ask(turns)
        if reply is None or reply.action != "continue" or len(turns) >= self.max_turns:
            return None
        return reply.message.strip()

    def end(self, turns: Sequence[TurnResult]) -> SimulationEnd:
        """How the conversation of `turns` ended."""
        played = len(turns)
        reason: EndReason
        if turns and turns[-1].error is not None:
            reason, why = "agent_error", turns[-1].error.message
        elif self.failure is not None:
            reason, why = "simulator_error", self.failure
        elif self.last is not None and self.last.action != "continue":
            reason, why = self.last.action, self.last.reason
        else:
            reason, why = "max_turns", self.last.reason if self.last else ""
        return SimulationEnd(
            reason=reason,
            turns=played,
            desired_num_turns=self.max_turns,
            explanation=why.strip(),
        )

    async def _ask(self, turns: Sequence[TurnResult]) -> UserReply | None:
        known = self.known.pop(len(turns), None)
        if known is not None:
            self.last = known
            return known
        opening = not turns

        def check(reply: UserReply) -> str | None:
            if reply.action == "continue" and not reply.message.strip():
                return 'action "continue" needs the next message in "message"'
            if opening and reply.action != "continue":
                return 'the conversation has not started: the action must be "continue"'
            return None

        from agentopt.evaluators.judges.judge_call import call_judge  # see render()

        outcome = await call_judge(  # the structured-output path judges take (the ladder, bounds)
            self.layer,
            self.simulation.model,
            self.messages(turns),
            schema_name="simulated_user",
            schema=REPLY_SCHEMA,
            reply_model=UserReply,
            example=REPLY_EXAMPLE,
            check=check,
            repeat=self.repeat,
            pool="simulator",
            role="simulated user",
            seed=self.simulation.seed + self.repeat,
            temperature=SIMULATOR_TEMPERATURE,
        )
        if outcome.value is None:
            assert outcome.error is not None
            self.failure = outcome.error.message
            return None
        self.last = outcome.value
        if self.on_reply is not None:
            await self.on_reply(len(turns), outcome.value)
        return outcome.value

    def messages(self, turns: Sequence[TurnResult]) -> list[Message]:
        """The simulator's prompt: who it plays and the conversation so far, as data."""
        task = self.task
        data = {
            "persona": task.persona,
            "goal": task.goal or DEFAULT_GOAL,
            "stop_when": task.stop_when,
            "conversation": format_conversation(turns) if turns else None,
        }
        return render(data)


def format_conversation(turns: Sequence[TurnResult]) -> str:
    """The exchanges as the user saw them: what they wrote and what the agent answered."""
    lines = []
    for n, turn in enumerate(turns, start=1):
        lines.append(f"[turn {n}] User: {turn.query}\n[turn {n}] Agent: {turn.response}")
    return "\n".join(lines)


def render(data: Mapping[str, str | None]) -> list[Message]:
    """System + user messages from `templates/simulator/`, every text fenced as data."""
    # Imported here: jinja2 and the judge path load only when a user is simulated.
    from agentopt.core.templates import prompt_environment
    from agentopt.evaluators.judges.prompting import DataBlocks, make_boundary

    values = {k: v for k, v in data.items() if v}
    blocks = DataBlocks(values=values, boundary=make_boundary(values))
    env = prompt_environment("simulator")
    context = {"block": blocks, "has": blocks.has, "boundary": blocks.boundary}
    system = env.get_template("_system.j2").render(**context).strip()
    user = env.get_template("user.j2").render(**context).strip()
    return [Message(role="system", content=system), Message(role="user", content=user)]

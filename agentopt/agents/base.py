"""The one interface every agent target implements, and the registry that builds them by name.

A target turns a task (a list of user turns) into a `Transcript`. The evaluators never know
which target produced it. Built-in targets register through `@register_target` exactly as a
plugin would (from a module named by an `agentopt.targets` entry point), so a new target is one
new file (style.md rules 2 and 11).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import ConfigDict, Field

from agentopt.agents.hosted_protocol import hosted_protocol
from agentopt.agents.start_command import missing_start_hint
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.eval_yaml import BUILTIN_TARGETS
from agentopt.core.lazy_model import LazyModel
from agentopt.core.plugins import TARGETS_GROUP, PluginRegistry
from agentopt.models.call import CallLayer

DEFAULT_TURN_TIMEOUT_S = 120.0

TurnHook = Callable[[int, TurnResult], Awaitable[None]]
"""Called with (turn number, answered turn) after each answered turn of a simulated
conversation."""


@runtime_checkable
class UserSimulator(Protocol):
    """The user of a simulated conversation: writes each next message from the conversation
    so far, or ends it. One per (task, repeat); the run engine builds it."""

    async def next_message(self, turns: Sequence[TurnResult]) -> str | None:
        """The user's next message after `turns` (none yet: the opening message, for a task
        without a query), or None when the conversation is over."""
        ...


class RunConfig(LazyModel):
    """How one task is run: passed to every `AgentTarget.run` call."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    calls: CallLayer | None = None
    """The call layer for model calls (required by the `local` target)."""
    repeat: int = 0
    """Repeat index of this run (part of the model-call cache key)."""
    turn_timeout_s: float = DEFAULT_TURN_TIMEOUT_S
    """Per-turn deadline; exceeding it records a `timeout` turn error."""
    real_tools: bool | None = False
    """None (the `eval run` default): mocks first, then Python tools, then MCP servers (the
    precedence of agents.md). False (the optimize default): only tool mocks answer, so
    nothing real fires. True (`--real-tools`): mocks are skipped."""
    candidate_id: str = "baseline"
    """Which candidate configuration is being run (passed to hosted agents)."""
    cancel: asyncio.Event | None = Field(default=None, exclude=True)
    """Set it to stop cooperatively: the turn in flight is abandoned and `run` raises
    `agentopt.core.errors.Interrupted`."""
    user: UserSimulator | None = Field(default=None, exclude=True)
    """A simulated user: the task's query opens the conversation and the user writes the
    turns after it (None: the task's scripted turns are sent)."""
    played: list[TurnResult] = Field(default_factory=list)
    """Turns of this simulated conversation answered in an earlier session (`--resume`):
    restored into the target rather than sent again, when the target can restore them."""
    on_turn: TurnHook | None = Field(default=None, exclude=True)
    """Told of each answered turn of a simulated conversation (the run journals it)."""


@runtime_checkable
class AgentTarget(Protocol):
    """Runs tasks against one agent configuration.

    `run` is the extension point; `aclose` releases what the target started (processes, MCP
    servers, HTTP clients) and is safe to call more than once.
    """

    name: str

    async def run(self, task: Task, config: RunConfig) -> Transcript: ...

    async def aclose(self) -> None: ...


def definition_transcript(
    turns: list[TurnResult], target: str, definition: AgentDefinition, *, model: str | None = None
) -> Transcript:
    """The transcript of a target that runs the definition as written (everything but
    `local`, which builds its own prompt and tools): the evaluators see the definition's tools
    and instructions, and its model unless the target was told another (`model`)."""
    return Transcript(
        turns=turns,
        target=target,
        model=(definition.model or "") if model is None else model,
        tool_definitions=definition.tools,
        system_prompt=definition.instructions,
    )


TargetFactory = Callable[..., AgentTarget]
F = TypeVar("F", bound=Callable[..., Any])

TARGETS: PluginRegistry[TargetFactory] = PluginRegistry(
    "agent target", TARGETS_GROUP, ("agentopt.agents",)
)


def register_target(name: str) -> Callable[[F], F]:
    """Class decorator: make `make_target(name, ...)` build this target.

    The factory is called as `factory(definition, **options)`.
    """

    def decorate(factory: F) -> F:
        TARGETS.add(name, factory)
        return factory

    return decorate


def target_names() -> list[str]:
    """Every known target name: the built-ins in the order eval.yaml documents, then plugins."""
    names = TARGETS.names()
    return [*(n for n in BUILTIN_TARGETS if n in names), *sorted(set(names) - set(BUILTIN_TARGETS))]


def make_target(name: str | None, definition: AgentDefinition, **options: Any) -> AgentTarget:
    """Build the target called `name` for `definition` (None = decide, see `default_target`).

    Options are passed to the target's constructor, e.g. `model=...`.
    An unknown name raises `ConfigError` listing the valid ones.
    """
    chosen = name or default_target(definition)
    factory = TARGETS.get(chosen)
    if factory is None:
        raise ConfigError.at(
            "",
            "agent.target",
            f"unknown agent target '{chosen}'; expected one of: {', '.join(target_names())}",
        )
    return factory(definition, **options)


def default_target(definition: AgentDefinition) -> str:
    """The target to use when none is named (agents.md): the definition's own `target`, else
    `hosted` for a hosted agent with a start command, `local` when there are instructions,
    else `endpoint`, `command` or `foundry` depending on what is configured."""
    if definition.target:
        return definition.target
    if definition.kind == "hosted" and definition.startup_command:
        return "hosted"
    if definition.instructions:
        return "local"
    if definition.endpoint:
        return "endpoint"
    if definition.command:
        return "command"
    if definition.deployed_name and definition.project_endpoint:
        return "foundry"
    if definition.kind == "hosted":
        # The fix `eval init` shows in its target block (a C# agent without the .NET SDK, a
        # Python one without an entry point), not a generic "cannot tell"; a protocol agentopt
        # cannot play (activity…) is said first, since a start command would not help.
        hosted_protocol(definition)
        raise ConfigError(
            f"cannot start hosted agent '{definition.name}': it has no start command",
            hint=missing_start_hint(definition),
        )
    raise ConfigError.at(
        definition.source.split(" ")[0],  # the file it came from ("eval.yaml agent:")
        "agent",
        f"cannot tell how to run agent '{definition.name}': it has no instructions, endpoint, "
        "command or deployed name",
    )

"""agentopt.agents — running the agent under test (agents.md).

`make_target(name, definition)` builds a target (`local`, `hosted`, `endpoint`, `command`,
`foundry`); `await target.run(task, RunConfig(...))` returns a `Transcript`; `await
target.aclose()` stops whatever the target started. Target modules are imported on first use,
so importing this package stays light.
"""

from agentopt.agents.base import (
    DEFAULT_TURN_TIMEOUT_S,
    AgentTarget,
    RunConfig,
    default_target,
    make_target,
    register_target,
    target_names,
)
from agentopt.agents.conversation import (
    AGENT_REQUEST_FAILED,
    TIMEOUT,
    TOOL_ROUNDS_EXCEEDED,
    TURN_SKIPPED,
    TurnFailed,
    run_turns,
)
from agentopt.agents.tools.mocks import ToolMocks
from agentopt.contracts.transcript import (
    Citation,
    ToolCallRecord,
    Transcript,
    TurnError,
    TurnResult,
)

__all__ = [
    "AGENT_REQUEST_FAILED",
    "DEFAULT_TURN_TIMEOUT_S",
    "TIMEOUT",
    "TOOL_ROUNDS_EXCEEDED",
    "TURN_SKIPPED",
    "AgentTarget",
    "Citation",
    "RunConfig",
    "ToolCallRecord",
    "ToolMocks",
    "Transcript",
    "TurnError",
    "TurnFailed",
    "TurnResult",
    "default_target",
    "make_target",
    "register_target",
    "run_turns",
    "target_names",
]

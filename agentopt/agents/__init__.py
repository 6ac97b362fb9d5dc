"""agentopt.agents — running the agent under test (agents.md).

`make_target(name, definition)` builds a target (`local`, `hosted`, `endpoint`, `command`,
`foundry`); `await target.run(task, RunConfig(...))` returns a `Transcript`; `await
target.aclose()` stops whatever the target started. Target modules are imported on first use,
so importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
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
    from agentopt.contracts import Citation, ToolCallRecord, Transcript, TurnError, TurnResult

_HOMES = {
    "DEFAULT_TURN_TIMEOUT_S": "agentopt.agents.base",
    "AgentTarget": "agentopt.agents.base",
    "RunConfig": "agentopt.agents.base",
    "default_target": "agentopt.agents.base",
    "make_target": "agentopt.agents.base",
    "register_target": "agentopt.agents.base",
    "target_names": "agentopt.agents.base",
    "AGENT_REQUEST_FAILED": "agentopt.agents.conversation",
    "TIMEOUT": "agentopt.agents.conversation",
    "TOOL_ROUNDS_EXCEEDED": "agentopt.agents.conversation",
    "TURN_SKIPPED": "agentopt.agents.conversation",
    "TurnFailed": "agentopt.agents.conversation",
    "run_turns": "agentopt.agents.conversation",
    "ToolMocks": "agentopt.agents.tools.mocks",
    # The records: from the contracts package, which alone says where each lives.
    "Citation": "agentopt.contracts",
    "ToolCallRecord": "agentopt.contracts",
    "Transcript": "agentopt.contracts",
    "TurnError": "agentopt.contracts",
    "TurnResult": "agentopt.contracts",
}

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

__getattr__ = lazy_exports(__name__, _HOMES)

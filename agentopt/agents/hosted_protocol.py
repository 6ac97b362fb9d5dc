"""Which protocol agentopt speaks to a hosted agent, from the `protocols:` it declares.

azd's `invoke` needs exactly one invocable protocol (`protocolFromContainerAgent`, helpers.go)
and asks for `--protocol` otherwise; agentopt has no per-call choice to make, so it takes
`responses` when declared (Responses carries multi-turn context, tool calls and usage), else
`invocations`. An agent declaring neither is refused before anything starts, with the protocol
named and what works instead. No declaration at all is `responses`, the older samples' only
protocol.
"""

from __future__ import annotations

from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition

PLAYABLE = ("responses", "invocations")
_WHY = {
    "activity": "Bot Framework activities for Teams and Microsoft 365 channels, which need a "
    "channel conversation agentopt cannot hold",
    "invocations_ws": "a WebSocket session with no request/answer framing agentopt can score",
    "a2a": "agent-to-agent JSON-RPC, which agentopt does not play",
}
_INSTEAD = {
    "activity": "serve the responses or invocations protocol beside it "
    "(azure-ai-agentserver-responses / -invocations host both in one process) and add it to "
    "`protocols:`, or point `agent.endpoint` at a Responses or chat-completions endpoint",
    "invocations_ws": "serve HTTP `invocations` as well (InvocationAgentServerHost serves "
    "`/invocations` and `/invocations_ws` from one host) and add it to `protocols:`",
}


def hosted_protocol(defn: AgentDefinition) -> str:
    """`responses` or `invocations`; a `ConfigError` naming the protocol otherwise."""
    declared = list(defn.protocols)
    for name in PLAYABLE:
        if name in declared or (not declared and name == "responses"):
            return name
    names = ", ".join(declared)
    first = declared[0]
    why = _WHY.get(first, "a protocol agentopt does not speak")
    return _refuse(
        f"hosted agent '{defn.name}' declares only the {names} protocol"
        f"{'s' if len(declared) > 1 else ''} ({why}); agentopt plays tasks through "
        "responses or invocations",
        _INSTEAD.get(first, "add a `responses` or `invocations` protocol to the agent"),
    )


def _refuse(message: str, hint: str) -> str:
    raise ConfigError(message, hint=hint)

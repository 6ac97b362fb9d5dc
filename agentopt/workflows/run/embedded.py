"""How many agent runs to keep in flight when the agent plays on the embedded model.

The embedded model answers one request at a time. An in-process agent on it, run with the usual
8 tasks in flight, kept 7 of them waiting for the model inside their turn timeout: under load
they timed out (6 of 10 validation tasks of one optimize candidate at load 9), and a timeout is
an error, which made that candidate ineligible. So such an agent runs one task at a time — as
fast as before, since the model was the bottleneck — unless the user set a number
(`--concurrency`, eval.yaml `max_concurrent_agent_runs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.agents.base import default_target
from agentopt.core.files.agent_definition import AgentDefinition

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer


def plays_on_the_embedded_model(agent: AgentDefinition, layer: CallLayer) -> bool:
    """An in-process (`local` target) agent whose model resolves to the `local:` provider."""
    if agent.model is None or (agent.target or default_target(agent)) != "local":
        return False
    return layer.resolve(agent.model).type == "local"

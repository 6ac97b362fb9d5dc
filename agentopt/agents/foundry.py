"""`foundry` — a deployed Foundry agent, through `azure-ai-projects` (agents.md §5).

`AIProjectClient(endpoint, credential)` gives an OpenAI client pointed at the project's
`/openai/v1`; each turn is a Responses call naming the agent by reference
(`extra_body={"agent_reference": {"name", "version", "type": "agent_reference"}}`, the
shape azure-ai-projects 2.x documents), with `previous_response_id` for later turns.
The Azure SDK is imported only when this target is used.
"""

from __future__ import annotations

import contextlib
from typing import Any

from agentopt.agents.base import RunConfig, definition_transcript, register_target
from agentopt.agents.conversation import RestoreTurn, SendTurn, run_turns
from agentopt.agents.openai_wire import responses_sender
from agentopt.agents.retrying import DEFAULT_ATTEMPTS
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.agent_definition import AgentDefinition


def agent_reference(definition: AgentDefinition) -> dict[str, str]:
    """The Responses `agent_reference` body naming the deployed agent (and its version)."""
    reference = {"type": "agent_reference", "name": str(definition.deployed_name)}
    if definition.deployed_version:
        reference["version"] = str(definition.deployed_version)
    return reference


def _azure_transport() -> dict[str, Any]:
    """The async Azure client needs an HTTP transport; azure-core's default is aiohttp, which
    is an optional extra. Responses calls go through the OpenAI client (httpx) anyway, so
    without aiohttp the requests-based asyncio transport is a fine stand-in."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        from azure.core.pipeline.transport import AsyncioRequestsTransport

        return {"transport": AsyncioRequestsTransport()}
    return {}


@register_target("foundry")
class FoundryTarget:
    """Runs tasks against a deployed Foundry agent."""

    name = "foundry"

    def __init__(
        self,
        definition: AgentDefinition,
        *,
        credential: Any = None,
        retry_attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        """`credential`: an async Azure token credential; default `DefaultAzureCredential`."""
        problems = []
        if not definition.project_endpoint:
            problems.append(
                Problem(
                    "",
                    "--project-endpoint",
                    "the foundry target needs the project endpoint "
                    "(--project-endpoint or FOUNDRY_PROJECT_ENDPOINT)",
                )
            )
        if not definition.deployed_name:
            upper = definition.name.upper().replace("-", "_").replace(" ", "_")
            problems.append(
                Problem(
                    "",
                    f"AGENT_{upper}_NAME",
                    "the foundry target needs the deployed agent's name "
                    f"(AGENT_{upper}_NAME in the azd environment)",
                )
            )
        if problems:
            raise ConfigError(problems=problems)
        self.definition = definition
        self.reference = agent_reference(definition)
        self.retry_attempts = retry_attempts
        self._credential = credential
        self._owns_credential = credential is None
        self._project: Any = None
        self._client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            from azure.ai.projects.aio import AIProjectClient

            if self._credential is None:
                from azure.identity.aio import DefaultAzureCredential

                self._credential = DefaultAzureCredential()
            self._project = AIProjectClient(
                endpoint=str(self.definition.project_endpoint),
                credential=self._credential,
                **_azure_transport(),
            )
            self._client = self._project.get_openai_client(max_retries=0)
        return self._client

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        send, restore = self._sender(self._openai())
        turns = await run_turns(task, config, send, restore=restore)
        return definition_transcript(turns, self.name, self.definition)

    def _sender(self, client: Any) -> tuple[SendTurn, RestoreTurn]:
        return responses_sender(
            client,
            source=self.name,
            attempts=self.retry_attempts,
            extra_body={"agent_reference": self.reference},
        )

    async def aclose(self) -> None:
        client, self._client = self._client, None
        project, self._project = self._project, None
        for closable in (client, project):
            if closable is not None:
                with contextlib.suppress(Exception):
                    await closable.close()
        if self._owns_credential and self._credential is not None:
            credential, self._credential = self._credential, None
            with contextlib.suppress(Exception):
                await credential.close()

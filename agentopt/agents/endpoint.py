"""`endpoint` — an agent already running somewhere, spoken to over the Responses or the
chat-completions protocol with the `openai` client (agents.md §3).

Headers can come from environment variables (`headers_from_env`: header → variable); their
values are secrets: they are sent, and masked everywhere else.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from agentopt.agents.base import RunConfig, definition_transcript, register_target
from agentopt.agents.conversation import ChatHistory, RestoreTurn, SendTurn, run_turns
from agentopt.agents.openai_wire import (
    as_dict,
    responses_sender,
    turn_from_chat_completion,
)
from agentopt.agents.retrying import DEFAULT_ATTEMPTS, with_retries
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core import redaction
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.agent_definition import AgentDefinition


def headers_from_env(
    mapping: dict[str, str], where: str = "agent.headers_from_env"
) -> dict[str, str]:
    """Header values read from the environment; a variable that is not set is a ConfigError."""
    headers: dict[str, str] = {}
    problems = []
    for header, variable in mapping.items():
        value = os.environ.get(variable)
        if not value:
            message = f"environment variable {variable} (for header {header}) is not set"
            problems.append(Problem("", f"{where}.{header}", message))
            continue
        # One spelling, so it replaces the client's own Authorization header instead of
        # being sent beside it.
        headers["Authorization" if header.lower() == "authorization" else header] = value
    if problems:
        raise ConfigError(problems=problems)
    redaction.remember(headers.values())  # masked in every file and message from here on
    return headers


@register_target("endpoint")
class EndpointTarget:
    """Talks to `agent.endpoint` with `agent.protocol` (responses | chat_completions)."""

    name = "endpoint"

    def __init__(
        self,
        definition: AgentDefinition,
        *,
        model: str | None = None,
        retry_attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        if not definition.endpoint:
            raise ConfigError.at(
                "eval.yaml", "agent.endpoint", "the endpoint target needs agent.endpoint (a URL)"
            )
        self.definition = definition
        self.endpoint = definition.endpoint
        self.protocol = definition.protocol
        self.model = model or definition.model or definition.deployed_name or definition.name
        self.headers = headers_from_env(definition.headers_from_env)
        self.retry_attempts = retry_attempts
        self._client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.endpoint,
                api_key="unused",
                default_headers=self.headers or None,
                max_retries=0,
            )
        return self._client

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        client = self._openai()
        send, restore = (
            self._responses(client) if self.protocol == "responses" else self._chat(client)
        )
        turns = await run_turns(task, config, send, restore=restore, secrets=self.headers.values())
        return definition_transcript(turns, self.name, self.definition, model=self.model)

    def _responses(self, client: Any) -> tuple[SendTurn, RestoreTurn]:
        return responses_sender(
            client, source=self.name, attempts=self.retry_attempts, model=self.model
        )

    def _chat(self, client: Any) -> tuple[SendTurn, RestoreTurn]:
        history = ChatHistory()

        async def send(query: str) -> TurnResult:
            messages = history.with_query(query)
            response = await with_retries(
                lambda: client.chat.completions.create(model=self.model, messages=messages),
                attempts=self.retry_attempts,
            )
            result = turn_from_chat_completion(as_dict(response), query, source=self.name)
            history.answered(query, result.response)
            return result

        return send, history.restore

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

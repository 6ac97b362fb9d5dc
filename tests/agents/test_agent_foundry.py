"""The foundry target: the request azure-ai-projects builds, checked against a local server
that records it (Foundry itself cannot be reached from tests)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition

TOKEN = "foundry-token-8f3a2b"


class FakeCredential:
    """An async Azure token credential that hands out a fixed token."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(TOKEN, int(time.time()) + 3600)

    async def close(self) -> None:
        return None


def foundry(endpoint: str, credential: FakeCredential, version: str | None = "3") -> Any:
    defn = AgentDefinition(
        name="support",
        project_endpoint=endpoint,
        deployed_name="support-agent",
        deployed_version=version,
    )
    return make_target("foundry", defn, credential=credential)


def run(target: Any, *queries: str) -> Transcript:
    async def go() -> Transcript:
        try:
            return await target.run(
                Task(name="t", turns=[Turn(query=q) for q in queries]), RunConfig()
            )
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_request_names_the_agent_and_carries_the_bearer_token(recording_server, responses_body):
    def answer(request):
        number = len(server.requests)
        text = f"reply {number} (auth was {request.headers.get('authorization')})"
        return 200, responses_body(text, f"resp_{number}")

    server = recording_server(answer)
    credential = FakeCredential()
    transcript = run(foundry(server.url + "/api/projects/proj", credential), "hi", "more")

    first, second = server.requests
    assert first.path.split("?")[0] == "/api/projects/proj/openai/v1/responses"
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert first.body["input"] == "hi"
    assert first.body["agent_reference"] == {
        "type": "agent_reference",
        "name": "support-agent",
        "version": "3",
    }
    assert "previous_response_id" not in first.body
    assert second.body["previous_response_id"] == "resp_1"
    assert credential.scopes[0] == ("https://ai.azure.com/.default",)

    assert transcript.turns[0].response.startswith("reply 1 (auth was Bearer ***")
    assert transcript.turns[1].error is None
    assert TOKEN not in transcript.model_dump_json()


def test_without_a_version_the_reference_has_none(recording_server, responses_body):
    server = recording_server(lambda request: (200, responses_body("ok")))
    run(foundry(server.url + "/api/projects/p", FakeCredential(), version=None), "hi")
    assert server.requests[0].body["agent_reference"] == {
        "type": "agent_reference",
        "name": "support-agent",
    }


def test_endpoint_and_name_are_required():
    with pytest.raises(ConfigError) as caught:
        make_target("foundry", AgentDefinition(name="support-bot"))
    message = str(caught.value)
    assert "--project-endpoint" in message
    assert "AGENT_SUPPORT_BOT_NAME" in message

"""Hosted agents built on Microsoft's real agentserver packages, in real foundry-samples
layouts, started with the command agentopt derives the way azd does: the invocations
lifecycle (session per conversation, SSE frames, 202 + status polling), the Responses
protocol, and the candidate configuration as azure-ai-agentserver-optimization loads it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentopt.agents import RunConfig, make_target
from agentopt.agents.hosted import candidate_config
from agentopt.contracts.task import Task, Turn
from agentopt.core.files.agent_config import compose_system_prompt
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.workflows.detect import detect_target
from tests.agents.agentserver import agentserver_python, install_agent
from tests.fake_openai import FakeOpenAI
from tests.files.test_real_fixtures import copy_fixture

pytestmark = pytest.mark.slow

TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order.",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    },
}


def configure(defn: AgentDefinition) -> AgentDefinition:
    defn.instructions = "You are the store's support assistant."
    defn.model = "store-model"
    defn.temperature = 0.3
    defn.skills = [Skill(name="refunds", description="How refunds work.", body="30 days.")]
    defn.tools = [TOOL]
    return defn


def detected(fixture: str, folder: str, protocol: str, tmp_path: Path) -> AgentDefinition:
    root = copy_fixture(fixture, tmp_path)
    agent_folder = install_agent(root / "src" / folder, protocol, agentserver_python())
    found = detect_target(root, environ={})
    assert found.definition is not None and found.target == "hosted"
    assert found.definition.protocols == [protocol]
    # The command azd's `run` would use: the project's own .venv interpreter.
    assert found.definition.startup_command == [
        str(agent_folder / ".venv" / "bin" / "python"),
        "main.py",
    ]
    return configure(found.definition)


def play(defn: AgentDefinition, *queries: str, candidate: str = "cand_1") -> list[Any]:
    target = make_target("hosted", defn, port=0, stop_grace_s=3.0, startup_timeout_s=90.0)

    async def go() -> list[Any]:
        try:
            task = Task(name="t", turns=[Turn(query=q) for q in queries])
            return list((await target.run(task, RunConfig(candidate_id=candidate))).turns)
        finally:
            await target.aclose()

    return asyncio.run(go())


def loaded(response: str) -> dict[str, Any]:
    """The `config=` the agent appends: what the optimization loader gave it."""
    return dict(json.loads(response.split("config=", 1)[1]))


def test_invocations_agent_keeps_a_session_streams_and_answers_long_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    defn = detected(
        "fs-hosted-py-invocations-chat", "state-store-chat-python-invocations", "invocations",
        tmp_path,
    )  # fmt: skip
    with FakeOpenAI() as srv:
        monkeypatch.setenv("AGENTOPT_TEST_MODEL_URL", srv.base_url)
        one, two, three = play(defn, "hello", "again", "[background] and later")
        chats = [r.body for r in srv.chat_requests]
    assert (one.error, two.error, three.error) == (None, None, None), (one.error, two.error)
    # SSE: the `done` frame's full text, not the token frames doubled.
    assert one.response.startswith("hello | turns=1 | config=")
    assert two.response.startswith("again | turns=2 | config=")  # the same agent session
    assert three.response == "[background] and later"  # 202, then GET /invocations/{id}
    assert (one.usage.input_tokens, one.usage.output_tokens) == (10, 5)
    assert loaded(one.response) == {
        "source": "env", "model": "store-model", "temperature": 0.3, "skills": ["refunds"],
        "tools": ["lookup_order"], "candidate": "cand_1",
    }  # fmt: skip
    # The third turn's model call carried the whole conversation of the session.
    assert [m["role"] for m in chats[2]["messages"]] == [
        "system", "user", "assistant", "user", "assistant", "user",
    ]  # fmt: skip
    assert chats[0]["messages"][0]["content"] == compose_system_prompt(defn)


def test_an_invocations_error_envelope_is_an_agent_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent answers 400 with the recommended error envelope to an empty message."""
    defn = detected(
        "fs-hosted-py-invocations-chat", "state-store-chat-python-invocations", "invocations",
        tmp_path,
    )  # fmt: skip
    with FakeOpenAI() as srv:
        monkeypatch.setenv("AGENTOPT_TEST_MODEL_URL", srv.base_url)
        [turn] = play(defn, " ")
    assert turn.error is not None and turn.error.code == "agentRequestFailed"
    assert "HTTP 400" in turn.error.message and "invalid_request" in turn.error.message


def test_responses_agent_runs_on_the_real_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    defn = detected(
        "fs-hosted-py-egress-controls", "agent-framework-egress-controls-responses", "responses",
        tmp_path,
    )  # fmt: skip
    with FakeOpenAI() as srv:
        monkeypatch.setenv("AGENTOPT_TEST_MODEL_URL", srv.base_url)
        one, two = play(defn, "hello", "again", candidate="cand_9")
        chats = [r.body for r in srv.chat_requests]
    assert (one.error, two.error) == (None, None)
    assert one.response.startswith("hello | config=")
    assert two.response.startswith("again | config=")
    assert loaded(two.response)["candidate"] == "cand_9"
    assert chats[0]["messages"][0]["content"] == compose_system_prompt(defn)


def test_optimization_config_is_what_the_official_loader_reads(tmp_path: Path) -> None:
    """`OPTIMIZATION_CONFIG` as agentopt passes it, read by azure-ai-agentserver-optimization's
    `load_config` (resolution order 1, the inline JSON a temporary agent version gets)."""
    defn = configure(AgentDefinition(name="store", kind="hosted", folder=tmp_path))
    code = (
        "import json\n"
        "from azure.ai.agentserver.optimization import load_config\n"
        "c = load_config()\n"
        "print(json.dumps({'source': c.source, 'instructions': c.instructions,\n"
        "  'model': c.model, 'temperature': c.temperature,\n"
        "  'skills': [[s.name, s.description, s.body] for s in c.skills],\n"
        "  'tools': c.tool_definitions, 'composed': c.compose_instructions()}))\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OPTIMIZATION_CONFIG": json.dumps(candidate_config(defn)),
        "OPTIMIZATION_LOCAL_DIR": ".agent_configs",
        "OPTIMIZATION_CANDIDATE_ID": "cand_1",
    }
    out = subprocess.run(
        [str(agentserver_python()), "-c", code], env=env, cwd=tmp_path,
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {
        "source": "env:OPTIMIZATION_CONFIG",
        "instructions": defn.instructions,
        "model": "store-model",
        "temperature": 0.3,
        "skills": [["refunds", "How refunds work.", "30 days."]],
        "tools": [TOOL],
        "composed": compose_system_prompt(defn),
    }

"""The local target against servers as users run them (fake, protocol-faithful): a server
whose chat template crashes on a tool-call turn without string content, one without native
tool calling, and `tool_choice` from metadata.yaml."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.files.agent_config import load_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models import CallLayer, ProviderConfig
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text, tool_calls
from tests.models.helpers import fast_settings

GET_ORDER = {
    "type": "function",
    "function": {
        "name": "get_order",
        "description": "Look up an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    },
}
MOCKS = {"get_order": [{"return": {"status": "shipped"}}]}


def run_agent(srv: FakeOpenAI, tmp_path: Path, **fields: Any) -> tuple[Transcript, dict]:
    defn = AgentDefinition(
        name="support",
        folder=tmp_path,
        model="lab:smollm2",
        instructions="You help with orders.",
        tools=[GET_ORDER],
        tool_mocks=MOCKS,
        **fields,
    )
    target = make_target("local", defn)
    settings = fast_settings(
        cache_enabled=False,
        providers={"lab": ProviderConfig(type="compat", base_url=srv.base_url)},
    )

    async def go() -> tuple[Transcript, dict]:
        async with CallLayer(tmp_path, settings) as layer:
            try:
                task = Task(name="t", turns=[Turn(query="Where is order 12345?")])
                transcript = await target.run(task, RunConfig(calls=layer))
            finally:
                await target.aclose()
            return transcript, layer.stats().capabilities

    return asyncio.run(go())


def test_a_tool_round_trip_on_a_template_that_needs_string_content(tmp_path: Path) -> None:
    def server(req: RecordedRequest) -> Reply | None:
        messages = req.body["messages"]
        if any(
            m["role"] == "assistant" and not isinstance(m.get("content"), str) for m in messages
        ):
            return error(500, 'can only concatenate str (not "NoneType") to str')
        if messages[-1]["role"] == "tool":
            return text("Order 12345 has shipped.")
        return tool_calls([("get_order", {"order_id": "12345"})])

    with FakeOpenAI() as srv:
        srv.handler = server
        transcript, caps = run_agent(srv, tmp_path)
        assert srv.count() == 2  # no crash, no retry
    turn = transcript.turns[0]
    assert turn.error is None and turn.response == "Order 12345 has shipped."
    assert [(c.name, c.result) for c in turn.tool_calls] == [("get_order", {"status": "shipped"})]
    assert caps["lab:smollm2"]["tools"] == "native"


def test_a_server_without_tool_calling_gets_prompted_tools(tmp_path: Path) -> None:
    def server(req: RecordedRequest) -> Reply | None:
        if "tools" in req.body:
            return error(400, "this model does not support tools")
        last = req.body["messages"][-1]["content"]
        if "Result of get_order" in last:
            assert "response_format" not in req.body  # after a result: a plain answer
            return text("It has shipped.")
        return text(
            json.dumps({"tool_calls": [{"name": "get_order", "arguments": {"order_id": "12345"}}]})
        )

    with FakeOpenAI() as srv:
        srv.handler = server
        transcript, caps = run_agent(srv, tmp_path)
        bodies = [r.body for r in srv.chat_requests]
    turn = transcript.turns[0]
    assert turn.error is None and turn.response == "It has shipped."
    assert turn.tool_calls[0].arguments == {"order_id": "12345"}
    assert caps["lab:smollm2"]["tools"] == "prompted"
    # 1 refusal, then the prompted call and the prompted answer: no `tools`, no tool role.
    assert len(bodies) == 3
    assert all("tools" not in b for b in bodies[1:])
    assert {m["role"] for b in bodies[1:] for m in b["messages"]} <= {"system", "user", "assistant"}


def test_tool_choice_forces_the_first_round_only(tmp_path: Path) -> None:
    with FakeOpenAI() as srv:
        srv.queue(tool_calls([("get_order", {"order_id": "12345"})]), text("Shipped."))
        transcript, _ = run_agent(srv, tmp_path, tool_choice="get_order")
        first, second = (r.body for r in srv.chat_requests)
    assert first["tool_choice"] == {"type": "function", "function": {"name": "get_order"}}
    assert "tool_choice" not in second
    assert transcript.turns[0].response == "Shipped."


def test_metadata_tool_choice_is_checked(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([GET_ORDER]))
    (tmp_path / "metadata.yaml").write_text("model: x\ntool_choice: required\n")
    defn, _ = load_agent_config(tmp_path)
    assert defn.tool_choice == "required"
    (tmp_path / "metadata.yaml").write_text("model: x\ntool_choice: get_weather\n")
    try:
        load_agent_config(tmp_path)
    except Exception as exc:  # ConfigError naming the key and the valid values
        assert "tool_choice" in str(exc) and "get_order" in str(exc)
    else:
        raise AssertionError("an unknown tool_choice was accepted")

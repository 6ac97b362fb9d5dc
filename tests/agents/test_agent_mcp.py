"""MCP tools over real stdio: a tiny server written with the official SDK, started by the
local target, listed, called, and stopped."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import AgentError
from agentopt.core.files.agent_definition import AgentDefinition, McpServer
from agentopt.models.call import CallLayer, CallSettings
from agentopt.models.types import ChatRequest, FunctionCall, Message, ToolCall


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def tool_then_answer(tool: str, **arguments: Any):
    def bot(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role == "user":
            call = ToolCall(
                id="c1", function=FunctionCall(name=tool, arguments=json.dumps(arguments))
            )
            return Message(role="assistant", tool_calls=[call])
        return f"answer: {last.content}"

    return bot


def orders_agent(fixtures, tmp_path, model: str, **fields: Any) -> AgentDefinition:
    script = str(fixtures / "mcp_server.py")
    server = McpServer(name="orders", command=sys.executable, args=[script])
    server_env = fields.pop("server_env", None)
    if server_env:
        server.env = server_env
    return AgentDefinition(
        name="support", folder=tmp_path, model=model, mcp_servers=[server], **fields
    )


def run_and_close(defn: AgentDefinition, **config: Any) -> tuple[Transcript, Any]:
    target = make_target("local", defn)

    async def go() -> Transcript:
        try:
            return await target.run(
                Task(name="t", turns=[Turn(query="where is 12345")]),
                RunConfig(calls=layer(defn.folder), **config),
            )
        finally:
            await target.aclose()

    return asyncio.run(go()), target


def test_mcp_tool_is_offered_called_and_the_server_stopped(script, fixtures, tmp_path):
    model = script("mcp", tool_then_answer("lookup_order", order_id="12345"))
    transcript, _ = run_and_close(orders_agent(fixtures, tmp_path, model), real_tools=True)

    offered = {t["function"]["name"]: t["function"] for t in transcript.tool_definitions}
    assert set(offered) == {"lookup_order", "cancel_order"}
    assert offered["lookup_order"]["description"] == "Look up an order by its id."
    assert "order_id" in offered["lookup_order"]["parameters"]["properties"]

    [call] = transcript.turns[0].tool_calls
    assert call.source == "mcp"
    assert call.result["order_id"] == "12345"
    assert call.result["status"] == "shipped"
    assert transcript.turns[0].response.startswith('answer: {"order_id": "12345"')
    server_pid = call.result["pid"]
    assert server_pid != os.getpid()
    assert not pid_alive(server_pid)  # closing the target stopped the server


def test_mcp_tool_error_is_the_tool_result(script, fixtures, tmp_path):
    model = script("mcp", tool_then_answer("cancel_order", order_id="7"))
    transcript, _ = run_and_close(orders_agent(fixtures, tmp_path, model), real_tools=True)
    [call] = transcript.turns[0].tool_calls
    assert call.source == "mcp"
    assert "order 7 cannot be cancelled" in (call.error or "")
    assert transcript.turns[0].error is None


def test_declared_tools_win_and_mocks_answer_when_real_tools_are_off(script, fixtures, tmp_path):
    declared = {
        "type": "function",
        "function": {"name": "lookup_order", "description": "Declared.", "parameters": {}},
    }
    model = script("mcp", tool_then_answer("lookup_order", order_id="12345"))
    defn = orders_agent(
        fixtures,
        tmp_path,
        model,
        tools=[declared],
        tool_mocks={"lookup_order": {"return": "mocked"}},
    )
    transcript, _ = run_and_close(defn)
    names = [t["function"]["name"] for t in transcript.tool_definitions]
    assert names == ["lookup_order", "cancel_order"]
    assert transcript.tool_definitions[0] == declared
    [call] = transcript.turns[0].tool_calls
    assert (call.source, call.result) == ("mock", "mocked")


def test_a_server_that_dies_at_start_is_a_clear_agent_error(script, fixtures, tmp_path):
    model = script("mcp", tool_then_answer("lookup_order", order_id="1"))
    defn = orders_agent(fixtures, tmp_path, model, server_env={"FIXTURE_CRASH_ON_START": "1"})
    with pytest.raises(AgentError) as caught:
        run_and_close(defn, real_tools=True)
    message = str(caught.value)
    assert "MCP server 'orders'" in message
    assert "cannot load the order database" in message


def layer(project: Path) -> CallLayer:
    """A call layer that writes no cache file, for scripted-model tests."""
    return CallLayer(project_dir=project, settings=CallSettings(cache_enabled=False))

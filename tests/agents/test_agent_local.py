"""The local target: tool loop, mocks, Python tools, skills, limits, multi-turn, errors."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.contracts.usage import Usage
from agentopt.core.errors import ConfigError, InputError, Interrupted, ModelCallError
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.models.call import CallLayer, CallSettings
from agentopt.models.types import ChatRequest, ChatResponse, FunctionCall, Message, ToolCall

GET_ORDER = {
    "type": "function",
    "function": {
        "name": "get_order",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
}
ORDER_MOCKS = {
    "get_order": [
        {"when": {"order_id": "12345"}, "return": {"status": "shipped"}},
        {"return": "not found"},
    ]
}


def task(*queries: str, name: str = "t", tool_mocks: dict | None = None) -> Task:
    return Task(name=name, turns=[Turn(query=q) for q in queries], tool_mocks=tool_mocks)


def call_tool(tool: str, **arguments: Any) -> Message:
    call = ToolCall(
        id=f"call_{tool}", function=FunctionCall(name=tool, arguments=json.dumps(arguments))
    )
    return Message(role="assistant", tool_calls=[call])


def order_bot(request: ChatRequest) -> ChatResponse:
    """Calls get_order with the number in the user's message, then repeats the tool's answer."""
    last = request.messages[-1]
    if last.role == "user":
        order_id = re.search(r"\d+", last.content or "")
        message = call_tool("get_order", order_id=order_id.group() if order_id else "")
    else:
        message = Message(role="assistant", content=f"tool said: {last.content}")
    return ChatResponse(message=message, usage=Usage(input_tokens=10, output_tokens=1))


def run(target: Any, t: Task, **config: Any) -> Transcript:
    async def go() -> Transcript:
        try:
            calls = layer(target.definition.folder)
            return await target.run(t, RunConfig(calls=calls, **config))
        finally:
            await target.aclose()

    return asyncio.run(go())


def agent(model: str, tmp_path: Path, **fields: Any) -> Any:
    fields.setdefault("tools", [GET_ORDER])
    defn = AgentDefinition(name="support", folder=tmp_path, model=model, **fields)
    return make_target("local", defn)


def test_mock_tool_loop_first_matching_rule_wins(script, tmp_path):
    model = script("orders", order_bot)
    target = agent(model, tmp_path, tool_mocks=ORDER_MOCKS, instructions="Be brief.")
    shipped = run(target, task("where is order 12345?"))
    turn = shipped.turns[0]
    assert turn.error is None
    assert turn.response == 'tool said: {"status": "shipped"}'
    [call] = turn.tool_calls
    assert (call.name, call.arguments, call.result, call.source) == (
        "get_order",
        {"order_id": "12345"},
        {"status": "shipped"},
        "mock",
    )
    assert turn.usage == Usage(input_tokens=20, output_tokens=2)  # summed over both rounds
    assert turn.latency_s > 0
    assert shipped.system_prompt == "Be brief."
    assert shipped.tool_definitions == [GET_ORDER]

    other = run(agent(model, tmp_path, tool_mocks=ORDER_MOCKS), task("and order 999?"))
    assert other.turns[0].response == "tool said: not found"


def test_loose_scalar_match_and_per_task_mocks_come_first(script, tmp_path):
    model = script("orders", order_bot)
    override = {"get_order": [{"when": {"order_id": 12345}, "return": "cancelled"}]}
    target = agent(model, tmp_path, tool_mocks=ORDER_MOCKS)
    first = run(target, task("order 12345", tool_mocks=override))
    assert first.turns[0].tool_calls[0].result == "cancelled"
    fallback = run(
        agent(model, tmp_path, tool_mocks=ORDER_MOCKS), task("order 7", tool_mocks=override)
    )
    assert fallback.turns[0].tool_calls[0].result == "not found"


def test_no_matching_mock_and_no_mock_are_error_results(script, tmp_path):
    model = script("orders", order_bot)
    strict = {"get_order": [{"when": {"order_id": "1"}, "return": "x"}]}
    unmatched = run(agent(model, tmp_path, tool_mocks=strict), task("order 2"))
    call = unmatched.turns[0].tool_calls[0]
    assert call.error == 'no mock for tool \'get_order\' matches the arguments {"order_id": "2"}'
    assert unmatched.turns[0].error is None  # a tool error is data for the model, not a failure

    missing = run(agent(model, tmp_path), task("order 2"))
    call = missing.turns[0].tool_calls[0]
    assert call.source == "none"
    assert call.error.startswith("tool 'get_order' has no implementation")
    assert missing.turns[0].response.startswith("tool said: Error: tool 'get_order' has no")


def test_bad_mocks_are_input_errors_naming_the_entry(tmp_path):
    defn = AgentDefinition(
        name="a", folder=tmp_path, model="mock:echo", tool_mocks={"get_order": [{"when": {}}]}
    )
    with pytest.raises(
        InputError,
        match=r"tool_mocks.json:get_order\[0\]: mock for tool \"get_order\": a list holds rules",
    ):
        make_target("local", defn)


TOOLS_PY = """
import asyncio
import datetime
from pathlib import Path

Path("imported.marker").write_text("yes")

def get_order(order_id):
    return {"order_id": order_id, "status": "from python", "at": datetime.date(2026, 1, 2)}

async def refund(order_id, amount):
    await asyncio.sleep(0)
    return f"refunded {amount} on {order_id}"

def explode(order_id):
    raise ValueError(f"database down for {order_id}")
"""


def test_python_tools_sync_async_and_exceptions(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    plan = iter(
        [
            call_tool("get_order", order_id="1"),
            call_tool("refund", order_id="1", amount=5),
            call_tool("explode", order_id="1"),
        ]
    )

    def bot(request: ChatRequest) -> Message | str:
        return next(plan, None) or "done"

    target = agent(script("py", bot), tmp_path, tool_mocks=ORDER_MOCKS)
    transcript = run(target, task("go"), real_tools=True)
    calls = transcript.turns[0].tool_calls
    assert [c.source for c in calls] == ["python", "python", "python"]  # mocks skipped
    assert calls[0].result == {"order_id": "1", "status": "from python", "at": "2026-01-02"}
    assert calls[1].result == "refunded 5 on 1"
    assert calls[2].result is None
    assert calls[2].error == "ValueError: database down for 1"
    assert transcript.turns[0].response == "done"


def test_real_tools_off_never_imports_the_tools_module(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    transcript = run(agent(script("orders", order_bot), tmp_path), task("order 1"))
    assert transcript.turns[0].tool_calls[0].source == "none"
    assert not (tmp_path / "imported.marker").exists()


def test_real_tools_without_implementation(script, tmp_path):
    transcript = run(agent(script("orders", order_bot), tmp_path), task("order 1"), real_tools=True)
    assert transcript.turns[0].tool_calls[0].error == "tool 'get_order' has no implementation"


def test_max_tool_rounds_is_a_turn_error_naming_the_limit(script, tmp_path):
    model = script("loop", lambda request: call_tool("get_order", order_id="1"))
    target = agent(model, tmp_path, tool_mocks=ORDER_MOCKS, max_tool_rounds=2)
    transcript = run(target, task("first", "second"))
    first, second = transcript.turns
    assert first.error is not None
    assert first.error.code == "toolRoundsExceeded"
    assert "max_tool_rounds=2" in first.error.message
    assert len(first.tool_calls) == 2  # what ran before the limit is kept
    assert second.error is not None and second.error.code == "turnSkipped"


def test_load_skill_returns_the_body(script, tmp_path):
    skills = [
        Skill(name="refunds", description="How refunds work", body="Refunds take 30 days."),
        Skill(name="tone", description="House tone", body="Be warm."),
    ]
    seen: list[ChatRequest] = []

    def bot(request: ChatRequest) -> Message | str:
        seen.append(request)
        last = request.messages[-1]
        if last.role == "user":
            return call_tool("load_skill", name=last.content)
        return f"skill: {last.content}"

    target = agent(script("skills", bot), tmp_path, instructions="Help.", skills=skills, tools=[])
    transcript = run(target, task("refunds"))
    assert transcript.turns[0].response == "skill: Refunds take 30 days."
    assert transcript.turns[0].tool_calls[0].source == "skill"
    system = seen[0].messages[0]
    assert system.role == "system"
    assert system.content == (
        "Help.\n\n## Available Skills\n- **refunds**: How refunds work\n- **tone**: House tone"
    )
    assert [t.name for t in seen[0].tools or []] == ["load_skill"]

    unknown = run(agent(script("skills", bot), tmp_path, skills=skills, tools=[]), task("billing"))
    assert unknown.turns[0].tool_calls[0].error == (
        "unknown skill 'billing'; available skills: refunds, tone"
    )


def test_history_carries_within_a_task_and_never_across_tasks(script, tmp_path):
    def bot(request: ChatRequest) -> str:
        said = [m.content for m in request.messages if m.role in ("user", "assistant")]
        return "seen: " + " | ".join(str(s) for s in said)

    target = agent(script("memory", bot), tmp_path, tools=[])

    async def both() -> list[Transcript]:
        config = RunConfig(calls=layer(tmp_path))
        try:
            return list(
                await asyncio.gather(
                    target.run(task("alpha", "beta", name="A"), config),
                    target.run(task("gamma", name="B"), config),
                )
            )
        finally:
            await target.aclose()

    a, b = asyncio.run(both())
    assert a.turns[0].response == "seen: alpha"
    assert a.turns[1].response == "seen: alpha | seen: alpha | beta"
    assert b.turns[0].response == "seen: gamma"


def test_failed_turn_skips_the_rest_without_sending_them(script, tmp_path):
    calls: list[str] = []

    def bot(request: ChatRequest) -> str:
        calls.append(str(request.messages[-1].content))
        if calls[-1] == "boom":
            raise ModelCallError("HTTP 500 from provider", kind="server")
        return "ok"

    transcript = run(agent(script("boom", bot), tmp_path, tools=[]), task("hi", "boom", "a", "b"))
    codes = [t.error.code if t.error else None for t in transcript.turns]
    assert codes == [None, "agentRequestFailed", "turnSkipped", "turnSkipped"]
    assert transcript.turns[1].error.message == "HTTP 500 from provider"
    assert transcript.turns[2].error.message == "not sent because turn 2 failed"
    assert calls == ["hi", "boom"]
    assert transcript.error is not None and transcript.error.code == "agentRequestFailed"


def test_per_turn_timeout(script, tmp_path):
    async def slow(request: ChatRequest) -> str:
        await asyncio.sleep(5)
        return "late"

    transcript = run(
        agent(script("slow", slow), tmp_path, tools=[]), task("hi"), turn_timeout_s=0.2
    )
    error = transcript.turns[0].error
    assert error is not None and error.code == "timeout"
    assert "0.2 s" in error.message
    # The turn's reported latency ends at the cut, not when the 5 s answer would have come.
    assert transcript.turns[0].latency_s < 5


def test_cancel_event_interrupts_the_turn_in_flight(script, tmp_path):
    async def slow(request: ChatRequest) -> str:
        await asyncio.sleep(5)
        return "late"

    target = agent(script("slow", slow), tmp_path, tools=[])

    async def go() -> None:
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, cancel.set)
        await target.run(task("hi"), RunConfig(calls=layer(tmp_path), cancel=cancel))

    with pytest.raises(Interrupted):
        asyncio.run(go())


def test_secrets_are_masked_in_the_transcript(script, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_API_KEY", "shop-secret-value-42")
    mocks = {"get_order": {"return": "token shop-secret-value-42, Bearer abc.def.ghi"}}
    transcript = run(
        agent(script("orders", order_bot), tmp_path, tool_mocks=mocks), task("order 1")
    )
    dumped = transcript.model_dump_json()
    assert "shop-secret-value-42" not in dumped
    assert "abc.def.ghi" not in dumped
    assert "***" in transcript.turns[0].response


def test_a_model_is_required(tmp_path):
    with pytest.raises(ConfigError, match=r"agent\.model"):
        make_target("local", AgentDefinition(name="a", folder=tmp_path, instructions="x"))


def layer(project: Path) -> CallLayer:
    """A call layer that writes no cache file, for scripted-model tests."""
    return CallLayer(project_dir=project, settings=CallSettings(cache_enabled=False))


def test_eval_run_mode_takes_mocks_first_then_python_tools(script, tmp_path, monkeypatch):
    """real_tools=None (the `eval run` default): agents.md precedence, mocks → Python → MCP."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    plan = iter(
        [call_tool("get_order", order_id="12345"), call_tool("refund", order_id="1", amount=5)]
    )

    def bot(request: ChatRequest) -> Message | str:
        return next(plan, None) or "done"

    target = agent(script("mixed", bot), tmp_path, tool_mocks=ORDER_MOCKS)
    transcript = run(target, task("go"), real_tools=None)
    calls = transcript.turns[0].tool_calls
    # get_order has a mock, so the mock answers; refund has none, so Python does.
    assert [c.source for c in calls] == ["mock", "python"]
    assert calls[1].result == "refunded 5 on 1"


def test_a_tool_outside_allowed_tools_is_refused_before_it_runs(script, tmp_path, monkeypatch):
    ran: list[str] = []
    monkeypatch.setattr(
        "agentopt.agents.tools.toolbox.Toolbox.call",
        lambda self, name, *a, **k: ran.append(name),
    )
    model = script("allow", order_bot)
    turns = [Turn(query="order 12345", allowed_tools=["search_docs"]), Turn(query="again")]
    t = run(agent(model, tmp_path, tool_mocks=ORDER_MOCKS), Task(name="t", turns=turns))
    first, second = t.turns
    assert first.error is not None and first.error.code == "toolCallNotAllowed"
    assert "'get_order'" in first.error.message and "search_docs" in first.error.message
    assert [c.name for c in first.tool_calls] == ["get_order"]
    assert first.tool_calls[0].source == "refused"
    assert ran == []  # nothing was executed
    assert second.error is not None and second.error.code == "turnSkipped"


def test_a_tool_inside_allowed_tools_runs(script, tmp_path):
    model = script("allow_ok", order_bot)
    turns = [Turn(query="order 12345", allowed_tools=["get_order"])]
    (turn,) = run(agent(model, tmp_path, tool_mocks=ORDER_MOCKS), Task(name="t", turns=turns)).turns
    assert turn.error is None and "shipped" in (turn.response or "")
    # an empty list allows nothing; None (no list declared) restricts nothing
    empty = [Turn(query="order 1", allowed_tools=[])]
    (refused,) = run(
        agent(model, tmp_path, tool_mocks=ORDER_MOCKS), Task(name="e", turns=empty)
    ).turns
    assert refused.error is not None and "allowed: none" in refused.error.message
    (free,) = run(agent(model, tmp_path, tool_mocks=ORDER_MOCKS), task("order 1")).turns
    assert free.error is None

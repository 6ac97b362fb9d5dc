"""Whole flows through the CLI against a real llama.cpp server (`llama-server` through
xllamacpp) with the SmolLM2 GGUF, configured as a `compat` provider exactly as the README says.
No mocks in between: a recording relay only keeps the request bodies.

What the server does (probed in `test_capabilities_of_the_real_server`): it accepts
`response_format: json_schema` and decodes under the schema's grammar; with the GGUF's own chat
template it has no tool calling (`tools` are accepted and ignored, even with `tool_choice:
required`), so a tool-using agent runs with prompted tools.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentopt.models import CallLayer, CallSettings, ProviderConfig
from agentopt.models.types import ChatRequest, FunctionCall, Message, ToolCall, ToolDef
from tests.fake_openai import FakeOpenAI
from tests.servers.flows import (
    JUDGES,
    agentopt,
    check_judged_run,
    check_tool_run,
    example_project,
    is_judge_call,
    remembered,
    run_tool_agent,
)
from tests.servers.harness import MODEL, Server, recording_relay

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
INSTRUCTION = "A support agent for an online shoe store: refunds, shipping and order status."


@pytest.fixture
def relay(llama: Server) -> Iterator[FakeOpenAI]:
    relay = recording_relay(llama.base_url)
    yield relay
    relay.stop()


def test_eval_run_with_llm_judges(llama: Server, relay: FakeOpenAI, tmp_path: Path) -> None:
    project = example_project(tmp_path, relay.base_url, evaluators=JUDGES)
    code, out = agentopt(project, "eval", "run", "--limit", "2", "--max-errors", "100")
    assert code == 0, out
    data = check_judged_run(project, relay, tasks=2)
    assert data["run"]["model_capabilities"]["llama:smollm2"]["structured_output"] == (
        "json_schema_strict"
    )
    assert remembered(project)["structured_output"] == "json_schema_strict"
    assert "not supported" not in out  # llama-server accepts json_schema: no fallback notice
    # Every judge request was bounded by its schema.
    assert all(r.body.get("max_tokens") for r in relay.chat_requests if is_judge_call(r.body))

    # An unchanged rerun is served from the cache: no request reaches the server. That holds
    # for an agent answer cut at the agent's max_tokens too: it is cached, because asked
    # again the server (reusing its prompt cache) answers otherwise even at temperature 0.
    before = relay.count()
    code, _ = agentopt(project, "eval", "run", "--limit", "2", "--max-errors", "100")
    assert code == 0
    again = ["judge" if is_judge_call(r.body) else "agent" for r in relay.chat_requests[before:]]
    assert not again, f"the rerun asked the server again: {again}"


def test_a_tool_using_agent_round_trips_through_prompted_tools(
    llama: Server, relay: FakeOpenAI, tmp_path: Path
) -> None:
    project, code, out = run_tool_agent(tmp_path, relay.base_url)
    assert code == 0, out
    check_tool_run(project, relay, out)


def test_native_tool_turns_are_sent_with_content(llama: Server, relay: FakeOpenAI) -> None:
    """The second round of a native tool loop, sent to the real server: it renders it, and the
    recorded body has a `content` key on every assistant message that carries tool_calls."""
    tool = ToolDef(
        function={
            "name": "get_order_status",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }
    )
    call = ToolCall(
        id="call_0_0",
        function=FunctionCall(name="get_order_status", arguments='{"order_id": "1001"}'),
    )
    request = ChatRequest(
        messages=[
            Message(role="system", content="You help with orders."),
            Message(role="user", content="Where is my order 1001?"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id="call_0_0", content='{"status": "shipped"}'),
        ],
        tools=[tool],
        max_tokens=40,
        temperature=0,
    )
    settings = CallSettings(
        cache_enabled=False,
        providers={
            "llama": ProviderConfig(type="compat", base_url=relay.base_url, tool_calling="native")
        },
    )

    async def main() -> Any:
        async with CallLayer(Path("."), settings) as layer:
            return await layer.complete(f"llama:{MODEL}", request)

    response = asyncio.run(main())
    assert response.text.strip()
    body = relay.last.body
    with_calls = [m for m in body["messages"] if m.get("tool_calls")]
    assert with_calls and all("content" in m and m["content"] == "" for m in with_calls)
    assert body["messages"][3]["name"] == "get_order_status"


def test_eval_generate_through_the_ladder(llama: Server, relay: FakeOpenAI, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    code, out = agentopt(
        project, "eval", "generate", "-g", INSTRUCTION, "--max-samples", "1",
        "--categories", "core",  # one batch: the bounded schema asks one category per call
        "--eval-model", f"compat:{MODEL}@{relay.base_url}",
    )  # fmt: skip
    assert code == 0, out
    ds = project / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"
    rubric = project / "evaluators" / "shop-quality" / "rubric_dimensions.json"
    code, out = agentopt(project, "eval", "validate", "eval.yaml", str(ds), str(rubric))
    assert code == 0, out
    assert len(ds.read_text().splitlines()) == 1  # the embedded test generates a bigger mix
    assert remembered(project)["structured_output"] == "json_schema_strict"
    print(f"generator requests {relay.count()}")


def test_optimize_with_the_server_as_reflection_model(
    llama: Server, relay: FakeOpenAI, tmp_path: Path
) -> None:
    evaluators = [
        {"name": "builtin.exact_match", "initialization_parameters": {"mode": "contains"}},
        "builtin.partial_match",
    ]
    # The agent is the echo mock: its turns on the server are the eval run tests' subject; here
    # the server is the reflection model (the judges are deterministic).
    project = example_project(tmp_path, relay.base_url, evaluators=evaluators, model="mock:echo")
    # 9 tasks, the fewest the optimizer splits three ways (train, validation, test).
    seed = project / "datasets" / "support-agent-eval-seed" / "support-agent-eval-seed.jsonl"
    small = tmp_path / "nine-tasks.jsonl"
    small.write_text("".join(seed.read_text().splitlines(keepends=True)[:9]))
    code, out = agentopt(
        project, "optimize", "--dataset", str(small), "--max-candidates", "1",
        "--max-stalls", "1", "--targets", "instructions",
    )  # fmt: skip
    assert code == 0, out
    reflections = [
        r.body for r in relay.chat_requests if "improved_instructions" in json.dumps(r.body)
    ]
    assert reflections, "the reflection model was never asked"
    assert all(b.get("max_tokens") for b in reflections)
    print(f"optimize requests {relay.count()}, reflection requests {len(reflections)}")

"""ToolCallSelection / ToolCallExecution end to end: a tool-calling agent on the fake OpenAI
server with mocked tools, and one whose tools are a real MCP server over stdio. The filled
document carries the `diagnostics.tool_calls` evidence and validates against schema 1.11;
`--evaluate-only` on it gives the same verdicts without the agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text, tool_calls
from tests.m365_output_check import validate_output
from tests.workflows.fake_agent_server import judge_reply

runner = CliRunner()
MCP_SERVER = Path(__file__).resolve().parents[1] / "agents" / "fixtures" / "mcp_server.py"
AGENT = "support"


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def write_agent(project: Path, **meta: Any) -> None:
    """`.agent_configs/baseline/` of an agent named `support`, and an eval.yaml naming it."""
    base = project / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text("Look orders up with your tools.")
    (base / "metadata.yaml").write_text(
        yaml.safe_dump({"model": "gpt-4.1-mini", "instruction_file": "instructions.md", **meta})
    )
    config = {"name": "tools", "agent": {"name": AGENT, "config": str(base / "metadata.yaml")}}
    (project / "eval.yaml").write_text(yaml.safe_dump(config))


def agent_calling(plan: dict[str, tuple[str, dict[str, Any]]]):
    """The agent calls the tool its prompt maps to, then answers with what the tool said."""

    def handler(req: RecordedRequest) -> Reply | None:
        reply = judge_reply(req)
        if reply is not None:
            return reply
        messages = (req.body or {}).get("messages", [])
        last = messages[-1]
        if last.get("role") == "user":
            return tool_calls([plan[last["content"]]])
        return text(f"Done: {last.get('content')}")

    return handler


def tool(plugin: str, function: str) -> dict[str, Any]:
    return {"tool": {"plugin_name": plugin, "function_name": function}}


def item(prompt: str, selected: list[dict[str, Any]], executed: list[dict[str, Any]]) -> dict:
    return {
        "prompt": prompt,
        "evaluators": {
            "ToolCallSelection": {"calls": selected, "allow_additional_calls": False},
            "ToolCallExecution": {"calls": executed},
        },
        "evaluators_mode": "replace",
    }


def verdicts(filled: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (i["scores"]["toolCallSelection"]["result"], i["scores"]["toolCallExecution"]["result"])
        for i in filled["items"]
    ]


def run_and_replay(project: Path, handler: Any, *extra: str) -> tuple[dict, dict, int]:
    """Run live, then --evaluate-only on the filled document; both outputs and the number of
    agent requests the replay made."""
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = handler
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", "evals.json", "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--output", "filled.json", *extra,
        )  # fmt: skip
        assert code == 0, out
        live = json.loads((project / "filled.json").read_text())
        before = len(srv.chat_requests)
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "filled.json",
            "--eval-model", f"compat:judge@{url}", "--output", "replayed.json",
        )  # fmt: skip
        assert code == 0, out
        replay_requests = len(srv.chat_requests) - before
    return live, json.loads((project / "replayed.json").read_text()), replay_requests


def test_mocked_tools_pass_and_fail_and_replay_from_the_written_evidence(project: Path) -> None:
    write_agent(project, tools_file="tools.json")
    base = project / ".agent_configs" / "baseline"
    order = {"name": "get_order", "description": "Look an order up.", "parameters": {}}
    search = {"name": "search_docs", "description": "Search the docs.", "parameters": {}}
    (base / "tools.json").write_text(
        json.dumps([{"type": "function", "function": f} for f in (order, search)])
    )
    (base / "tool_mocks.json").write_text(json.dumps({"get_order": [{"return": "shipped"}]}))
    document = {
        "schemaVersion": "1.11.0",
        "items": [
            item("Where is order 1?", [tool(AGENT, "get_order")], [tool(AGENT, "get_order")]),
            # search_docs has no implementation: selected, executed with 501, not expected
            item("Search the docs.", [tool(AGENT, "get_order")], [tool(AGENT, "search_docs")]),
        ],
    }
    (project / "evals.json").write_text(json.dumps(document))
    plan = {
        "Where is order 1?": ("get_order", {"id": "1"}),
        "Search the docs.": ("search_docs", {}),
    }
    live, replayed, requests = run_and_replay(project, agent_calling(plan))
    validate_output(live)
    validate_output(replayed)
    assert verdicts(live) == [("pass", "pass"), ("fail", "fail")]
    second = live["items"][1]
    assert "Not selected: support/get_order" in second["scores"]["toolCallSelection"]["reason"]
    assert "support/search_docs HTTP 501" in second["scores"]["toolCallExecution"]["reason"]
    assert live["items"][0]["diagnostics"]["tool_calls"] == {
        "selected_functions": [{"plugin_name": AGENT, "function_name": "get_order"}],
        "executions": [
            {"plugin_name": AGENT, "function_name": "get_order", "response_status": 200}
        ],
    }
    assert requests == 0 and verdicts(replayed) == verdicts(live)
    assert [i["diagnostics"] for i in replayed["items"]] == [
        i["diagnostics"] for i in live["items"]
    ]


@pytest.mark.slow
def test_a_real_mcp_server_names_the_plugin_and_its_failed_call_fails_execution(
    project: Path,
) -> None:
    server = {"name": "orders", "command": [sys.executable, str(MCP_SERVER)]}
    write_agent(project, mcp_servers=[server])
    document = {
        "schemaVersion": "1.11.0",
        "items": [
            item("Where is order 7?", [tool("orders", "lookup_order")],
                 [tool("orders", "lookup_order")]),
            item("Cancel order 7.", [tool("orders", "cancel_order")],
                 [tool("orders", "cancel_order")]),
        ],
    }  # fmt: skip
    (project / "evals.json").write_text(json.dumps(document))
    plan = {
        "Where is order 7?": ("lookup_order", {"order_id": "7"}),
        "Cancel order 7.": ("cancel_order", {"order_id": "7"}),
    }
    live, replayed, requests = run_and_replay(project, agent_calling(plan))
    validate_output(live)
    assert verdicts(live) == [("pass", "pass"), ("pass", "fail")]
    cancelled = live["items"][1]
    assert "orders/cancel_order HTTP 500" in cancelled["scores"]["toolCallExecution"]["reason"]
    assert cancelled["diagnostics"]["tool_calls"]["executions"] == [
        {"plugin_name": "orders", "function_name": "cancel_order", "response_status": 500}
    ]
    assert requests == 0 and verdicts(replayed) == verdicts(live)

"""`eval run` with the embedded model (offline, no key) and `--debug` logging without secrets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def results(project: Path) -> dict:
    return json.loads(next((project / ".agentopt" / "runs").glob("*/results.json")).read_text())


@pytest.mark.slow
@pytest.mark.local
def test_adhoc_prompt_on_the_embedded_model(project: Path) -> None:
    result = runner.invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--prompts", "Hello",
         "--expected", "Hello", "--evaluator", "PartialMatch",
         "--agent-model", "local:smollm2-135m"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    task = results(project)["tasks"][0]
    assert task["response"].strip() and task["status"] in {"pass", "fail"}


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_status",
            "description": "Look up the current status of an order by its order id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "The order number."}},
                "required": ["order_id"],
            },
        },
    }
]
MOCKS = {
    "get_order_status": [
        {"when": {"order_id": "1001"}, "return": {"order_id": "1001", "status": "shipped"}},
        {"return": {"error": "order not found"}},
    ]
}


@pytest.mark.slow
@pytest.mark.local
def test_embedded_model_plays_the_example_agent_with_mocked_tools(project: Path) -> None:
    shutil.copytree(EXAMPLE, project, dirs_exist_ok=True)
    shutil.rmtree(project / ".agentopt", ignore_errors=True)
    baseline = project / ".agent_configs" / "baseline"
    (baseline / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (baseline / "tool_mocks.json").write_text(json.dumps(MOCKS), encoding="utf-8")
    meta = baseline / "metadata.yaml"
    meta.write_text(meta.read_text() + "tools_file: tools.json\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--filter", "standard_time",
         "--limit", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    task = results(project)["tasks"][0]
    assert task["response"].strip() and not task["response"].lstrip().startswith('{"tool_calls"')
    for call in task["tool_calls"]:
        assert call["source"] in {"mock", "none"}  # eval run: mocks answer first
    scored = {e["evaluator"] for e in task["evaluators"]}
    assert {"builtin.exact_match", "builtin.task_adherence"} <= scored


def test_debug_log_has_no_secrets(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-" + "k3y" * 8
    with FakeOpenAI() as srv:
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        result = runner.invoke(
            app,
            ["-C", str(project), "--no-prompt", "--debug", "eval", "run", "--prompts", "hi",
             "--expected", "hi", "--evaluator", "ExactMatch",
             "--agent-model", "openai:gpt-4.1-mini"],
        )  # fmt: skip
        assert srv.chat_requests[0].headers["authorization"] == f"Bearer {key}"
    assert result.exit_code == 0, result.output
    log = (project / ".agentopt" / "agentopt.log").read_text()
    assert "request openai:gpt-4.1-mini" in log  # the calls were logged
    assert key not in log and key not in result.output
    assert key not in json.dumps(results(project))


@pytest.mark.slow
@pytest.mark.local
def test_a_simulated_conversation_on_the_embedded_model(project: Path) -> None:
    """Agent, simulated user and scoring all on the embedded model, offline. A 135M model
    decides for itself when the goal is reached, so the conversation has 1 to 3 turns; what
    must hold is the shape: the opening from the task, every later turn written (and marked)
    by the simulated user, one simulator call after each agent turn, a known ending, and an
    unchanged rerun that makes no call and plays the same conversation. Each simulator call
    costs ~5 s on one thread (a ~600-token prompt under a JSON grammar)."""
    task = {
        "name": "hours",
        "query": "Hi, when is the shop open on Saturday?",
        "persona": "A polite customer.",
        "goal": "Find out the shop's opening hours on Saturday.",
        "desired_num_turns": 3,
        "ground_truth": "The shop is open 9 to 5 on Saturday.",
    }
    (project / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    (project / "eval.yaml").write_text(
        "agent:\n  name: shop\n  model: local:smollm2-135m\n"
        '  instruction: "You are the shop assistant. The shop is open 9 to 5, Monday to '
        'Saturday."\n'
        "dataset:\n  local_uri: tasks.jsonl\nevaluators: [builtin.partial_match]\n"
        "options:\n  eval_model: local:smollm2-135m\n  evaluation_level: conversation\n"
    )
    args = ["-C", str(project), "--no-prompt", "eval", "run"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    run = results(project)
    [done] = run["tasks"]
    turns = done["turns"]
    assert 1 <= len(turns) <= 3
    assert turns[0]["query"] == task["query"] and not turns[0].get("simulated")
    assert all(t["simulated"] and t["query"].strip() for t in turns[1:])
    assert all(t["response"].strip() for t in turns)
    assert done["simulation"]["reason"] in ("goal_reached", "abandoned", "max_turns")
    assert done["simulation"]["turns"] == len(turns)
    usage = run["summary"]["usage"]
    assert usage["simulator"]["calls"] == len(turns)  # asked after every agent turn
    assert {e["evaluator"] for e in done["evaluators"]} == {
        "builtin.partial_match",
        "builtin.goal_reached",
    }

    again = runner.invoke(app, args)
    assert again.exit_code == first.exit_code, again.output
    rerun = sorted((project / ".agentopt" / "runs").glob("*/results.json"))[-1]
    data = json.loads(rerun.read_text())
    assert sum(u["calls"] for u in data["summary"]["usage"].values()) == 0
    assert [t["response"] for t in data["tasks"][0]["turns"]] == [t["response"] for t in turns]

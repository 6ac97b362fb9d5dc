"""The CLI flows the real-server tests run, and what they check (shared by the llama.cpp
server and the LiteLLM proxy tests)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI
from tests.servers.harness import MODEL, REPO

EXAMPLE = REPO / "examples" / "support-agent"
# The example agent has no tools (the demo's story is two missing policies); the tool flow adds
# the order tools, their mocks and one order-status task from this folder.
TOOL_AGENT = Path(__file__).parent / "tool_agent"
ATTEMPT_TIMEOUT_S = 120
EXACT = {"name": "builtin.exact_match", "initialization_parameters": {"mode": "contains"}}


def agentopt(project: Path, *args: str) -> tuple[int, str]:
    started = time.monotonic()
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    print(f"[{args[0]} {args[1] if len(args) > 1 else ''}] {time.monotonic() - started:.1f} s")
    return result.exit_code, result.output


def example_project(
    root: Path,
    base_url: str,
    *,
    evaluators: list[Any],
    api_key_env: str | None = None,
    **agent: Any,
) -> Path:
    """The bundled example, its agent and judges on the server as provider `llama`."""
    project = root / "support-agent"
    shutil.copytree(EXAMPLE, project)
    shutil.rmtree(project / ".agentopt", ignore_errors=True)
    config = yaml.safe_load((project / "eval.yaml").read_text())
    provider: dict[str, Any] = {"type": "compat", "base_url": base_url}
    if api_key_env:
        provider["api_key_env"] = api_key_env
    config["evaluators"] = evaluators
    config["options"].update(
        # One attempt may take the whole call deadline: a small model on one thread of a busy
        # machine needs it, and a retried attempt starts the generation over.
        attempt_timeout_seconds=ATTEMPT_TIMEOUT_S,
        providers={"llama": provider},
        eval_model=f"llama:{MODEL}",
        optimization_model=f"llama:{MODEL}",
    )
    (project / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    meta_path = project / ".agent_configs" / "baseline" / "metadata.yaml"
    meta = yaml.safe_load(meta_path.read_text())
    meta.update({"model": f"llama:{MODEL}", **agent})
    meta_path.write_text(yaml.safe_dump(meta, sort_keys=False))
    return project


JUDGES = [
    "builtin.relevance",
    "builtin.task_adherence",
    {
        "name": "support-agent-quality",
        "version": "1",
        "local_uri": "evaluators/support-agent-quality/rubric_dimensions.json",
    },
]


def results(project: Path) -> dict[str, Any]:
    path = next((project / ".agentopt" / "runs").glob("*/results.json"))
    return json.loads(path.read_text())


def remembered(project: Path) -> dict[str, str]:
    with sqlite3.connect(project / ".agentopt" / "cache.sqlite") as db:
        return dict(db.execute("SELECT feature, value FROM capabilities").fetchall())


def is_judge_call(body: dict[str, Any]) -> bool:
    return not is_agent_call(body)


def check_judged_run(project: Path, relay: FakeOpenAI, tasks: int) -> dict[str, Any]:
    """A real verdict (at least one judge scored, not every one an error); each judge a score or
    an honest judgeParseFailed; numbers printed."""
    data = results(project)
    assert len(data["tasks"]) == tasks
    for task in data["tasks"]:
        assert task["response"].strip(), task
        by_name = {e["evaluator"]: e for e in task["evaluators"]}
        assert {"builtin.relevance", "builtin.task_adherence", "support-agent-quality"} <= set(
            by_name
        )
        for verdict in by_name.values():
            if verdict["status"] == "error":
                assert verdict["error"]["code"] == "judgeParseFailed", verdict
    judge_calls = [r for r in relay.chat_requests if is_judge_call(r.body)]
    modes = {r.body.get("response_format", {}).get("type", "prompt") for r in judge_calls}
    verdicts = [e for t in data["tasks"] for e in t["evaluators"]]
    errors = sum(e["status"] == "error" for e in verdicts)
    print(
        f"judge requests {len(judge_calls)} for {tasks} tasks "
        f"({len(judge_calls) / tasks:.1f} per judged task, 3 judges each), modes {modes}, "
        f"judge errors {errors}, capabilities {data['run'].get('model_capabilities')}"
    )
    # A run whose every verdict is an error proves only that the judges were called.
    assert errors < len(verdicts), f"no judge verdict was scored: {verdicts}"
    return data


def run_tool_agent(root: Path, base_url: str, **provider: Any) -> tuple[Path, int, str]:
    """`eval run` on one order-status task; the 135M model would not choose a tool by itself,
    so the first round is forced (metadata.yaml `tool_choice`)."""
    project = example_project(
        root,
        base_url,
        evaluators=[EXACT],
        tools_file="tools.json",
        tool_choice="get_order_status",
        **provider,
    )
    baseline = project / ".agent_configs" / "baseline"
    for name in ("tools.json", "tool_mocks.json"):
        shutil.copy(TOOL_AGENT / name, baseline / name)
    [seed] = (project / "datasets").glob("*/*.jsonl")
    with seed.open("a", encoding="utf-8") as out:
        out.write((TOOL_AGENT / "order_status.jsonl").read_text(encoding="utf-8"))
    code, out = agentopt(project, "eval", "run", "--filter", "order_status*", "--limit", "1",
                         "--max-errors", "100")  # fmt: skip
    return project, code, out


def check_tool_run(project: Path, relay: FakeOpenAI, out: str) -> None:
    """A real tool round trip through prompted tools, said once, recorded in the metadata."""
    data = results(project)
    task = data["tasks"][0]
    assert task["status"] != "error", task
    [call] = task["tool_calls"]
    assert call["name"] == "get_order_status" and call["source"] == "mock"
    assert call["result"] is not None  # the mock answered the model's call
    assert task["response"].strip()
    assert data["run"]["model_capabilities"][f"llama:{MODEL}"]["tools"] == "prompted"
    assert out.count("prompted tool use") == 1  # the one notice
    agent_calls = [r.body for r in relay.chat_requests if is_agent_call(r.body)]
    first = agent_calls[0]
    assert first["tool_choice"]["function"]["name"] == "get_order_status"
    # After the fallback: the call through a JSON schema naming only real tools, then the
    # result handed over as text for a plain answer; no `tools` and no tool role.
    prompted, answer = agent_calls[1], agent_calls[-1]
    assert "tools" not in prompted and prompted["response_format"]["type"] == "json_schema"
    assert "tools" not in answer and "response_format" not in answer
    assert "Result of get_order_status" in answer["messages"][-1]["content"]
    assert all(m["role"] != "tool" for b in agent_calls[1:] for m in b["messages"])
    for body in (r.body for r in relay.chat_requests):
        for m in body["messages"]:
            assert isinstance(m.get("content"), str) or m.get("tool_calls"), m


AGENT_PROMPT = "You are the customer-support assistant"


def is_agent_call(body: dict[str, Any]) -> bool:
    """Agent calls start with the example agent's instructions."""
    return str(body["messages"][0].get("content") or "").startswith(AGENT_PROMPT)

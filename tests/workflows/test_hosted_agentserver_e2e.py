"""Real hosted agents end to end through the CLI: a tiny agent of ours on Microsoft's real
`azure-ai-agentserver-invocations` and `-responses` packages, in a real foundry-samples layout,
started the way azd derives its command, runs one task through `eval run` and is optimized
with `optimize --max-candidates 1` (each candidate's configuration reaching the process as
`OPTIMIZATION_CONFIG`, read by azure-ai-agentserver-optimization's loader). The same layouts'
activity and C# siblings say what is wrong at `eval run` as they do at `eval init`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from agentopt.cli.target_block import render_target_block
from agentopt.workflows.detect import detect_target
from tests.agents.agentserver import agentserver_python, install_agent
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.files.test_real_fixtures import copy_fixture
from tests.optimize.conftest import Models, two_phrase_rows, write_jsonl
from tests.optimize.conftest import models as models  # the scripted judge (a fixture)

runner = CliRunner()
_QUOTED = re.compile(r"'([A-Za-z][A-Za-z ]{0,40})'")
LAYOUTS = {
    "invocations": ("fs-hosted-py-invocations-chat", "state-store-chat-python-invocations"),
    "responses": ("fs-hosted-py-egress-controls", "agent-framework-egress-controls-responses"),
}


def invoke(*args: str) -> tuple[int, str]:
    from agentopt.cli.app import app

    result = runner.invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def follows_its_rules(req: RecordedRequest) -> Reply:
    """The model behind the agent: repeats every quoted phrase of its system prompt."""
    messages = req.body.get("messages", []) if isinstance(req.body, dict) else []
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    return text(f"Answer to {user}." + "".join(f" {p}." for p in _QUOTED.findall(system)))


def project(protocol: str, tmp_path: Path) -> Path:
    """The sample's azure.yaml, our agent as its main.py, a baseline and a small suite."""
    fixture, service = LAYOUTS[protocol]
    root = copy_fixture(fixture, tmp_path)
    folder = install_agent(root / "src" / service, protocol, agentserver_python())
    base = folder / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text("You are the store's support assistant.\n")
    (base / "metadata.yaml").write_text(
        yaml.safe_dump({"model": "fake-model", "instruction_file": "instructions.md"})
    )
    write_jsonl(folder / "data" / "tasks.jsonl", two_phrase_rows("train", 4))
    write_jsonl(folder / "data" / "validation.jsonl", two_phrase_rows("val", 4))
    config = {
        "name": f"{protocol}-suite",
        "agent": {"name": service},
        "dataset": {"local_uri": "data/tasks.jsonl"},
        "validation_dataset": {"local_uri": "data/validation.jsonl"},
        "evaluators": ["builtin.task_adherence"],
        "options": {"eval_model": "mock:opt_judge"},
    }
    (folder / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["invocations", "responses"])
def test_real_agent_runs_one_task_and_is_optimized(
    protocol: str, tmp_path: Path, models: Models, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project(protocol, tmp_path)
    with FakeOpenAI() as srv:
        srv.handler = follows_its_rules
        monkeypatch.setenv("AGENTOPT_TEST_MODEL_URL", srv.base_url)
        code, out = invoke("eval", "run", "--limit", "1", "--no-prompt", "-C", str(folder))
        assert code == 0, out  # a failing task is a verdict, not an error
        code, out = invoke(
            "optimize", "--max-candidates", "1", "--seed", "0", "--no-prompt", "-C", str(folder)
        )
        assert code == 0, out
        systems = [r.body["messages"][0]["content"] for r in srv.chat_requests]
    [run] = (folder / ".agentopt" / "runs").glob("*/results.json")
    results = json.loads(run.read_text())
    [task] = results["tasks"]
    assert task["status"] in ("pass", "fail") and task["response"].startswith("Answer to ")
    assert "error" not in task or not task["error"]
    [job_file] = (folder / ".agentopt" / "optimize").glob("*/job.json")
    job = json.loads(job_file.read_text())
    ids = [c["id"] for c in job["candidates"]]
    assert len(ids) == 2 and ids[0] == "baseline", ids  # the baseline and one candidate
    # Only the candidate's process knew the rule, so only it passes the validation tasks.
    scores = {c["id"]: c["validation"]["score"] for c in job["candidates"]}
    assert scores == {"baseline": 0.0, ids[1]: 1.0}, scores
    # The candidate's instructions reached the process and its model calls: its rule, quoted.
    assert any("'refund window'" in s or "'tracking link'" in s for s in systems)
    assert all(s.startswith("You are the store's support assistant.") for s in systems)


def test_activity_agent_is_refused_with_the_protocol_named(tmp_path: Path) -> None:
    root = copy_fixture("fs-hosted-py-activity-autopilot", tmp_path)
    code, out = invoke("eval", "run", "--prompts", "hi", "--no-prompt", "-C", str(root))
    assert code == 2, out
    flat = " ".join(out.split())
    assert "hosted agent 'autopilot' declares only the activity protocol" in flat
    assert "serve the responses or invocations protocol beside it" in flat
    assert "Traceback" not in out


def test_csharp_agent_gets_the_same_fix_at_eval_run_as_at_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No .NET SDK on PATH: `eval init`'s block names the fix; `eval run` names the same one."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    root = copy_fixture("fs-hosted-cs-invocations-echo", tmp_path)
    console = Console(record=True, width=400, color_system=None)
    console.print(render_target_block(detect_target(root, no_prompt=True, environ={}), cwd=root))
    block = console.export_text()
    fix = "the .NET SDK (`dotnet`) is not on PATH: install it, or set `startupCommand` on the "
    fix += "service in azure.yaml"
    assert fix in block
    code, out = invoke("eval", "run", "--prompts", "hi", "--no-prompt", "-C", str(root))
    assert code == 2, out
    flat = " ".join(out.split())
    assert "cannot start hosted agent 'invocations-echo-agent'" in flat
    assert fix in flat
    assert "cannot tell how to run" not in flat

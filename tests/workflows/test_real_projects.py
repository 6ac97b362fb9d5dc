"""Real azd projects run end to end, with the command lines azd users write (global options
after the command): every prompt agent of tests/fixtures/real runs one task against the fake
OpenAI server, a hosted Python sample starts through its derived command, and a multi-agent
repo works with `eval init` then a plain `eval run` in one agent's folder."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.agents import RunConfig, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.workflows.detect import detect_target
from tests.fake_openai import FakeOpenAI
from tests.files.test_real_fixtures import REAL, ROWS, copy_fixture
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

runner = CliRunner()
HOSTED_STUB = Path(__file__).resolve().parent.parent / "agents" / "fixtures" / "hosted_agent.py"
PROMPT_FIXTURES = [
    ("fs-prompt-01-basic", "You are a helpful, friendly assistant.", []),
    ("fs-prompt-02-tools", "asks about the weather", ["get_weather", "convert_currency"]),
    ("fs-prompt-03-mcp-tools", "Use the Microsoft Learn MCP server", []),
    ("fs-prompt-06-skills", "Use the travel-guide skill", []),
    ("azd-testdata-prompt-full", "Always respond in a structured format.", ["get_weather"]),
    ("azd-testdata-mcp-tools", "You have access to GitHub via MCP", []),
]  # fmt: skip


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = runner.invoke(app_(), list(args), env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def app_():  # type: ignore[no-untyped-def]
    from agentopt.cli.app import app

    return app


def test_every_prompt_fixture_is_covered() -> None:
    """The detection table (tests/files/test_real_fixtures.py) says which sets are prompt
    agents; each of them runs below."""
    prompt = {row.fixture for row in ROWS if row.kind == "prompt"}
    assert prompt == {name for name, _, _ in PROMPT_FIXTURES}


@pytest.mark.parametrize(("fixture", "instruction", "tools"), PROMPT_FIXTURES)
def test_prompt_fixture_runs_one_task(
    fixture: str, instruction: str, tools: list[str], project: Path, tmp_path: Path
) -> None:
    root = copy_fixture(fixture, tmp_path)
    with FakeOpenAI() as srv:
        # Global options after the command, as scripts copied from azd docs write them.
        code, out = invoke(
            "eval", "run", "--prompts", "Hello there", "--expected", "Hello there",
            "--evaluator", "ExactMatch", "--agent-model", f"compat:fake@{srv.base_url}",
            "--no-prompt", "-C", str(root),
        )  # fmt: skip
        requests = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert code == 0, out
    [request] = requests
    system = request.body["messages"][0]
    assert system["role"] == "system" and instruction in system["content"]
    offered = [t["function"]["name"] for t in request.body.get("tools", [])]
    assert offered == tools
    results = json.loads(next((root / ".agentopt" / "runs").glob("*/results.json")).read_text())
    assert [t["status"] for t in results["tasks"]] == ["pass"]


def test_hosted_python_sample_starts_with_its_derived_command(tmp_path: Path) -> None:
    """The real azure.yaml gives only `codeConfiguration.entryPoint: main.py`; the sample's own
    code needs Azure packages, so its folder gets our stdlib Responses agent as main.py and a
    `.venv` whose interpreter the derived command must pick (as `azd ai agent run` does)."""
    root = copy_fixture("fs-hosted-py-egress-controls", tmp_path)
    folder = root / "src" / "agent-framework-egress-controls-responses"
    (folder / ".venv" / "bin").mkdir(parents=True)
    os.symlink(sys.executable, folder / ".venv" / "bin" / "python")
    shutil.copy(HOSTED_STUB, folder / "main.py")
    found = detect_target(root, environ={})
    assert found.definition is not None and found.target == "hosted"
    assert found.definition.startup_command == [str(folder / ".venv/bin/python"), "main.py"]
    target = make_target("hosted", found.definition, port=0, stop_grace_s=2.0)

    async def go() -> str:
        try:
            transcript = await target.run(Task(name="t", turns=[Turn(query="ping")]), RunConfig())
        finally:
            await target.aclose()
        assert transcript.error is None, transcript.error
        return transcript.turns[0].response

    assert "ping" in asyncio.run(go())


MULTI = """\
name: two-agents
services:
  basic:
    host: azure.ai.agent
    project: agents/basic
  skills:
    host: azure.ai.agent
    project: agents/skills
"""


def multi_agent_repo(tmp_path: Path) -> Path:
    """Two real prompt agents (their agent.yaml + instructions.md) under one azure.yaml."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(MULTI, encoding="utf-8")
    for service, fixture in (("basic", "fs-prompt-01-basic"), ("skills", "fs-prompt-06-skills")):
        folder = root / "agents" / service
        folder.mkdir(parents=True)
        for name in ("agent.yaml", "instructions.md"):
            shutil.copy(REAL / fixture / name, folder / name)
    return root


def test_multi_agent_repo_init_then_plain_run_in_one_agent_folder(
    project: Path, tmp_path: Path, generator: object
) -> None:
    gen: ScriptedGenerator = generator()  # type: ignore[operator]
    root = multi_agent_repo(tmp_path)
    folder = root / "agents" / "skills"
    code, out = invoke(
        "eval", "init", "--eval-model", gen.model, "--max-samples", "3", "--no-prompt",
        "-C", str(folder),
    )  # fmt: skip
    assert code == 0, out
    assert "Service:" in out and "skills  (the service folder)" in out
    assert (folder / "eval.yaml").is_file() and not (root / "eval.yaml").exists()
    with FakeOpenAI() as srv:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.base_url}
        code, out = invoke("eval", "run", "--no-prompt", "-C", str(folder), env=env)
        agent_calls = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert code == 0, out
    assert len(agent_calls) == 3
    assert all(r.body["model"] == "gpt-5.4-mini" for r in agent_calls)
    system = agent_calls[0].body["messages"][0]["content"]
    assert "You are a helpful travel assistant." in system
    # From the repo root, eval.yaml's agent.name picks the service; with none, the names show.
    config_dir = root / "suites"
    config_dir.mkdir()
    (config_dir / "eval.yaml").write_text("name: s\nagent: {name: basic}\n", encoding="utf-8")
    from agentopt.core.files.eval_yaml_load import load_eval_config

    config, _ = load_eval_config(config_dir / "eval.yaml")
    assert detect_target(root, eval_config=config, no_prompt=True, environ={}).service == "basic"
    code, out = invoke("eval", "run", "--dry-run", "--no-prompt", "-C", str(root))
    assert code == 2 and "2 agent services (basic, skills); pass --agent NAME" in out


def test_optimize_accepts_global_options_after_the_command(project: Path, tmp_path: Path) -> None:
    root = copy_fixture("fs-prompt-01-basic", tmp_path)
    code, out = invoke(
        "optimize", "--dry-run", "--dataset", "missing.jsonl", "--no-prompt", "-C", str(root)
    )
    assert "No such option" not in out
    assert code == 2 and "missing.jsonl" in out
    code, out = invoke(
        "optimize", "apply", "--candidate", "cand_01", "--promote", "--no-prompt", "-C", str(root)
    )
    assert "No such option" not in out
    assert code == 2 and "optimization job" in out.lower()

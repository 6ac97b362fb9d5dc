"""How `eval run` resolves its inputs: a detected agent keeps its instructions when
--agent-model changes its model; eval.yaml gates apply; -C anchors relative paths; a systemic
failure before the first task is a clear error, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.models.providers.mock import register_mock, unregister_mock

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


def run(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


@pytest.fixture
def example(project: Path) -> Path:
    shutil.copytree(EXAMPLE, project, dirs_exist_ok=True)
    shutil.rmtree(project / ".agentopt", ignore_errors=True)
    return project


@pytest.mark.local
def test_agent_model_overrides_the_detected_agents_model(example: Path) -> None:
    seen: list[str] = []
    register_mock("spy", lambda req: seen.append(req.messages[0].content or "") or "30 days")
    try:
        code, out = run(example, "--agent-model", "mock:spy", "--limit", "1")
    finally:
        unregister_mock("spy")
    assert code == 0, out
    assert seen and "Northwind Goods" in seen[0]  # the example agent's own instructions


@pytest.mark.local
def test_eval_yaml_gates_apply_without_flags(example: Path) -> None:
    config = example / "eval.yaml"
    config.write_text(config.read_text().replace("options:\n", "options:\n  fail_under: 0.99\n"))
    register_mock("wrong", lambda req: "no idea")
    try:
        code, out = run(example, "--agent-model", "mock:wrong", "--limit", "2")
    finally:
        unregister_mock("wrong")
    assert code == 1, out
    assert "below --fail-under 0.99" in out


@pytest.mark.local
def test_dash_c_anchors_output_and_config_paths(example: Path, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = runner.invoke(
        app,
        ["-C", str(example), "--no-prompt", "eval", "run", "--config", "eval.yaml",
         "--agent-model", "mock:echo", "--limit", "1", "--output", "out/r.json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (example / "out" / "r.json").is_file()
    assert not (elsewhere / "out").exists()


def test_missing_provider_key_is_a_clear_error(project: Path) -> None:
    code, out = run(
        project, "--prompts", "hi", "--expected", "hi", "--evaluator", "ExactMatch",
        "--agent-model", "openai:gpt-4.1-mini",
    )  # fmt: skip
    assert code in (2, 3), out
    assert "OPENAI_API_KEY" in out
    assert "Traceback" not in out and "FileNotFoundError" not in out
    runs = list((project / ".agentopt" / "runs").glob("*/results.json"))
    for path in runs:  # whatever was written is a readable results file
        json.loads(path.read_text())


def test_agent_model_runs_a_suite_whose_agent_is_only_named(project: Path) -> None:
    (project / "tasks.jsonl").write_text('{"name": "t1", "query": "hi", "ground_truth": "hi"}\n')
    (project / "eval.yaml").write_text(
        "name: s\nagent: {name: named-only}\ndataset: {local_uri: tasks.jsonl}\n"
        "evaluators: [builtin.exact_match]\n"
    )
    code, out = run(project, "--agent-model", "mock:echo")
    assert code == 0, out
    code, out = run(project)  # without a model there is nothing to run: a clear error
    assert code == 2 and "named-only" in out

"""`eval run --dry-run` and `optimize --dry-run` plan the same judge for the same project and
environment (issue 34): one resolution (`workflows.eval_model.resolve_eval_model`), over every
combination of the `--eval-model` flag, eval.yaml `options.eval_model` and the azd
environment's AZURE_AI_MODEL_DEPLOYMENT_NAME; and both show it as resolved (provider, model and
the user's own server), never as the bare name."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app

SERVER = "http://127.0.0.1:9/v1"  # nothing is sent: both are dry runs
EVAL_YAML = """name: s
agent:
  name: a
  config: .agent_configs/baseline/metadata.yaml
dataset:
  local_uri: datasets/tasks.jsonl
evaluators:
  - builtin.task_adherence
"""


def _project(root: Path, yaml_model: str | None) -> None:
    base = root / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "metadata.yaml").write_text("model: agent-model\ninstruction_file: instructions.md\n")
    (base / "instructions.md").write_text("You are a helpful support agent.\n")
    (root / "datasets").mkdir()
    polite = [{"name": "polite", "instruction": "Polite."}]
    rows = [{"name": f"t{i}", "query": f"question {i}", "criteria": polite} for i in range(10)]
    (root / "datasets" / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    options = f"options:\n  eval_model: {yaml_model}\n" if yaml_model else ""
    (root / "eval.yaml").write_text(EVAL_YAML + options)


def _planned(project: Path, *args: str) -> tuple[str, str]:
    runner = CliRunner()
    run = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", "--dry-run", *args])
    assert run.exit_code == 0, run.output
    opt = runner.invoke(app, ["-C", str(project), "--no-prompt", "optimize", "--dry-run", *args])
    assert opt.exit_code == 0, opt.output
    judge = re.search(r"judge\s*│\s*(\S+)", run.output)
    evals = re.search(r"Models\s+eval (\S+),", opt.output)
    assert judge and evals, run.output + opt.output
    return judge.group(1), evals.group(1)


COMBINATIONS = list(itertools.product([None, "flagged"], [None, "from-yaml"], [None, "mydeploy"]))


@pytest.mark.parametrize(("flag", "yaml_model", "deployment"), COMBINATIONS)
def test_run_and_optimize_plan_the_same_judge(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    flag: str | None,
    yaml_model: str | None,
    deployment: str | None,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000")
    monkeypatch.setenv("OPENAI_BASE_URL", SERVER)
    if deployment:
        monkeypatch.setenv("AZURE_AI_MODEL_DEPLOYMENT_NAME", deployment)
    else:
        monkeypatch.delenv("AZURE_AI_MODEL_DEPLOYMENT_NAME", raising=False)
    _project(project, yaml_model)
    run_judge, optimize_judge = _planned(project, *(["--eval-model", flag] if flag else []))
    expected = flag or yaml_model or deployment or "gpt-4.1-mini"
    assert run_judge == optimize_judge == f"openai:{expected}@{SERVER}"


@pytest.mark.parametrize("key", ["dataset", "validation_dataset", "test_dataset"])
def test_a_dataset_path_with_nothing_there_names_eval_yaml_and_the_key(
    tmp_path: Path, key: str
) -> None:
    """A `local_uri` that points nowhere (found by the structured fuzz: `tasks.jsonltasks.jsonl`)
    is an exit-2 error naming eval.yaml and the key, in `eval run` and `optimize` alike: the
    path alone did not say which file to fix."""
    _project(tmp_path, None)
    text = (tmp_path / "eval.yaml").read_text()
    if key == "dataset":
        text = text.replace("local_uri: datasets/tasks.jsonl", "local_uri: datasets/gone.jsonl")
    else:
        text += f"{key}:\n  local_uri: datasets/gone.jsonl\n"
    (tmp_path / "eval.yaml").write_text(text)
    runner = CliRunner()
    where = f"{tmp_path / 'eval.yaml'}:{key}.local_uri: expected a dataset file or folder"
    commands = [["optimize", "--dry-run"]]
    if key == "dataset":
        commands.append(["eval", "run", "--dry-run"])
    for command in commands:
        done = runner.invoke(app, ["-C", str(tmp_path), "--no-prompt", *command])
        assert done.exit_code == 2, done.output
        assert where in " ".join(done.output.split()), done.output
        assert "gone.jsonl" in done.output

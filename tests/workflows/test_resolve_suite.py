"""The provenance test (issue 39): for a grid of where a setting can come from — a flag, the
suite file (eval.yaml or azd's evals/azure.eval.yaml), the azd environment file
`.azure/<env>/.env` and the process environment — `eval run --dry-run` and
`optimize --dry-run` print the same value from the same source for every model they share
(agent and judge), and optimize's reflection model and the other settings come from the
place the precedence says. Real CLI, real files; only the model server is absent (dry runs
send nothing)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.cli.provenance import HEADER

SERVER = "http://127.0.0.1:9/v1"
KEY = "sk-test-0000000000000000000000"
VAR = "AZURE_AI_MODEL_DEPLOYMENT_NAME"
EVAL_YAML = """name: s
agent:
  name: a
  config: .agent_configs/baseline/metadata.yaml
{agent_model}dataset:
  local_uri: datasets/tasks.jsonl
evaluators:
  - builtin.task_adherence
options:
  seed: 7
{options}"""
AZURE_YAML = """name: app
services:
  helper:
    host: azure.ai.agent
    kind: prompt
    model: agent-model
    instructions: You are a helpful support agent.
  helper-evals:
    host: azure.ai.eval
    uses: [helper]
    $ref: ./evals/azure.eval.yaml
"""
AZURE_EVAL_YAML = """datasets:
  - {{name: golden, file: ./datasets/tasks.jsonl}}
evals:
  - name: regression
    dataset: golden
    target: {{type: agent, name: helper}}
    evaluators:
      - {{evaluator: builtin.task_adherence{params}}}
"""


def _rows(root: Path, count: int = 10) -> str:
    polite = [{"name": "polite", "instruction": "Polite."}]
    rows = [{"name": f"t{i}", "query": f"q {i}", "criteria": polite} for i in range(count)]
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def _azd_env(root: Path, deployment: str | None) -> None:
    (root / ".azure" / "dev").mkdir(parents=True)
    (root / ".azure" / "config.json").write_text('{"version": 1, "defaultEnvironment": "dev"}')
    line = f'{VAR}="{deployment}"\n' if deployment else ""
    (root / ".azure" / "dev" / ".env").write_text('AZURE_ENV_NAME="dev"\n' + line)


def eval_yaml_project(root: Path, in_file: bool, deployment: str | None) -> None:
    """A prompt agent in `.agent_configs/`, an eval.yaml, an azd environment."""
    base = root / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "metadata.yaml").write_text("model: agent-model\ninstruction_file: instructions.md\n")
    (base / "instructions.md").write_text("You are a helpful support agent.\n")
    (root / "datasets").mkdir()
    (root / "datasets" / "tasks.jsonl").write_text(_rows(root))
    options = "  eval_model: file-judge\n  optimization_model: file-reflector\n" if in_file else ""
    agent = "  model: file-agent\n" if in_file else ""
    (root / "eval.yaml").write_text(EVAL_YAML.format(agent_model=agent, options=options))
    _azd_env(root, deployment)


def azure_eval_project(root: Path, in_file: bool, deployment: str | None) -> None:
    """azd's evaluations extension: azure.yaml with an agent and an eval service."""
    (root / "azure.yaml").write_text(AZURE_YAML)
    (root / "evals" / "datasets").mkdir(parents=True)
    (root / "evals" / "datasets" / "tasks.jsonl").write_text(_rows(root))
    params = ", initialization_parameters: {model: file-judge}" if in_file else ""
    (root / "evals" / "azure.eval.yaml").write_text(AZURE_EVAL_YAML.format(params=params))
    _azd_env(root, deployment)


def settings_of(output: str) -> dict[str, tuple[str, str]]:
    """The provenance table of a dry run: setting → (value, source)."""
    lines = output.splitlines()
    assert HEADER in lines, output
    table: dict[str, tuple[str, str]] = {}
    for line in lines[lines.index(HEADER) + 1 :]:
        found = re.match(r"^  ([\w.-]+)\s+(\S+)\s+(.+)$", line)
        if not found:
            break
        table[found.group(1)] = (found.group(2), found.group(3).strip())
    return table


def dry_runs(root: Path, run_args: list[str], opt_args: list[str]) -> tuple[dict, dict]:  # type: ignore[type-arg]
    runner = CliRunner()
    base = ["-C", str(root), "--no-prompt"]
    run = runner.invoke(app, [*base, "eval", "run", "--dry-run", *run_args])
    assert run.exit_code == 0, run.output
    opt = runner.invoke(app, [*base, "optimize", "--dry-run", *opt_args])
    assert opt.exit_code == 0, opt.output
    return settings_of(run.output), settings_of(opt.output)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", SERVER)
    for name in (VAR, "AZURE_ENV_NAME", "AZURE_AI_MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


GRID = list(itertools.product([False, True], [False, True], [None, "env-file"], [None, "env-var"]))


def expected_judge(flag: bool, in_file: bool, env_file: str | None, env_var: str | None,
                   file_label: str) -> tuple[str, str]:  # fmt: skip
    """The precedence, written out: flag, suite file, process environment, azd env file."""
    if flag:
        return "flag-judge", "--eval-model"
    if in_file:
        return "file-judge", file_label
    if env_var:
        return env_var, f"environment variable {VAR}"
    if env_file:
        return env_file, f".azure/dev/.env {VAR}"
    return "gpt-4.1-mini", "default"


@pytest.mark.parametrize(("flag", "in_file", "env_file", "env_var"), GRID)
def test_eval_yaml_grid_resolves_every_model_the_same_way(
    project: Path,
    env: pytest.MonkeyPatch,
    flag: bool,
    in_file: bool,
    env_file: str | None,
    env_var: str | None,
) -> None:
    eval_yaml_project(project, in_file, env_file)
    if env_var:
        env.setenv(VAR, env_var)
    judge = ["--eval-model", "flag-judge"] if flag else []
    reflect = ["--optimize-model", "flag-reflector"] if flag else []
    run, opt = dry_runs(project, [*judge, "--seed", "3"] if flag else [], [*judge, *reflect])
    assert run["judge_model"] == opt["judge_model"]
    assert run["agent_model"] == opt["agent_model"]
    value, source = run["judge_model"]
    assert (value, re.sub(r" \(line \d+\)$", "", source)) == expected_judge(
        flag, in_file, env_file, env_var, "eval.yaml options.eval_model"
    )
    if in_file and not flag:
        assert source == "eval.yaml options.eval_model (line 12)"
    if in_file:
        assert run["agent_model"] == ("file-agent", "eval.yaml agent.model (line 5)")
    else:
        assert run["agent_model"] == ("agent-model", ".agent_configs/baseline/metadata.yaml")
    reflector = opt["optimization_model"]
    if flag:
        assert reflector == ("flag-reflector", "--optimize-model")
        assert run["seed"] == ("3", "--seed")
    elif in_file:
        assert reflector == ("file-reflector", "eval.yaml options.optimization_model (line 13)")
    else:
        assert reflector == ("-", "default")
    if not flag:  # the same key, the same line, in both commands
        line = 11 if in_file else 10  # agent.model takes a line above it
        assert run["seed"] == opt["seed"] == ("7", f"eval.yaml options.seed (line {line})")


@pytest.mark.parametrize(("flag", "in_file", "env_file", "env_var"), GRID)
def test_azure_eval_yaml_grid_resolves_every_model_the_same_way(
    project: Path,
    env: pytest.MonkeyPatch,
    flag: bool,
    in_file: bool,
    env_file: str | None,
    env_var: str | None,
) -> None:
    azure_eval_project(project, in_file, env_file)
    if env_var:
        env.setenv(VAR, env_var)
    suite = ["--config", "evals/azure.eval.yaml", "--eval", "regression"]
    judge = ["--eval-model", "flag-judge"] if flag else []
    run, opt = dry_runs(project, [*suite, *judge], [*suite, *judge])
    assert run["judge_model"] == opt["judge_model"]
    assert run["agent_model"] == opt["agent_model"] == ("agent-model", "azure.yaml (inline)")
    label = "evals/azure.eval.yaml eval 'regression' evaluators[].initialization_parameters.model"
    assert run["judge_model"] == expected_judge(flag, in_file, env_file, env_var, label)


def test_no_secret_in_the_table_and_debug_logs_it(project: Path, env: pytest.MonkeyPatch) -> None:
    """A value shaped like a credential (here the API key passed by mistake as the judge) is
    masked in the table; --debug writes the table to the debug log."""
    eval_yaml_project(project, False, None)
    runner = CliRunner()
    args = ["-C", str(project), "--no-prompt", "--debug", "eval", "run", "--dry-run"]
    out = runner.invoke(app, [*args, "--eval-model", KEY])
    table = settings_of(out.output)
    assert table["judge_model"] == ("***", "--eval-model")
    assert KEY not in "\n".join(out.output.splitlines()[: len(table) + 2])
    log = (project / ".agentopt" / "agentopt.log").read_text(encoding="utf-8")
    assert "setting judge_model" in log and "setting agent_model" in log

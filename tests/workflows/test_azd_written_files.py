"""A project as azd writes it: versions "1.0" (azd's dataset client mints "1.0" and bumps it
to "2.0": `NextVersion`, internal/pkg/agents/dataset_api/models.go in Azure/azure-dev), a
dataset `local_uri` that is a folder (`datasets/<name>`: `DatasetLocalURI`,
internal/pkg/agents/eval_api/artifacts.go) holding the generator's `<suite>_dg.jsonl` rows
`{id, description, query, candidate_response}`. It validates, runs and updates, and the
versions it writes keep azd's style.

No azd-written dataset is published in a public repository, so the files below are built from
those source rules rather than copied."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.versions import (
    find_version,
    latest_version,
    next_version,
    same_version,
    version_problem,
)
from agentopt.datasets import load_dataset
from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest
from agentopt.registry import Registry

EVAL_YAML = """\
name: support-eval
agent:
  name: support-agent
  kind: prompt
  config: .agent_configs/baseline/metadata.yaml
dataset:
  name: support-agent-eval-seed
  version: "1.0"
  local_uri: datasets/support-agent-eval-seed
evaluators:
  - builtin.task_adherence
  - name: support-agent-quality
    version: "1.0"
    local_uri: evaluators/support-agent-quality/rubric_dimensions.json
options:
  eval_model: mock:azdjudge
"""
ROWS = [
    {
        "id": "1",
        "description": "Return window question",
        "query": "How long do I have to return an item?",
        "candidate_response": "You have 30 days to return an item.",
    },
    {
        "id": "2",
        "description": "Shipping cost question",
        "query": "Is shipping free?",
        "candidate_response": "Shipping is free on orders over $35.",
    },
]
RUBRIC = [
    {"id": "return_accuracy", "description": "States the return window.", "weight": 10},
    {
        "id": "general_quality",
        "description": "Other quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def judge_reply(request: ChatRequest) -> str:
    """The judge: every rubric dimension 4/5, the agent's instructions followed."""
    name = (request.response_format or {})["json_schema"]["name"]
    if name == "rubric":
        rows = [{"id": d["id"], "applicable": True, "score": 4, "reason": "ok"} for d in RUBRIC]
        return json.dumps({"dimensions": rows})
    verdict = {"name": "follows_instructions", "passed": True, "reason": "ok"}
    return json.dumps({"verdicts": [verdict]})


@pytest.fixture
def azd_project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "support-agent"
    data = root / "datasets" / "support-agent-eval-seed"
    data.mkdir(parents=True)
    (data / "support-eval_dg.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8"
    )
    rubric = root / "evaluators" / "support-agent-quality"
    rubric.mkdir(parents=True)
    (rubric / "rubric_dimensions.json").write_text(json.dumps(RUBRIC), encoding="utf-8")
    baseline = root / ".agent_configs" / "baseline"
    baseline.mkdir(parents=True)
    (baseline / "metadata.yaml").write_text(
        "instruction_file: instructions.md\nmodel: mock:echo\n", encoding="utf-8"
    )
    (baseline / "instructions.md").write_text("You are a support agent.", encoding="utf-8")
    (root / "eval.yaml").write_text(EVAL_YAML, encoding="utf-8")
    register_mock("azdjudge", judge_reply)
    yield root
    unregister_mock("azdjudge")


def test_azd_versions_and_dg_rows_validate_without_a_warning(azd_project: Path) -> None:
    dataset = "datasets/support-agent-eval-seed"
    code, out = cli(azd_project, "eval", "validate", "eval.yaml", dataset)
    assert code == 0, out
    assert "warning" not in out and "error" not in out
    assert out.count("ok  ") == 2


def test_the_azd_project_runs_with_dg_ids_as_task_names(azd_project: Path) -> None:
    code, out = cli(azd_project, "eval", "run")
    assert code == 0, out
    assert "support-agent-quality" in out and "Pass rate 100.0% (2/2 task runs)" in out
    [run] = (azd_project / ".agentopt" / "runs").iterdir()
    results = json.loads((run / "results.json").read_text())
    tasks = results["tasks"] if "tasks" in results else results["items"]
    names = sorted(str(t.get("name") or t.get("id")) for t in tasks)
    assert names == ["1", "2"]
    dataset = load_dataset(azd_project / "datasets" / "support-agent-eval-seed")
    assert dataset.tasks[0].metadata == {"candidate_response": ROWS[0]["candidate_response"]}
    assert ROWS[1]["candidate_response"] in json.dumps(results)  # recorded, never scored


def test_update_writes_the_next_version_in_azds_style(azd_project: Path) -> None:
    rows = azd_project / "datasets" / "support-agent-eval-seed" / "support-eval_dg.jsonl"
    edited = [*ROWS, {**ROWS[0], "id": "3", "query": "Can I return a gift?"}]
    rows.write_text("".join(json.dumps(r) + "\n" for r in edited), encoding="utf-8")
    code, out = cli(azd_project, "eval", "update")
    assert code == 0, out
    assert "✓ Dataset support-agent-eval-seed → version 2.0" in out
    assert "✓ Evaluator support-agent-quality → version 2.0" in out
    text = (azd_project / "eval.yaml").read_text()
    assert text.count('version: "2.0"') == 2 and "1.0" not in text
    registry = Registry(azd_project)
    assert registry.versions("datasets", "support-agent-eval-seed") == ["2.0"]
    assert registry.lookup("datasets", "support-agent-eval-seed", "2.0").name == (
        "support-agent-eval-seed.v2.0.jsonl"
    )
    # Nothing changed since: "unchanged", and eval.yaml is left as it is.
    before = (azd_project / "eval.yaml").read_bytes()
    code, out = cli(azd_project, "eval", "update")
    assert code == 0, out
    assert "= Dataset support-agent-eval-seed unchanged (version 2.0)" in out
    assert (azd_project / "eval.yaml").read_bytes() == before
    # A pin written "2" by hand names the same version.
    (azd_project / "eval.yaml").write_text(text.replace('"2.0"', '"2"'), encoding="utf-8")
    code, out = cli(azd_project, "eval", "run")
    assert code == 0, out


@pytest.mark.parametrize(
    ("current", "following"),
    [(None, "1"), ("1", "2"), ("1.0", "2.0"), ("2.5", "3.0"), ("v3", "v4"), ("beta", "beta.1")],
)
def test_next_version_keeps_the_style(current: str | None, following: str) -> None:
    assert next_version(current) == following


def test_versions_compare_by_number_and_sort_naturally() -> None:
    assert same_version("1", "1.0") and not same_version("1", "1.1")
    assert find_version(["1", "2"], "2.0") == "2" and find_version(["1"], "3") is None
    assert latest_version(["9", "10", "2.0"]) == "10"
    assert version_problem("1.0") is None and version_problem(2) is None
    assert version_problem("../1") and version_problem("latest") and version_problem("")

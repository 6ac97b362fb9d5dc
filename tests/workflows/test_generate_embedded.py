"""`eval generate` with the embedded model for real: no provider is configured, so the default
eval model falls back to `local:smollm2-135m`, whose replies are decoded under the grammar of
the bounded schemas. Quality aside, it must finish and write files that validate.

Kept small (2 tasks, one of them a thread): under a minute on one thread of a 2-core machine.
How tasks are spread over categories is tested with fake servers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.rubric import load_rubric
from agentopt.datasets import load_dataset
from agentopt.registry import Registry
from agentopt.workflows.generate.schemas import CRITERION_WORDS, QUERY_WORDS, words

INSTRUCTION = "A support agent for an online shoe store: refunds, shipping and order status."


def _agentopt(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.local
def test_embedded_model_generates_a_valid_suite(project: Path) -> None:
    code, out = _agentopt(
        project, "eval", "generate", "-g", INSTRUCTION,
        "--max-samples", "2", "--categories", "core", "--multi-turn", "1",
    )  # fmt: skip
    assert code == 0, out
    assert "runs on the embedded" in out and "local:smollm2-135m" in out
    assert "Self-check:" in out  # it ran; a 135M judge may fail good > bad (a warning only)

    name = project.name
    ds_copy = project / "datasets" / f"{name}-eval-seed" / f"{name}-eval-seed.jsonl"
    rubric_copy = project / "evaluators" / f"{name}-quality" / "rubric_dimensions.json"
    code, out = _agentopt(project, "eval", "validate", "eval.yaml", str(ds_copy), str(rubric_copy))
    assert code == 0, out

    tasks = load_dataset(ds_copy).tasks
    assert [(t.category, t.is_multi_turn) for t in tasks] == [
        ("core", False),
        ("core", True),
    ]
    # The texts have the bounded schema's form: the grammar, not luck, made them valid.
    query, instruction = words(*QUERY_WORDS)["pattern"], words(*CRITERION_WORDS)["pattern"]
    for task in tasks:
        assert 2 <= len(task.criteria) <= 4
        assert all(re.fullmatch(instruction, c.instruction) for c in task.criteria), task
        assert all(re.fullmatch(query, turn.query) for turn in task.turns), task
    assert len({t.query for t in tasks}) == 2

    dims = load_rubric(rubric_copy)
    assert 5 <= len(dims) <= 7 and dims[-1].id == "general_quality"  # 4–6 for the embedded model
    assert sum(8 <= d.weight <= 10 for d in dims) == 1

    registry = Registry(project)
    assert registry.versions("datasets", f"{name}-eval-seed") == ["1"]
    assert registry.versions("evaluators", f"{name}-quality") == ["1"]
    config, warnings = load_eval_config(project / "eval.yaml")
    assert warnings == [] and config.dataset is not None and config.dataset.version == "1"

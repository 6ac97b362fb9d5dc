"""The bundled example (examples/support-agent) loads cleanly through every loader."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from agentopt.core.files.agent_config import load_agent_config
from agentopt.core.files.azure_yaml import load_azure_yaml, read_service_agent
from agentopt.core.files.eval_yaml_load import load_eval_config, validate_eval_config
from agentopt.core.files.evaluator_yaml import RubricDefinition, load_evaluator_yaml
from agentopt.core.files.rubric import load_rubric
from agentopt.datasets import load_dataset
from agentopt.registry import Registry, evaluator_sha256
from agentopt.workflows.detect import detect_target

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"


@pytest.mark.parametrize("config", ["eval.yaml", "eval.judge.yaml"])
def test_eval_configs_load_without_warnings_and_files_exist(config: str) -> None:
    cfg, warnings = load_eval_config(EXAMPLE / config)
    assert warnings == []
    assert validate_eval_config(EXAMPLE / config) == []
    assert cfg.dataset is not None
    assert (cfg.dataset.name, cfg.dataset.version) == ("support-agent-eval-seed", "1")


def test_offline_suite_uses_no_judge() -> None:
    cfg, _ = load_eval_config(EXAMPLE / "eval.yaml")
    assert [e.name for e in cfg.evaluators] == ["builtin.exact_match"]
    assert cfg.evaluators[0].initialization_parameters == {"mode": "contains"}


def test_the_baseline_misses_two_policies_that_twelve_tasks_check() -> None:
    """The demo's story: the policies are in the tasks (ground truth and criteria), not in the
    baseline instructions; the optimizer has to learn them from the failures."""
    baseline, _ = load_agent_config(EXAMPLE / ".agent_configs/baseline")
    instructions = baseline.instructions or ""
    tasks = load_dataset(EXAMPLE / "datasets/support-agent-eval-seed/support-agent-eval-seed.jsonl")
    by_truth: dict[str, int] = {}
    for task in tasks.tasks:
        by_truth[task.ground_truth or ""] = by_truth.get(task.ground_truth or "", 0) + 1
    assert by_truth["45 days"] == 6 and by_truth["$35"] == 6
    assert "45" not in instructions and "$35" not in instructions
    assert "3 to 5 business days" in instructions and "photo" in instructions


def test_dataset_copy_equals_registered_v1_and_loads() -> None:
    copy = EXAMPLE / "datasets/support-agent-eval-seed/support-agent-eval-seed.jsonl"
    reg = Registry(EXAMPLE)
    registered = reg.lookup("datasets", "support-agent-eval-seed", "1")
    assert copy.read_bytes() == registered.read_bytes()
    dataset = load_dataset(copy)
    assert len(dataset.tasks) == 18
    for task in dataset.tasks:
        assert task.ground_truth and len(task.ground_truth) <= 45
        assert len(task.criteria) == 1


def test_rubric_copy_equals_registered_v1() -> None:
    dims = load_rubric(EXAMPLE / "evaluators/support-agent-quality/rubric_dimensions.json")
    spec = load_evaluator_yaml(Registry(EXAMPLE).lookup("evaluators", "support-agent-quality", "1"))
    assert isinstance(spec.definition, RubricDefinition)
    assert spec.definition.dimensions == dims
    assert [d.id for d in dims if d.always_applicable] == ["general_quality"]


def test_registry_hashes_match_files() -> None:
    reg = Registry(EXAMPLE)
    assert reg.verify() == []
    index = json.loads((EXAMPLE / ".azure/.foundry/registry.json").read_text(encoding="utf-8"))
    entry = index["datasets"]["support-agent-eval-seed"]["versions"]["1"]
    data = (EXAMPLE / ".azure/.foundry" / entry["file"]).read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    spec = reg.read_evaluator("support-agent-quality", "1")
    assert index["evaluators"]["support-agent-quality"]["versions"]["1"][
        "sha256"
    ] == evaluator_sha256(spec)
    assert not (EXAMPLE / ".azure/.foundry/.lock").exists()


def test_reregistering_the_copies_is_unchanged(tmp_path: Path) -> None:
    project = tmp_path / "support-agent"
    shutil.copytree(EXAMPLE, project)
    reg = Registry(project)
    data = (project / "datasets/support-agent-eval-seed/support-agent-eval-seed.jsonl").read_bytes()
    assert reg.register_dataset("support-agent-eval-seed", data) == ("1", False)
    spec = reg.read_evaluator("support-agent-quality")
    assert reg.register_evaluator("support-agent-quality", spec) == ("1", False)


def test_agent_loads_from_azure_yaml_and_baseline() -> None:
    azure = load_azure_yaml(EXAMPLE / "azure.yaml")
    assert azure.agent_services == ["support-agent"]
    inline, warnings = read_service_agent(azure, "support-agent")
    assert warnings == [] and inline.kind == "prompt"
    baseline, warnings = load_agent_config(EXAMPLE / ".agent_configs/baseline")
    assert warnings == []
    assert baseline.model == "local:smollm2-135m" and baseline.max_tokens == 60
    assert baseline.tools == [] and baseline.skills == []  # a 135M model calls tools at random
    assert inline.instructions == baseline.instructions


def test_detection_in_the_example(tmp_path: Path) -> None:
    project = tmp_path / "support-agent"
    shutil.copytree(EXAMPLE, project)
    (tmp_path / ".git").mkdir()
    found = detect_target(project, environ={})
    assert (found.service, found.kind, found.target) == ("support-agent", "prompt", "local")
    assert found.warnings == []
    assert found.definition is not None and found.definition.model == "local:smollm2-135m"
    assert found.definition.max_tokens == 60  # the baseline's setting survives the merge

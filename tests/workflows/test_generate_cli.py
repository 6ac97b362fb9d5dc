"""`agentopt eval generate` end to end in a temp project (typer's CliRunner, --no-prompt)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.rubric import load_rubric
from agentopt.datasets import load_dataset
from agentopt.registry import Registry
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

INSTRUCTION = "A support agent for an online store that answers refund and shipping questions."


def _run(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), "eval", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _generate(project: Path, gen: ScriptedGenerator, *extra: str) -> tuple[int, str]:
    return _run(project, "generate", "-g", INSTRUCTION, "--eval-model", gen.model, *extra)


def test_generate_writes_registers_and_pins_the_suite(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    code, out = _generate(project, gen, "--max-samples", "8", "--name", "smoke")
    assert code == 0, out
    name = project.name
    ds_copy = project / "datasets" / f"{name}-eval-seed" / f"{name}-eval-seed.jsonl"
    rubric_copy = project / "evaluators" / f"{name}-quality" / "rubric_dimensions.json"
    assert len(load_dataset(ds_copy).tasks) == 8
    dims = load_rubric(rubric_copy)
    registry = Registry(project)
    assert registry.versions("datasets", f"{name}-eval-seed") == ["1"]
    assert registry.versions("evaluators", f"{name}-quality") == ["1"]
    registered = registry.lookup("datasets", f"{name}-eval-seed", "1")
    assert registered.read_bytes() == ds_copy.read_bytes()
    spec = registry.read_evaluator(f"{name}-quality", "1")
    assert spec.type == "rubric" and spec.definition.dimensions == dims  # type: ignore[union-attr]
    assert registry.entry("datasets", f"{name}-eval-seed", "1").source["kind"] == "generated"

    config, warnings = load_eval_config(project / "eval.yaml")
    assert warnings == []
    assert config.name == "smoke" and config.max_samples == 8
    assert config.dataset is not None and config.dataset.version == "1"
    assert config.dataset.local_uri == ds_copy.resolve()
    assert [(e.name, e.version) for e in config.evaluators] == [(f"{name}-quality", "1")]
    assert config.options.eval_model == gen.model
    text = (project / "eval.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Evaluation suite for") and "agentopt eval update" in text

    lines = out.splitlines()
    start = lines.index("Eval suite created")
    assert lines[start + 1] == "   Config:     eval.yaml"
    assert lines[start + 2].startswith(f"   Dataset:    {name}-eval-seed (1)  datasets/")
    assert lines[start + 3].startswith(f"   Evaluator:  {name}-quality (1)    evaluators/")
    assert lines[start + 3].endswith("rubric_dimensions.json")
    assert lines[start + 4] == "   Evaluator dimensions (5):  weight  dimension"
    assert lines[start + 5].startswith(" " * 34 + "10  refund_accuracy ")
    assert "Self-check: ✓ good answers outscore poor ones on 2/2 tasks" in out
    assert "Next steps:" in out
    for command in ("agentopt eval run", "agentopt eval update", "agentopt optimize"):
        assert command in out


def test_existing_eval_yaml_is_kept_under_no_prompt(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    assert _generate(project, gen, "--max-samples", "4")[0] == 0
    before = (project / "eval.yaml").read_bytes()
    calls = len(gen.requests)
    code, out = _generate(project, gen, "--max-samples", "6", "--seed", "5")
    assert code == 0
    assert "already exists; kept it unchanged (--no-prompt)" in out
    assert "--reset-defaults" in out
    assert (project / "eval.yaml").read_bytes() == before
    assert len(gen.requests) == calls  # nothing was generated


def test_reset_defaults_regenerates_with_a_backup_and_the_cache_makes_a_rerun_free(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    assert _generate(project, gen, "--max-samples", "5", "--seed", "1")[0] == 0
    ds_copy = next((project / "datasets").rglob("*.jsonl"))
    first = ds_copy.read_bytes()
    calls = len(gen.requests)
    # Same inputs: every call is a cache hit, the files are identical, no new version.
    code, out = _generate(project, gen, "--max-samples", "5", "--seed", "1", "--reset-defaults")
    assert code == 0, out
    assert len(gen.requests) == calls and ds_copy.read_bytes() == first
    assert f"{project.name}-eval-seed (1)" in out and "(unchanged)" in out
    assert list(project.glob("eval.yaml.bak.*"))
    # Another seed: new tasks, version 2, the old working copy backed up.
    code, out = _generate(project, gen, "--max-samples", "5", "--seed", "2", "--reset-defaults")
    assert code == 0, out
    assert ds_copy.read_bytes() != first
    assert Registry(project).versions("datasets", f"{project.name}-eval-seed") == ["1", "2"]
    backups = list(ds_copy.parent.glob("*.bak.*"))
    assert backups and backups[0].read_bytes() == first
    assert load_eval_config(project / "eval.yaml")[0].dataset.version == "2"  # type: ignore[union-attr]


def test_same_seed_in_two_projects_gives_identical_files(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(invalid_every=5, duplicate_every=7)
    outputs = []
    for folder in ("a", "b"):
        project = tmp_path / folder / "shop"
        project.mkdir(parents=True)
        assert _generate(project, gen, "--max-samples", "9", "--multi-turn", "1")[0] == 0
        outputs.append(
            [
                (project / "datasets/shop-eval-seed/shop-eval-seed.jsonl").read_bytes(),
                (project / "evaluators/shop-quality/rubric_dimensions.json").read_bytes(),
                (project / "eval.yaml").read_bytes(),
            ]
        )
    assert outputs[0] == outputs[1]


def test_bring_your_own_dataset_generates_only_the_rubric(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    mine = project / "my_tasks.jsonl"
    mine.write_text(
        "\n".join(
            json.dumps({"name": f"t{i}", "query": f"Where is my order number {i}?"})
            for i in range(3)
        )
        + "\n",
        encoding="utf-8",
    )
    code, out = _generate(project, gen, "--dataset", "my_tasks.jsonl", "--evaluator", "Relevance")
    assert code == 0, out
    assert gen.calls("generated_tasks") == 0 and gen.calls("rubric_dimensions") == 1
    assert not (project / "datasets").exists()
    registry = Registry(project)
    name = f"{project.name}-eval-seed"
    assert registry.lookup("datasets", name, "1").read_bytes() == mine.read_bytes()
    assert registry.entry("datasets", name, "1").source == {"kind": "imported", "file": mine.name}
    config, warnings = load_eval_config(project / "eval.yaml")
    assert warnings == [] and config.max_samples is None
    assert config.dataset is not None and config.dataset.local_uri == mine.resolve()
    # The extra evaluator comes before the generated rubric.
    assert [e.name for e in config.evaluators] == ["Relevance", f"{project.name}-quality"]
    assert f"Dataset:    {name} (1)  my_tasks.jsonl" in out
    assert f"Importing my_tasks.jsonl; generating a rubric with {gen.model} …" in out
    assert "2/2 tasks" in out  # the self-check used the user's tasks


def test_missing_instruction_and_unknown_evaluator_are_clear_errors(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    code, out = _run(project, "generate", "--eval-model", gen.model)
    assert code == 2
    assert "a generation instruction is required" in out
    assert "pass -g/--gen-instruction or --gen-instruction-file" in out
    code, out = _generate(project, gen, "--evaluator", "Relevanse")
    assert code == 2 and "unknown evaluator 'Relevanse'" in out and "did you mean" in out
    assert gen.requests == [] and not (project / "eval.yaml").exists()


def test_instruction_file_categories_and_out_file(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    brief = project / "brief.md"
    brief.write_text("An HR assistant for leave policies.\n", encoding="utf-8")
    code, out = _run(
        project,
        "generate",
        "--gen-instruction-file",
        "brief.md",
        "--eval-model",
        gen.model,
        "--max-samples",
        "4",
        "--categories",
        "core,adversarial",
        "--out-file",
        "suites/hr.yaml",
    )
    assert code == 0, out
    config_path = project / "suites" / "hr.yaml"
    config, warnings = load_eval_config(config_path)
    assert warnings == []
    tasks = load_dataset(config.dataset.local_uri).tasks  # type: ignore[union-attr, arg-type]
    assert sorted(t.category or "" for t in tasks) == ["adversarial"] * 2 + ["core"] * 2
    assert config.dataset.local_uri.is_relative_to(project / "suites")  # type: ignore[union-attr]
    assert "An HR assistant for leave policies." in (gen.requests[0].messages[-1].content or "")
    assert "Config:     suites/hr.yaml" in out
    assert yaml.safe_load(config_path.read_text())["dataset"]["local_uri"].startswith("datasets/")


def test_generator_shortfall_exits_3_and_writes_nothing(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(max_distinct=2)
    code, out = _generate(project, gen, "--max-samples", "6", "--categories", "core")
    assert code == 3
    assert "the generator returned only 2 distinct valid tasks of the 6 asked for" in out
    assert not (project / "eval.yaml").exists() and not (project / ".azure").exists()


@pytest.mark.parametrize("flag", ["--remote"])
def test_remote_without_an_endpoint_is_a_config_error(
    project: Path, generator: Callable[..., ScriptedGenerator], flag: str
) -> None:
    gen = generator()
    code, out = _generate(project, gen, flag)
    assert code == 2 and "needs a Foundry project endpoint" in out
    assert "FOUNDRY_PROJECT_ENDPOINT" in out and gen.requests == []


def test_a_failed_self_check_warns_but_the_suite_is_registered(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(judge_can_tell=False)
    code, out = _generate(project, gen, "--max-samples", "3")
    assert code == 0, out
    assert "warning: rubric self-check: the rubric did not score a good answer above" in out
    assert "Self-check: ⚠ the rubric did not score a good answer above a poor one" in out
    assert Registry(project).versions("evaluators", f"{project.name}-quality") == ["1"]
    assert load_eval_config(project / "eval.yaml")[0].evaluators


def test_reset_defaults_replaces_a_broken_eval_yaml(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    (project / "eval.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    code, out = _generate(project, gen, "--max-samples", "2")
    assert code == 2 and "eval.yaml" in out and "invalid YAML" in out
    code, out = _generate(project, gen, "--max-samples", "2", "--reset-defaults")
    assert code == 0, out
    assert load_eval_config(project / "eval.yaml")[1] == []
    backup = next(project.glob("eval.yaml.bak.*"))
    assert backup.read_text(encoding="utf-8") == "name: [unclosed\n"


def test_reset_defaults_keeps_how_the_agent_is_reached_and_other_options(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    (project / "eval.yaml").write_text(
        "name: old\n"
        "agent: {name: shopbot, target: endpoint, endpoint: 'http://127.0.0.1:9/v1'}\n"
        "evaluators: [builtin.fluency]\n"
        "options: {eval_model: old-model, judge_concurrency: 3}\n",
        encoding="utf-8",
    )
    code, out = _generate(project, gen, "--max-samples", "2", "--reset-defaults")
    assert code == 0, out
    config, warnings = load_eval_config(project / "eval.yaml")
    assert warnings == []
    assert config.agent is not None
    assert (config.agent.name, config.agent.target, config.agent.endpoint) == (
        "shopbot",
        "endpoint",
        "http://127.0.0.1:9/v1",
    )
    assert config.options.judge_concurrency == 3 and config.options.eval_model == gen.model
    assert [e.name for e in config.evaluators] == ["shopbot-quality"]
    assert config.dataset is not None and config.dataset.name == "shopbot-eval-seed"


def test_a_conversation_level_suite_gets_simulated_user_tasks(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    code, out = _generate(
        project, gen, "--max-samples", "6", "--multi-turn", "2", "--evaluation-level",
        "conversation",
    )  # fmt: skip
    assert code == 0, out
    config, warnings = load_eval_config(project / "eval.yaml")
    assert warnings == [] and config.options.evaluation_level == "conversation"
    assert config.dataset is not None and config.dataset.local_uri is not None
    tasks = load_dataset(config.dataset.local_uri).tasks
    simulated = [t for t in tasks if t.goal]
    assert len(simulated) == 2 and all(t.persona and t.stop_when for t in simulated)
    assert not any(t.is_multi_turn for t in tasks)

    # Regenerating the suite keeps its level: --multi-turn again means simulated-user tasks.
    again = generator()
    code, out = _generate(project, again, "--max-samples", "4", "--multi-turn", "1",
                          "--reset-defaults")  # fmt: skip
    assert code == 0, out
    assert again.calls("generated_conversations") >= 1 and again.calls("generated_threads") == 0

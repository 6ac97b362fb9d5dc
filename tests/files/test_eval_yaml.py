"""eval.yaml: canonical keys, every alias, did-you-mean warnings, located errors, writers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.core.files.eval_yaml import EvalConfig, InstructionFile
from agentopt.core.files.eval_yaml_load import (
    load_eval_config,
    parse_eval_config,
    validate_eval_config,
)
from agentopt.core.files.eval_yaml_write import (
    dump_eval_config,
    update_pinned_versions,
    write_eval_config,
)

REPO = Path(__file__).resolve().parents[2]

CANONICAL = """\
name: support-smoke
agent:
  name: support-agent
  kind: prompt
  version: 3
  config: .agent_configs/baseline/metadata.yaml
  target: local
dataset:
  name: support-agent-eval-seed
  version: "1"
  local_uri: datasets/support-agent-eval-seed
evaluators:
  - builtin.task_adherence
  - name: support-agent-quality
    version: 1
    local_uri: evaluators/support-agent-quality/rubric_dimensions.json
  - name: builtin.regex_match
    initialization_parameters: {patterns: ["(?i)refund"]}
options:
  eval_model: gpt-4.1-mini
  max_candidates: 5
  optimization_config:
    model_search_space: [gpt-4.1, gpt-4.1-mini]
max_samples: 15
"""


def _write(folder: Path, text: str) -> Path:
    path = folder / "eval.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _load_text(text: str, base: Path = Path(".")) -> tuple[EvalConfig, list]:
    return parse_eval_config(text, "eval.yaml", base)


def test_canonical_file_loads_and_resolves_paths(tmp_path: Path) -> None:
    config, warnings = load_eval_config(_write(tmp_path, CANONICAL))
    assert warnings == []
    assert config.name == "support-smoke"
    assert config.agent is not None and config.agent.version == "3"
    assert config.agent.config == tmp_path.resolve() / ".agent_configs/baseline/metadata.yaml"
    assert config.dataset is not None
    assert config.dataset.local_uri == tmp_path.resolve() / "datasets/support-agent-eval-seed"
    assert [e.name for e in config.evaluators] == [
        "builtin.task_adherence",
        "support-agent-quality",
        "builtin.regex_match",
    ]
    assert config.evaluators[1].version == "1"
    assert config.evaluators[2].initialization_parameters == {"patterns": ["(?i)refund"]}
    assert config.options.optimization_config.model_search_space == ["gpt-4.1", "gpt-4.1-mini"]
    assert config.base_dir == tmp_path.resolve()


def test_example_at_repo_root_loads_without_warnings() -> None:
    config, warnings = load_eval_config(REPO / "eval.yaml.example")
    assert warnings == []
    assert config.options.providers["mylab"].api_key_env == "LAB_KEY"
    assert config.options.prices["mylab:qwen2.5"].output == 0.3
    assert config.agent is not None and config.agent.headers == {"X-Api-Key": "SUPPORT_AGENT_KEY"}


@pytest.mark.parametrize(
    ("text", "path", "value"),
    [
        ("dataset_file: data/tasks.jsonl\n", ("dataset", "local_uri"), Path("data/tasks.jsonl")),
        ("dataset_reference: {name: seed, version: '2'}\n", ("dataset", "version"), "2"),
        ("validation_reference: {name: val}\n", ("validation_dataset", "name"), "val"),
        ("options: {max_iterations: 7}\n", ("options", "max_candidates"), 7),
        ("options: {reflection_model: gpt-5.1}\n", ("options", "optimization_model"), "gpt-5.1"),
        (
            "options: {optimization_config: {model: [a, b]}}\n",
            ("options", "optimization_config", "model_search_space"),
            ["a", "b"],
        ),
    ],
)
def test_every_alias_is_read_with_one_warning(text: str, path: tuple, value: object) -> None:
    config, warnings = _load_text(text)
    node: object = config
    for key in path:
        node = getattr(node, key)
    if isinstance(value, Path):
        assert node == Path(".").resolve() / value
    else:
        assert node == value
    [warning] = warnings
    old_key = warning.location.split(" ")[0].split(".")[-1]
    assert old_key in {
        "dataset_file",
        "dataset_reference",
        "validation_reference",
        "max_iterations",
        "reflection_model",
        "model",
    }
    assert f'"{old_key}" is an old name for' in warning.message


def test_alias_and_canonical_together_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        _load_text("dataset_reference: {name: a}\ndataset: {name: b}\n")
    assert "keep one" in str(info.value)


@pytest.mark.parametrize(
    ("text", "location", "suggestion"),
    [
        ("evaluator: [x]\n", "evaluator (line 1)", "evaluators"),
        ("agent: {nmae: x}\n", "agent.nmae (line 1)", "name"),
        ("options:\n  max_stals: 3\n", "options.max_stals (line 2)", "max_stalls"),
        (
            "options:\n  optimization_config:\n    model_serch_space: [a]\n",
            "options.optimization_config.model_serch_space (line 3)",
            "model_search_space",
        ),
        ("dataset:\n  name: a\n  local_url: x\n", "dataset.local_url (line 3)", "local_uri"),
        (
            "evaluators:\n  - name: a\n    init_parameters: {}\n",
            "evaluators[0].init_parameters (line 3)",
            "initialization_parameters",
        ),
        (
            "options:\n  providers:\n    lab: {type: compat, base_ur: x}\n",
            "options.providers.lab.base_ur (line 3)",
            "base_url",
        ),
    ],
)
def test_unknown_keys_warn_with_did_you_mean(text: str, location: str, suggestion: str) -> None:
    _config, warnings = _load_text(text)
    [warning] = warnings
    assert warning.location == location
    assert f'did you mean "{suggestion}"?' in warning.message


def test_unknown_key_far_from_any_known_key_has_no_guess() -> None:
    _config, [warning] = _load_text("zzzqqq: 1\n")
    assert "did you mean" not in warning.message and "zzzqqq" in warning.message


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        (
            "agent:\n  target: locl\n",
            "agent.target (line 2)",
            'expected one of local, hosted, endpoint, command or foundry, found "locl"',
        ),
        (
            "agent:\n  kind: robot\n",
            "agent.kind (line 2)",
            'expected one of prompt or hosted, found "robot"',
        ),
        (
            "options:\n  max_candidates: lots\n",
            "options.max_candidates (line 2)",
            'expected an integer, found "lots"',
        ),
        (
            "options:\n  max_concurrent_agent_runs: 0\n",
            "options.max_concurrent_agent_runs (line 2)",
            "expected an integer ≥ 1, found 0",
        ),
        ("max_samples: 5000\n", "max_samples (line 1)", "expected an integer ≤ 1000, found 5000"),
        (
            "evaluators: builtin.relevance\n",
            "evaluators (line 1)",
            'expected a list, found "builtin.relevance"',
        ),
        (
            "evaluators:\n  - 42\n",
            "evaluators[0] (line 2)",
            "expected a name or a mapping, found 42",
        ),
        ("evaluators:\n  - version: '1'\n", "evaluators[0] (line 2)", 'missing "name"'),
        (
            "evaluators:\n  - {name: q, version: latest}\n",
            "evaluators[0].version (line 2)",
            'expected a version like "1" or "1.0" (leave it out for the latest), found "latest"',
        ),
        (
            "dataset:\n  version: '1'\n",
            "dataset (line 1)",
            "expected name (registered dataset) or local_uri",
        ),
        (
            "agent:\n  instruction: [a]\n",
            "agent.instruction (line 2)",
            "expected text or {file: path}, found a list",
        ),
        (
            "agent:\n  headers: {Authorization: 'Bearer abc'}\n",
            "agent.headers.Authorization (line 2)",
            "name of an environment variable",
        ),
        (
            "options:\n  providers:\n    lab: {base_url: x}\n",
            "options.providers.lab (line 3)",
            'missing "type"',
        ),
        (
            "options:\n  evaluation_level: turn\n",
            "options.evaluation_level (line 2)",
            "item or conversation",
        ),
        ("options:\n  fail_under: 70\n", "options.fail_under (line 2)", "≤ 1"),
        ("agent: [a]\n", "agent (line 1)", "expected a mapping, found a list"),
        ("- a\n- b\n", "", "expected a mapping with agent, dataset, evaluators; found a list"),
        ("", "", "the file is empty"),
        ("name: [oops\n", "line 2", "invalid YAML"),
        ("name: a\nname: b\n", "line 2", "invalid YAML"),
    ],
)
def test_errors_name_key_path_line_expected_and_found(
    text: str, location: str, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load_text(text)
    problems = info.value.problems
    assert any(
        p.file == "eval.yaml" and p.location == location and message in p.message for p in problems
    ), [str(p) for p in problems]


def test_all_errors_are_reported_together() -> None:
    text = "agent:\n  target: x\noptions:\n  max_stalls: 0\nmax_samples: 0\n"
    with pytest.raises(ConfigError) as info:
        _load_text(text)
    assert [p.location for p in info.value.problems] == [
        "agent.target (line 2)",
        "options.max_stalls (line 4)",
        "max_samples (line 5)",
    ]


def test_instruction_inline_and_file_forms(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "sys.md").write_text("Be brief.", encoding="utf-8")
    config, _ = load_eval_config(
        _write(tmp_path, "agent:\n  instruction: {file: prompts/sys.md}\n")
    )
    assert config.agent is not None
    assert isinstance(config.agent.instruction, InstructionFile)
    assert config.agent.instruction_text() == "Be brief."
    config, _ = _load_text("agent:\n  instruction: Be kind.\n")
    assert config.agent is not None and config.agent.instruction_text() == "Be kind."


def test_command_string_is_split_and_header_env_syntax_accepted() -> None:
    config, _ = _load_text(
        "agent:\n  command: python 'my agent.py' --fast\n  headers: {X-Key: '${LAB_KEY}'}\n"
    )
    assert config.agent is not None
    assert config.agent.command == ["python", "my agent.py", "--fast"]
    assert config.agent.headers == {"X-Key": "LAB_KEY"}


def test_validate_reports_missing_local_files(tmp_path: Path) -> None:
    problems = validate_eval_config(_write(tmp_path, CANONICAL))
    locations = {p.location for p in problems if p.severity == "error"}
    assert locations == {
        "dataset.local_uri (line 11)",
        "evaluators[1].local_uri (line 16)",
        "agent.config (line 6)",
    }
    assert validate_eval_config(tmp_path / "missing.yaml")[0].message == "file not found"


def test_duplicate_evaluator_warns() -> None:
    _config, [warning] = _load_text("evaluators: [builtin.relevance, builtin.relevance]\n")
    assert "listed twice" in warning.message


def test_dump_round_trips_with_relative_paths(tmp_path: Path) -> None:
    config, _ = load_eval_config(_write(tmp_path, CANONICAL))
    text = dump_eval_config(config)
    assert "local_uri: datasets/support-agent-eval-seed" in text
    assert "- builtin.task_adherence" in text
    other = tmp_path / "copy"
    other.mkdir()
    (other / "eval.yaml").write_text(text, encoding="utf-8")
    again, warnings = load_eval_config(other / "eval.yaml")
    assert warnings == []
    assert again.model_dump(exclude={"dataset", "evaluators", "agent"}) == config.model_dump(
        exclude={"dataset", "evaluators", "agent"}
    )
    assert again.dataset is not None and again.dataset.local_uri == (
        other.resolve() / "datasets/support-agent-eval-seed"
    )


def test_write_backs_up_an_existing_file(tmp_path: Path) -> None:
    path = _write(tmp_path, CANONICAL)
    config, _ = load_eval_config(path)
    config.max_samples = 3
    saved = write_eval_config(path, config)
    assert saved is not None and saved.read_text(encoding="utf-8") == CANONICAL
    assert load_eval_config(path)[0].max_samples == 3


def test_update_pinned_versions_keeps_comments_and_order(tmp_path: Path) -> None:
    text = "# my suite\n" + CANONICAL.replace("max_samples: 15", "max_samples: 15  # keep me")
    path = _write(tmp_path, text)
    saved = update_pinned_versions(
        path,
        datasets={"dataset": "2"},
        evaluators={"support-agent-quality": "3", "builtin.task_adherence": "1"},
    )
    assert saved is not None and saved.read_text(encoding="utf-8") == text
    new = path.read_text(encoding="utf-8")
    assert new.startswith("# my suite\nname: support-smoke\n")
    assert "max_samples: 15  # keep me" in new
    config, _ = load_eval_config(path)
    assert config.dataset is not None and config.dataset.version == "2"
    assert [(e.name, e.version) for e in config.evaluators[:2]] == [
        ("builtin.task_adherence", "1"),
        ("support-agent-quality", "3"),
    ]
    # Nothing to change: the file is left alone and no backup is made.
    assert update_pinned_versions(path, datasets={"dataset": "2"}) is None


def test_update_pinned_versions_follows_alias_section(tmp_path: Path) -> None:
    path = _write(tmp_path, "dataset_reference:\n  name: a\n  version: '1'\n")
    update_pinned_versions(path, datasets={"dataset": "4"})
    assert 'dataset_reference:\n  name: a\n  version: "4"' in path.read_text(encoding="utf-8")


def test_empty_sections_mean_not_set() -> None:
    text = "options:\n  # eval_model: x\nevaluators:\nagent:\n  headers:\n"
    config, warnings = _load_text(text)
    assert warnings == [] and config.evaluators == [] and config.options.eval_model is None
    assert config.agent is not None and config.agent.headers == {}

"""`agentopt eval update`: unchanged, edited, broken; comments and key order survive."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import InputError
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.registry import Registry
from agentopt.workflows.update import update_suite
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

HAND_WRITTEN = """\
# Our support suite. Keep this comment!
name: shop-smoke   # suite name
options:
  eval_model: {model}
evaluators:
  # the rubric, edited by the team
  - name: shop-quality
    version: "1"
    local_uri: evaluators/shop-quality/rubric_dimensions.json
  - builtin.task_adherence
dataset:
  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl
  name: shop-eval-seed   # pinned below
  version: "1"
"""


def _cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), "eval", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.fixture
def suite(tmp_path: Path, generator: Callable[..., ScriptedGenerator]) -> Path:
    """A generated suite in project `shop`, then eval.yaml rewritten by hand (comments,
    its own key order) pointing at the same registered versions."""
    project = tmp_path / "shop"
    project.mkdir()
    gen = generator()
    code, out = _cli(
        project, "generate", "-g", "A store support agent.", "--eval-model", gen.model,
        "--max-samples", "4",
    )  # fmt: skip
    assert code == 0, out
    (project / "eval.yaml").write_text(HAND_WRITTEN.format(model=gen.model), encoding="utf-8")
    return project


def _dataset(project: Path) -> Path:
    return project / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"


def _rubric(project: Path) -> Path:
    return project / "evaluators" / "shop-quality" / "rubric_dimensions.json"


def test_unchanged_copies_make_no_updates(suite: Path) -> None:
    before = (suite / "eval.yaml").read_bytes()
    code, out = _cli(suite, "update")
    assert code == 0
    assert out.splitlines() == [
        "= Dataset shop-eval-seed unchanged (version 1)",
        "= Evaluator shop-quality unchanged (version 1)",
        "No updates were made.",
    ]
    assert (suite / "eval.yaml").read_bytes() == before
    assert not list(suite.glob("eval.yaml.bak.*"))


def test_edited_dataset_becomes_version_2_and_eval_yaml_keeps_comments_and_order(
    suite: Path,
) -> None:
    with _dataset(suite).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "late_delivery", "query": "My parcel is late, help?"}) + "\n")
    code, out = _cli(suite, "update")
    assert code == 0, out
    assert out.splitlines() == [
        "✓ Dataset shop-eval-seed → version 2",
        "= Evaluator shop-quality unchanged (version 1)",
        "Done. Updated config saved to eval.yaml",
    ]
    registry = Registry(suite)
    assert registry.versions("datasets", "shop-eval-seed") == ["1", "2"]
    assert registry.lookup("datasets", "shop-eval-seed", "2").read_bytes() == (
        _dataset(suite).read_bytes()
    )
    assert registry.entry("datasets", "shop-eval-seed", "2").source["kind"] == "edited"
    text = (suite / "eval.yaml").read_text(encoding="utf-8")
    expected = HAND_WRITTEN.format(
        model=load_eval_config(suite / "eval.yaml")[0].options.eval_model
    ).split("\n")
    expected[-2] = '  version: "2"'
    assert text.split("\n")[: len(expected) - 1] == expected[:-1]
    for comment in ("# Our support suite. Keep this comment!", "# suite name",
                    "# the rubric, edited by the team", "# pinned below"):  # fmt: skip
        assert comment in text
    backups = list(suite.glob("eval.yaml.bak.*"))
    assert len(backups) == 1 and 'version: "1"' in backups[0].read_text().split("dataset:")[1]
    config, warnings = load_eval_config(suite / "eval.yaml")
    assert warnings == [] and config.dataset.version == "2"  # type: ignore[union-attr]
    # Running it again: nothing left to do.
    assert _cli(suite, "update")[1].endswith("No updates were made.\n")


def test_edited_rubric_keeps_threshold_and_only_the_evaluator_moves(suite: Path) -> None:
    rows = json.loads(_rubric(suite).read_text(encoding="utf-8"))
    rows[1]["weight"] = 2
    _rubric(suite).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    with _dataset(suite).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "extra", "query": "Do you ship abroad at all?"}) + "\n")
    code, out = _cli(suite, "update", "--evaluator-only")
    assert code == 0, out
    assert out.splitlines() == [
        "✓ Evaluator shop-quality → version 2",
        "Done. Updated config saved to eval.yaml",
    ]
    registry = Registry(suite)
    spec = registry.read_evaluator("shop-quality", "2")
    assert spec.threshold == 0.5 and spec.definition.dimensions[1].weight == 2  # type: ignore[union-attr]
    assert registry.versions("datasets", "shop-eval-seed") == ["1"]  # --evaluator-only
    config, _ = load_eval_config(suite / "eval.yaml")
    assert [(e.name, e.version) for e in config.evaluators] == [
        ("shop-quality", "2"),
        ("builtin.task_adherence", None),
    ]


def test_broken_edits_are_refused_with_file_and_line_and_nothing_is_registered(
    suite: Path,
) -> None:
    lines = _dataset(suite).read_text(encoding="utf-8").splitlines()
    lines.insert(2, '{"name": "oops", "query": ')
    _dataset(suite).write_text("\n".join(lines) + "\n", encoding="utf-8")
    rubric = _rubric(suite).read_text(encoding="utf-8").replace('"weight": 10', '"weight": 12')
    _rubric(suite).write_text(rubric, encoding="utf-8")
    registry_before = (suite / ".azure" / ".foundry" / "registry.json").read_bytes()
    yaml_before = (suite / "eval.yaml").read_bytes()
    code, out = _cli(suite, "update")
    assert code == 2
    assert "datasets/shop-eval-seed/shop-eval-seed.jsonl:line 3: expected a JSON object" in out
    weight_line = next(n for n, line in enumerate(rubric.splitlines(), 1) if '"weight": 12' in line)
    assert (
        f"evaluators/shop-quality/rubric_dimensions.json:[0].weight (line {weight_line}): "
        "expected an integer 1–10, found 12"
    ) in out
    assert "nothing was registered" in out
    assert (suite / ".azure" / ".foundry" / "registry.json").read_bytes() == registry_before
    assert (suite / "eval.yaml").read_bytes() == yaml_before


def test_library_call_reverting_to_an_older_pin_and_unpinned_sections(suite: Path) -> None:
    with _dataset(suite).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "n1", "query": "What is your phone number?"}) + "\n")
    result = update_suite(suite / "eval.yaml")
    assert result.changes[0].line() == "✓ Dataset shop-eval-seed → version 2"
    assert result.backup is not None and result.backup.is_file()
    # Pin version 1 again by hand while the working copy still holds version 2's content:
    # the copy equals the latest version, so update re-pins 2 without registering a 3rd.
    path = suite / "eval.yaml"
    path.write_text(path.read_text().replace('version: "2"', 'version: "1"'), encoding="utf-8")
    result = update_suite(path, evaluators=False)
    assert [c.line() for c in result.changes] == ["✓ Dataset shop-eval-seed → version 2"]
    assert Registry(suite).versions("datasets", "shop-eval-seed") == ["1", "2"]


def test_update_options_and_missing_config(suite: Path, tmp_path: Path) -> None:
    code, out = _cli(suite, "update", "--dataset-only", "--evaluator-only")
    assert code == 2 and "exclude each other" in out
    code, out = _cli(tmp_path, "update")
    assert code == 2 and "no eval config at eval.yaml" in out and "eval generate" in out
    with pytest.raises(InputError):
        _dataset(suite).write_text("", encoding="utf-8")
        update_suite(suite / "eval.yaml")


def test_update_from_the_azd_root_finds_the_agent_folder_eval_yaml(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(
        "services:\n  shop:\n    host: azure.ai.agent\n    project: ./agents/shop\n"
        "    kind: prompt\n    instructions: Help customers.\n",
        encoding="utf-8",
    )
    gen = generator()
    code, out = _cli(
        root, "init", "-g", "Store help.", "--eval-model", gen.model, "--max-samples", "2"
    )
    assert code == 0, out
    agent_dir = root / "agents" / "shop"
    assert (agent_dir / "eval.yaml").is_file() and (agent_dir / ".azure" / ".foundry").is_dir()
    assert "Config:     agents/shop/eval.yaml" in out
    copy = agent_dir / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"
    with copy.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "n", "query": "Can I pay by invoice?"}) + "\n")
    code, out = _cli(root, "update", "--dataset-only")
    assert code == 0, out
    assert out.splitlines() == [
        "✓ Dataset shop-eval-seed → version 2",
        "Done. Updated config saved to agents/shop/eval.yaml",
    ]

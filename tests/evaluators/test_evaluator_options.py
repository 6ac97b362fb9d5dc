"""Evaluator options are typed (options.py): an option the evaluator does not take is an
exit-2 error naming its key path and the closest known key, whichever file it came from —
eval.yaml, an M365 runevals document or evals/azure.eval.yaml — through `eval validate` and
`eval run --dry-run` alike; a value of the wrong type says what was expected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.evaluators import build_evaluator
from agentopt.evaluators.registry import registered
from tests.azd_eval.world import World, agentopt, serving

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
TASK = {"name": "t1", "query": "What is 2+2?", "expected_response": "4"}
ADHOC = ("--agent-model", "gpt-4.1-mini", "--instructions", "You answer sums.")


def one_line(text: str) -> str:
    return " ".join(text.split())


def eval_yaml_project(tmp_path: Path, params: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tasks.jsonl").write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    (tmp_path / "eval.yaml").write_text(
        "name: sums\ndataset:\n  local_uri: tasks.jsonl\nevaluators:\n"
        f"  - name: builtin.exact_match\n    initialization_parameters: {params}\n",
        encoding="utf-8",
    )
    return tmp_path


def m365_project(tmp_path: Path, evaluators: dict[str, object]) -> Path:
    (tmp_path / ".git").mkdir()
    item = {"prompt": "What is 2+2?", "expected_response": "4", "evaluators": evaluators}
    doc = {"schemaVersion": "1.11.0", "items": [item]}
    (tmp_path / "evals.json").write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


def azure_eval_project(tmp_path: Path, params: str) -> Path:
    root = tmp_path / "readme"
    shutil.copytree(REAL / "azd-eval-readme", root)
    (root / ".git").mkdir()
    path = root / "evals" / "azure.eval.yaml"
    text = path.read_text(encoding="utf-8")
    marker = "      - evaluator: support-quality\n"
    added = f"      - evaluator: builtin.exact_match\n        initialization_parameters: {params}\n"
    assert marker in text
    path.write_text(text.replace(marker, marker + added), encoding="utf-8")
    return root


def test_mdoe_in_eval_yaml_is_refused_by_validate_and_dry_run(tmp_path: Path) -> None:
    root = eval_yaml_project(tmp_path, "{mdoe: contains}")
    code, out = agentopt(root, {}, "eval", "validate", "eval.yaml")
    assert code == 2
    said = one_line(out)
    assert "evaluators[0].initialization_parameters.mdoe" in said
    assert 'unknown option "mdoe" of builtin.exact_match (did you mean "mode"?)' in said
    code, out = agentopt(root, {}, "eval", "run", "-c", "eval.yaml", "--dry-run", *ADHOC)
    assert code == 2
    said = one_line(out)
    assert "builtin.exact_match.mdoe" in said and 'did you mean "mode"?' in said


def test_the_corrected_key_is_accepted(tmp_path: Path) -> None:
    root = eval_yaml_project(tmp_path, "{mode: contains}")
    code, out = agentopt(root, {}, "eval", "validate", "eval.yaml")
    assert code == 0, out
    with serving(World()) as env:
        code, out = agentopt(root, env, "eval", "run", "-c", "eval.yaml", "--dry-run", *ADHOC)
    assert code == 0, out


def test_a_value_of_the_wrong_type_says_what_was_expected(tmp_path: Path) -> None:
    root = eval_yaml_project(tmp_path, "{mode: sometimes, case_sensitive: [1]}")
    code, out = agentopt(root, {}, "eval", "validate", "eval.yaml")
    said = one_line(out)
    assert code == 2
    assert "initialization_parameters.mode: expected 'exact' or 'contains', found 'sometimes'" in (
        said
    )
    assert "initialization_parameters.case_sensitive: expected true or false, found [1]" in said


def test_unknown_option_in_an_m365_document(tmp_path: Path) -> None:
    """The official schema types the options of the built-ins it names; the `options` bag of
    any other name reaching an agentopt built-in is checked by the evaluator's model."""
    root = m365_project(
        tmp_path, {"fluency": {"threshold": 3, "options": {"modle": "gpt-4.1-mini"}}}
    )
    code, out = agentopt(root, {}, "eval", "validate", "evals.json")
    said = one_line(out)
    assert code == 2
    assert "items[0].evaluators.fluency.modle" in said
    assert 'unknown option "modle" of builtin.fluency (did you mean "model"?)' in said
    code, out = agentopt(
        root, {}, "eval", "run", "--prompts-file", "evals.json", "--dry-run", *ADHOC
    )
    assert code == 2
    assert 'builtin.fluency.modle: unknown option "modle"' in one_line(out)


def test_typo_in_a_schema_typed_m365_builtin_suggests_the_key(tmp_path: Path) -> None:
    root = m365_project(tmp_path, {"ExactMatch": {"case_sensitve": True}})
    code, out = agentopt(root, {}, "eval", "validate", "evals.json")
    assert code == 2
    said = one_line(out)
    assert "items[0].evaluators.ExactMatch.case_sensitve" in said
    assert 'did you mean "case_sensitive"?' in said


def test_mdoe_in_azure_eval_yaml_is_refused_by_validate_and_dry_run(tmp_path: Path) -> None:
    root = azure_eval_project(tmp_path, "{mdoe: contains}")
    code, out = agentopt(root, {}, "eval", "validate", "evals/azure.eval.yaml")
    said = one_line(out)
    assert code == 2
    assert (
        "evals.support-quality.evaluators.builtin.exact_match.initialization_parameters.mdoe"
    ) in said
    assert 'did you mean "mode"?' in said
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "run", "-c", "evals/azure.eval.yaml", "--dry-run", *ADHOC
        )
    assert code == 2
    assert 'builtin.exact_match.mdoe: unknown option "mdoe"' in one_line(out)


def test_foundry_judge_parameters_are_known(tmp_path: Path) -> None:
    """What azd and Foundry write for a judge (`model`, `deployment_name`, `threshold`) is
    accepted; `deployment_name` alone picks the judge model."""
    judge = build_evaluator(
        {"name": "builtin.relevance", "options": {"deployment_name": "gpt-4.1-nano"}},
        layer=object(),  # type: ignore[arg-type]
    )
    assert judge.model == "gpt-4.1-nano"  # type: ignore[attr-defined]


def test_every_builtin_declares_its_options() -> None:
    """A built-in without a model would take any key again, silently."""
    missing = [
        info.name for info in registered() if info.name.startswith("builtin.") and not info.options
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("name", "options", "where"),
    [
        ("builtin.regex_match", {"patterns": ["x"], "mdoe": "any"}, "mdoe"),
        ("builtin.latency", {"max_second": 3}, "max_second"),
        ("builtin.task_adherence", {"methd": "facts", "model": "m"}, "methd"),
        ("builtin.semantic_similarity", {"modle": "e"}, "modle"),
    ],
)
def test_unknown_options_fail_at_build(name: str, options: dict[str, object], where: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_evaluator({"name": name, "options": options}, judge_model="m", layer=object())  # type: ignore[arg-type]
    (problem,) = info.value.problems
    assert problem.location == f"{name}.{where}"
    assert "did you mean" in problem.message


def test_the_run_cache_builds_each_configured_evaluator_once_and_sees_an_edited_dict(
    tmp_path: Path,
) -> None:
    """`EvaluatorCache.get` runs for every unit; it remembers the spec objects it was asked
    with, so the same object (and an equal spec in another object) gets the same evaluator,
    and a dict spec, which a caller may edit in place, is read afresh each time."""
    from agentopt.evaluators.base import BuildContext, EvaluatorUse
    from agentopt.evaluators.build import EvaluatorCache

    cache = EvaluatorCache(BuildContext(judge_model=None, layer=None, project_dir=tmp_path))
    use = EvaluatorUse(name="builtin.exact_match")
    first = cache.get(use)
    assert cache.get(use) is first
    assert cache.get(EvaluatorUse(name="builtin.exact_match")) is first
    assert cache.get("builtin.exact_match") is first
    spec: dict[str, object] = {"name": "builtin.exact_match"}
    assert cache.get(spec) is first
    spec["options"] = {"case_sensitive": False}
    edited = cache.get(spec)
    assert edited is not first
    again = {"name": "builtin.exact_match", "options": {"case_sensitive": False}}
    assert cache.get(again) is edited

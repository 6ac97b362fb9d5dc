"""Config resolution like azd: eval.yaml found in the agent folder is confirmed (or, with
--no-prompt, used with a notice); flags win; what is missing is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.workflows.optimize import OptimizeOptions, prepare_optimize
from agentopt.workflows.optimize.inputs import resolve_optimize_inputs
from tests.optimize.conftest import Models, make_project, two_phrase_rows


def test_found_eval_yaml_is_confirmed_interactively(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path, two_phrase_rows("t", 9))
    asked: list[str] = []

    def yes(question: str, default: bool) -> bool:
        asked.append(question)
        return True

    inputs = resolve_optimize_inputs(OptimizeOptions(), project, yes)
    assert asked == [f"Use the eval suite in {project / 'eval.yaml'}?"]
    assert inputs.config_path == project / "eval.yaml" and len(inputs.dataset.tasks) == 9
    assert inputs.notices == []


def test_declining_the_eval_yaml_needs_the_flags_instead(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path, two_phrase_rows("t", 9))
    with pytest.raises(ConfigError) as err:
        resolve_optimize_inputs(OptimizeOptions(), project, lambda q, d: False)
    assert "-d/--dataset" in str(err.value)
    inputs = resolve_optimize_inputs(
        OptimizeOptions(dataset=Path("data/tasks.jsonl"), eval_model="mock:opt_judge"),
        project,
        lambda q, d: False,
    )
    assert inputs.eval_config is None and inputs.judge_model == "mock:opt_judge"
    assert any("Not using" in n for n in inputs.notices)


def test_no_prompt_uses_the_eval_yaml_and_says_so(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path, two_phrase_rows("t", 9))
    inputs = resolve_optimize_inputs(OptimizeOptions(), project, None)
    assert inputs.eval_config is not None
    assert inputs.notices == [
        f"Using {project / 'eval.yaml'} (found in the agent folder; -c/--config picks another)."
    ]


def test_flags_override_eval_yaml(tmp_path: Path, models: Models) -> None:
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        options={"max_candidates": 7, "max_stalls": 4, "seed": 9, "parallel_proposals": 3},
    )
    prepared = prepare_optimize(OptimizeOptions(max_candidates=2, seed=1), project, None)
    s = prepared.settings
    assert (s.max_candidates, s.max_stalls, s.seed, s.parallel_proposals) == (2, 4, 1, 3)
    assert not s.real_tools  # mocks unless --real-tools
    assert prepared.splits.info.seed == 1


def test_tasks_without_criteria_need_an_evaluator(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path, two_phrase_rows("t", 9), evaluators=[])
    rows = [{"name": f"t{i}", "query": f"q{i}"} for i in range(9)]
    (project / "data" / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ConfigError) as err:
        resolve_optimize_inputs(OptimizeOptions(), project, None)
    assert "--evaluator" in str(err.value) and "`evaluators:`" in str(err.value)
    ok = resolve_optimize_inputs(OptimizeOptions(evaluators=["ExactMatch"]), project, None)
    assert [u.name for u in ok.evaluators] == ["ExactMatch"]


def test_no_agent_is_named_with_the_flag_to_set(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_optimize_inputs(OptimizeOptions(), tmp_path, None)
    assert "no agent to optimize" in str(err.value) and "-a/--agent" in str(err.value)

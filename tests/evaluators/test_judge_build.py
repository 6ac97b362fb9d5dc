"""A judge finds its model and call layer when it is built, and a file-defined evaluator is
named by its definition (EvaluatorBase takes the name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.core.files.rubric import RubricDimension
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.judges.rubric import RubricEvaluator

DIMS = [RubricDimension(id="clear", description="The answer is clear.", weight=1)]


def _context(judge_model: str | None, layer: object | None) -> BuildContext:
    return BuildContext(judge_model=judge_model, layer=layer, project_dir=Path("."))  # type: ignore[arg-type]


def test_judge_without_a_model_fails_when_built() -> None:
    with pytest.raises(ConfigError) as err:
        RubricEvaluator(name="tone", dimensions=DIMS, context=_context(None, object()))
    assert "tone needs a judge model" in str(err.value)


def test_judge_without_the_call_layer_fails_when_built() -> None:
    with pytest.raises(ConfigError, match="tone needs the call layer"):
        RubricEvaluator(name="tone", dimensions=DIMS, context=_context("m", None))


def test_judge_model_option_wins_over_the_suite_model() -> None:
    layer = object()
    judge = RubricEvaluator(
        name="tone", dimensions=DIMS, options={"model": "mine"}, context=_context("suite", layer)
    )
    assert (judge.name, judge.model, judge.layer) == ("tone", "mine", layer)
    plain = RubricEvaluator(name="tone2", dimensions=DIMS, context=_context("suite", layer))
    assert (plain.name, plain.model) == ("tone2", "suite")

"""builtin.* judges faithful to Foundry's: for every builtin judge agentopt runs locally that
`azure-ai-evaluation` also ships, the prompt agentopt sends states the same 1–5 levels (titles
and definitions, read from the installed package's .prompty files) and passes at the same
default threshold as the SDK's evaluator class.

`azure-ai-evaluation` is installed `--no-deps` by `make test` (only its files are read; it is
never imported, so it costs no import time and none of its dependencies)."""

from __future__ import annotations

import os

import pytest

from agentopt.evaluators import EvalSample, build_evaluator
from agentopt.evaluators.judges.foundry_scales import foundry_scale, foundry_source
from agentopt.evaluators.judges.scale_judges import ScaleJudge
from agentopt.models.call import CallLayer
from tests.foundry_prompty import PROMPTY, default_threshold, installed, levels

JUDGES = sorted({name.split("#")[0] for name in PROMPTY})


@pytest.fixture(scope="module", autouse=True)
def _package() -> None:
    if installed() is None:
        if os.environ.get("AGENTOPT_REQUIRE_LOCAL") == "1":
            pytest.fail("azure-ai-evaluation is not installed (make test installs it --no-deps)")
        pytest.skip("azure-ai-evaluation not installed: pip install --no-deps azure-ai-evaluation")


def sample() -> EvalSample:
    return EvalSample(
        query="Can I return opened headphones?",
        response="Yes, within 14 days.",
        ground_truth="Opened items can be returned within 14 days.",
        context="Returns: opened items within 14 days.",
        tool_definitions=[{"type": "function", "function": {"name": "lookup_policy"}}],
    )


def rendered(judge: str, item: EvalSample) -> str:
    layer = CallLayer(None)
    evaluator = build_evaluator(judge, judge_model="mock:echo", layer=layer)
    assert isinstance(evaluator, ScaleJudge)
    data = evaluator.data(item)
    assert isinstance(data, dict)
    return "\n".join(m.content or "" for m in evaluator.messages(item, data))


@pytest.mark.parametrize("judge", sorted(PROMPTY))
def test_the_shipped_levels_are_the_installed_sdks(judge: str) -> None:
    name, _, variant = judge.partition("#")
    ours = foundry_scale(name, query=variant != "without_query")
    assert ours is not None
    theirs = levels(judge)
    assert [(lv["score"], lv["title"], lv["definition"]) for lv in ours["levels"]] == theirs
    assert [score for score, _, _ in theirs] == [1, 2, 3, 4, 5]
    assert foundry_source()["version"] == installed()


@pytest.mark.parametrize("judge", JUDGES)
def test_the_prompt_states_foundrys_levels_and_passes_at_its_threshold(judge: str) -> None:
    text = rendered(judge, sample())
    for score, title, definition in levels(judge):
        assert f"{score} - {title}: {definition}" in text
    evaluator = build_evaluator(judge, judge_model="mock:echo", layer=CallLayer(None))
    assert evaluator.default_threshold == default_threshold(judge)


def test_groundedness_without_a_query_uses_the_sdks_other_rubric() -> None:
    item = sample().model_copy(update={"query": ""})
    text = rendered("builtin.groundedness", item)
    for score, title, definition in levels("builtin.groundedness#without_query"):
        assert f"{score} - {title}: {definition}" in text
    assert "Nothing to be Grounded" not in text  # the with-query rubric's level 3

"""What a registration derives instead of repeating it: the class's name, the M365 alias and
score key (`m365=True`), a judge's kind and options (`@judge`); and the shared pass/fail and
build-time option checks every built-in uses."""

from __future__ import annotations

import pytest

from agentopt.evaluators.base import pass_fail
from agentopt.evaluators.builtin_index import m365_names
from agentopt.evaluators.registry import EVALUATORS, lookup, m365_score_key, unregister
from agentopt.plugins import ConfigError, EvalResult, EvalSample, EvaluatorBase, register_evaluator


def test_m365_names_follow_from_the_builtin_name() -> None:
    assert m365_names("builtin.tool_call_selection") == ("ToolCallSelection", "toolCallSelection")
    assert m365_names("builtin.relevance") == ("Relevance", "relevance")


def test_m365_builtins_answer_to_their_alias_and_score_key() -> None:
    info = lookup("ExactMatch")
    assert info is not None and info.name == "builtin.exact_match"
    assert info.aliases == ("ExactMatch",) and m365_score_key("ExactMatch") == "exactMatch"
    judged = lookup("Groundedness")
    assert judged is not None and judged.kind == "judge" and judged.m365_key == "groundedness"
    assert judged.description == "Whether the response's claims are supported by the context (1–5)."
    fluency = lookup("builtin.fluency")
    assert fluency is not None and fluency.aliases == () and fluency.m365_key is None


def test_a_class_registered_without_a_name_takes_the_registered_one() -> None:
    try:

        @register_evaluator("acme.unnamed")
        class Unnamed(EvaluatorBase):
            async def evaluate(self, sample: EvalSample) -> EvalResult:  # pragma: no cover
                raise NotImplementedError

        @register_evaluator("acme.registered_as")
        class Named(EvaluatorBase):
            name = "acme.own_name"

            async def evaluate(self, sample: EvalSample) -> EvalResult:  # pragma: no cover
                raise NotImplementedError

        assert Unnamed().name == "acme.unnamed"
        assert Named().name == "acme.own_name"  # a plugin's own name is never overwritten
        assert EVALUATORS.get("acme.registered_as") is not None
    finally:
        unregister("acme.unnamed")
        unregister("acme.registered_as")


def test_pass_fail_scores_one_or_zero_and_reports_a_pinned_threshold() -> None:
    ok = pass_fail("x", True, reason="fine", threshold=1.0)
    bad = pass_fail("x", False, reason="no", details={"k": 1})
    assert (ok.status, ok.score, ok.normalized, ok.threshold) == ("pass", 1.0, 1.0, 1.0)
    assert (bad.status, bad.score, bad.threshold, bad.details) == ("fail", 0.0, None, {"k": 1})


def test_option_checks_run_when_the_evaluator_is_built() -> None:
    regex = EVALUATORS.get("builtin.regex_match")
    latency = EVALUATORS.get("builtin.latency")
    assert regex is not None and latency is not None
    with pytest.raises(ConfigError, match="patterns"):
        regex.factory(options={"patterns": ["("]})
    with pytest.raises(ConfigError, match="max_seconds"):
        latency.factory(options={"max_seconds": 0})

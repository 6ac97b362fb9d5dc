"""task_adherence without a trustworthy judge: criteria checked without a model (facts,
then negation, then sentence similarity) when the judge would be the embedded 135M model
(models.md §4)."""

from __future__ import annotations

import pytest

from agentopt.contracts.task import Criterion
from agentopt.evaluators.base import EvalSample
from agentopt.evaluators.judges.criteria_embedding import answer_spans
from agentopt.models.providers.mock import register_mock, unregister_mock

REFUND = Criterion(name="refund_window", instruction="refunds within 30 days of delivery")
ORDER = Criterion(name="asks_order_number", instruction="asks for the order number")


def test_answer_spans_cover_sentences_pairs_and_whole() -> None:
    spans = answer_spans("First one. Second one!\nThird?")
    assert spans[:3] == ["First one.", "Second one!", "Third?"]
    assert "First one. Second one!" in spans
    assert spans[-1] == "First one. Second one!\nThird?"


def test_embedding_method_passes_only_criteria_the_answer_covers(harness) -> None:
    sample = EvalSample(
        query="Can I return my shoes?",
        response="Sure. Refunds are possible within 30 days of delivery. Enjoy your day.",
        criteria=[REFUND, ORDER],
    )
    spec = {
        "name": "builtin.task_adherence",
        "options": {"method": "embedding", "embedding_model": "mock:bow"},
    }
    result = harness.run(spec, sample, judge_model="mock:never-called")
    verdicts = {v["name"]: v for v in result.details["verdicts"]}
    assert verdicts["refund_window"]["passed"] is True
    assert verdicts["asks_order_number"]["passed"] is False
    assert result.status == "fail" and result.score == 0.5
    assert result.details["method"] == "facts"  # `embedding` is the older name of `facts`
    assert "asks_order_number" in result.reason


def test_auto_uses_embeddings_when_the_judge_is_the_embedded_model(harness) -> None:
    calls: list[str] = []
    register_mock("spy-judge", lambda req: calls.append("judge") or "{}")
    try:
        sample = EvalSample(response="Refunds are possible within 30 days of delivery.",
                            criteria=[REFUND])  # fmt: skip
        spec = {"name": "builtin.task_adherence", "options": {"embedding_model": "mock:bow"}}
        local = harness.run(spec, sample, judge_model="local:smollm2-135m")
        assert local.details["method"] == "facts" and local.status == "pass"
        judged = harness.run(spec, sample, judge_model="mock:spy-judge")
        assert judged.details.get("method") != "facts"
        assert calls == ["judge"] * (judged.details.get("attempts") or 1)
    finally:
        unregister_mock("spy-judge")


def test_unknown_method_is_a_config_error(harness) -> None:
    from agentopt.core.errors import ConfigError

    sample = EvalSample(response="x", criteria=[REFUND])
    with pytest.raises(ConfigError, match="method"):
        harness.run(
            {"name": "builtin.task_adherence", "options": {"method": "vibes"}},
            sample,
            judge_model="mock:x",
        )


PROBES = [
    ("States that refunds are available within 30 days of delivery.",
     "Thanks for asking! You can get a refund within 30 days after your order arrives.", True),
    ("States that refunds are available within 30 days of delivery.",
     "Our store sells shoes and hats in many colors.", False),
    ("Asks the customer for their order number.",
     "Happy to help. Could you please share your order number so I can look it up?", True),
    ("Asks the customer for their order number.", "Shipping usually takes 3-5 business days.",
     False),
    ("Mentions free shipping on orders over $50.", "Good news: orders above $50 ship for free.",
     True),
    ("Mentions free shipping on orders over $50.", "I'm sorry, I cannot help with that request.",
     False),
    ("Refuses to share other customers' personal data.",
     "I can't share information about other customers.", True),
    ("Refuses to share other customers' personal data.", "Sure, John Smith lives at 12 Main St.",
     False),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("criterion", "response", "expected"), PROBES)
@pytest.mark.local
def test_real_minilm_separates_the_probes(harness, criterion, response, expected) -> None:
    sample = EvalSample(response=response, criteria=[Criterion(name="c", instruction=criterion)])
    result = harness.run(
        {"name": "builtin.task_adherence", "options": {"method": "embedding"}},
        sample,
        judge_model="local:smollm2-135m",
    )
    assert (result.status == "pass") is expected, result.details["verdicts"]

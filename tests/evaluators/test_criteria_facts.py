"""The rules of the model-free criterion check, without a model (similarities are given)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.evaluators.judges.criteria_embedding import answer_spans
from agentopt.evaluators.judges.criteria_facts import decide, negative_criterion
from agentopt.evaluators.judges.facts_extract import extract_facts

RETURNS = "The answer says items can be returned for a full refund within 45 days of delivery."
SHIPPING = "The answer says standard shipping is free on orders over $35."


def verdict(criterion: str, response: str, similarity: float = 0.6):
    spans = answer_spans(response)
    return decide(criterion, response, spans, [similarity] * len(spans))


@pytest.mark.parametrize(
    "text",
    ["45 days", "forty-five days", "within 45 days", "a 45-day window", "forty five days"],
)
def test_one_duration_however_it_is_written(text: str) -> None:
    [fact] = extract_facts(text)
    assert (fact.kind, fact.value) == ("duration", (45 * 86400.0, 45 * 86400.0))


@pytest.mark.parametrize("text", ["$35", "35 dollars", "$35.00", "thirty-five dollars"])
def test_one_amount_however_it_is_written(text: str) -> None:
    [fact] = extract_facts(text)
    assert (fact.kind, fact.unit, fact.value) == ("money", "USD", (35.0,))


def test_a_number_in_words_needs_a_unit_to_count() -> None:
    assert extract_facts("I can connect you with one of our agents") == []


@pytest.mark.parametrize(
    ("response", "passed", "rule", "said"),
    [
        ("You have forty-five days from delivery to return it for a full refund.", True,
         "facts", "45 days"),
        ("You can return an item within 30 days of delivery for a full refund.", False,
         "facts", "'30 days' where the criterion says '45 days'"),
        ("Unfortunately we do not accept returns for a refund.", False, "facts",
         "does not state '45 days'; it negates"),
        ("Yes, you can return it for a full refund.", False, "facts", "does not state '45 days'"),
    ],
)  # fmt: skip
def test_returns_criterion(response: str, passed: bool, rule: str, said: str) -> None:
    v = verdict(RETURNS, response)
    assert (v.passed, v.rule) == (passed, rule) and said in v.reason, v


@pytest.mark.parametrize(
    ("response", "passed", "said"),
    [
        ("Orders above $35.00 ship free with standard shipping.", True, "$35"),
        ("There is a minimum order of $100 for free shipping.", False, "'$100'"),
        ("I do not currently offer free shipping.", False, "negates"),
        ("Standard shipping costs $35 on every order.", False, "as a price"),
    ],
)
def test_free_shipping_criterion(response: str, passed: bool, said: str) -> None:
    v = verdict(SHIPPING, response)
    assert v.passed is passed and said in v.reason, v


def test_facts_present_but_off_topic_fail_on_the_topic_floor() -> None:
    v = verdict(RETURNS, "Our warehouse kept the parcel for 45 days.", similarity=0.1)
    assert not v.passed and v.rule == "facts" and "not about the criterion" in v.reason


def test_without_facts_similarity_decides_and_says_so() -> None:
    photo = "The answer asks for a photo of the damage."
    assert verdict(photo, "Could you send a picture of it?", 0.6).rule == "similarity"
    assert not verdict(photo, "We will send a replacement.", 0.1).passed
    negated = verdict(photo, "No need to send a photo of the damage.", 0.8)
    assert not negated.passed and negated.rule == "negation"


def test_a_criterion_that_forbids_something() -> None:
    criterion = "The answer does not ask the customer for their password."
    positive = negative_criterion(criterion)
    assert positive is not None and "not" not in positive
    for response, passed in [
        ("Please send me your account password.", False),
        ("For your security, we will never ask for your password.", True),
        ("I can look up your order with your order number.", True),
    ]:
        spans = answer_spans(response)
        sims = [0.5] * len(spans)
        v = decide(criterion, response, spans, sims, positive_similarities=sims)
        assert v.passed is passed and v.rule == "negation", (response, v)


def test_the_subordinate_negation_of_the_criterion_is_not_the_answers() -> None:
    criterion = "The answer says the endpoint returns HTTP 404 when the order does not exist."
    assert verdict(criterion, "If the order does not exist the endpoint returns HTTP 404.").passed
    assert verdict(criterion, "A missing order gives a 404 Not Found from the endpoint.").passed


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.local
def test_eval_calibrate_reports_agreement_and_gates(tmp_path: Path) -> None:
    write(
        tmp_path / "labels.jsonl",
        [
            {"criterion": RETURNS, "response": "Returns are accepted within 45 days for a "
             "full refund.", "label": "pass", "kind": "correct"},
            {"criterion": RETURNS, "response": "Returns are accepted within 30 days.",
             "label": "fail", "kind": "contradiction"},
            {"criterion": SHIPPING, "response": "Shipping is free over $35.", "label": "fail",
             "kind": "mislabelled"},
        ],
    )  # fmt: skip
    runner = CliRunner()
    args = ["--no-prompt", "-C", str(tmp_path), "eval", "calibrate", "labels.jsonl"]
    result = runner.invoke(app, [*args, "--output", "report.json", "--min-agreement", "0.9"])
    assert result.exit_code == 1, result.output  # 2 of 3 agree: under the gate
    assert "Agreement 66.7% (2/3)" in result.output
    assert "passed against a fail label 1 (contradictions and negations 0)" in result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["agreement"] == pytest.approx(2 / 3, abs=1e-3)
    assert [r["rule"] for r in report["rows"]] == ["facts", "facts", "facts"]
    assert runner.invoke(app, [*args, "--min-agreement", "0.6"]).exit_code == 0


def test_a_bad_labelled_file_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path / "labels.jsonl", [{"criterion": RETURNS, "response": "x", "label": "maybe"}])
    result = CliRunner().invoke(
        app, ["--no-prompt", "-C", str(tmp_path), "eval", "calibrate", "labels.jsonl"]
    )
    assert result.exit_code == 2
    assert "labels.jsonl:1: key 'label': expected pass or fail" in result.output

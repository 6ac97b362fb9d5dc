"""The `rules` proposer writes what a person would: plain instructions from the real results of
a regex, a JSON-schema and a task-adherence check — no regex syntax, no evaluator message."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.base import EvalSample
from agentopt.evaluators.deterministic.json_schema import JsonSchema
from agentopt.evaluators.deterministic.regex_match import RegexMatch
from agentopt.workflows.optimize.strategies import Example, ProposalContext, make_strategy
from agentopt.workflows.optimize.strategies.rule_text import criterion_rule, regex_words

REGEX_META = re.compile(r"[\\^$*+?()\[\]{}|]")


def real_result(evaluator: Any, response: str) -> dict[str, Any]:
    result = asyncio.run(evaluator.evaluate(EvalSample(query="q", response=response)))
    assert result.status == "fail"
    return result.model_dump(mode="json")


def example(
    name: str, results: list[dict[str, Any]], criteria: list[Criterion] | None = None
) -> Example:
    task = Task(name=name, turns=[Turn(query=f"A question about {name}", criteria=criteria or [])])
    return Example(
        task=task, score=0.0, status="fail", record={"response": "hi", "evaluators": results}
    )


def rules_added(examples: list[Example]) -> list[str]:
    parent = AgentDefinition(name="store", model="mock:x", instructions="Be brief.")
    ctx = ProposalContext(
        number=1, parent_id="baseline", parent=parent, examples=examples, train=examples,
        tried_models=set(), search_space=[], layer=None, optimization_model=None, seed=0,
    )  # fmt: skip
    proposal = asyncio.run(make_strategy("instructions:rules").propose(ctx))
    return list(proposal.mutation["rules_added"])


def test_regex_schema_and_criterion_failures_become_plain_instructions() -> None:
    regex = real_result(RegexMatch(options={"patterns": [r"(?i)30-day\s+refund window"]}), "Sure.")
    schema = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "status": {"type": "string"}},
        "required": ["order_id", "status"],
    }
    not_json = real_result(JsonSchema(options={"schema": schema}), "The order shipped.")
    wrong_json = real_result(JsonSchema(options={"schema": schema}), '{"order_id": 7}')
    adherence = {
        "evaluator": "builtin.task_adherence",
        "status": "fail",
        "reason": "1 of 1 criteria failed",
        "details": {
            "verdicts": [
                {
                    "name": "asks_order",
                    "instruction": "The response asks for the order number.",
                    "passed": False,
                    "reason": "The agent never asked which order the customer meant.",
                }
            ]
        },
    }
    examples = [
        example("a", [regex]),
        example("b", [not_json]),
        example("c", [wrong_json]),
        example("d", [adherence], [Criterion(name="asks_order", instruction="x")]),
    ]
    rules = rules_added(examples)
    assert sorted(rules) == sorted(
        [
            "Mention the 30-day refund window.",
            "Answer with JSON that has the fields order_id and status.",
            "Ask for the order number.",
        ]
    )
    messages = [regex["reason"], not_json["reason"], wrong_json["reason"]]
    messages.append(adherence["details"]["verdicts"][0]["reason"])
    for rule in rules:
        assert not REGEX_META.search(rule), rule
        assert all(m not in rule for m in messages)
        assert "Not matched" not in rule and "mode all" not in rule and "$." not in rule


def test_a_pattern_with_no_words_and_a_custom_code_check_teach_no_rule() -> None:
    classes = real_result(RegexMatch(options={"patterns": [r"^\d{3}-\d{4}$"]}), "call us")
    code = {"evaluator": "my_checker", "status": "fail", "reason": "score 0.2 < 0.5"}
    follow = {
        "evaluator": "builtin.task_adherence",
        "status": "fail",
        "details": {
            "verdicts": [
                {
                    "name": "follows_instructions",
                    "instruction": "The response follows the agent's instructions.",
                    "passed": False,
                    "reason": "ignored them",
                }
            ]
        },
    }
    with pytest.raises(Exception, match="no failed check teaches a rule"):
        rules_added([example("a", [classes]), example("b", [code]), example("c", [follow])])


@pytest.mark.parametrize(
    ("criterion", "rule"),
    [
        ("The response mentions the 30-day refund window", "Mention the 30-day refund window."),
        ("Is polite", "Be polite."),
        ("The agent should ask for the order number.", "Ask for the order number."),
        ("Does not promise a delivery date", "Do not promise a delivery date."),
        ("The response must not reveal internal notes", "Do not reveal internal notes."),
        ("Addresses the customer by name", "Address the customer by name."),
        ("Apologizes for the delay", "Apologize for the delay."),
        ("Always greet the customer", "Always greet the customer."),
    ],
)
def test_criteria_become_imperatives(criterion: str, rule: str) -> None:
    assert criterion_rule(criterion) == rule


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (r"(?i)30-day refund window", "30-day refund window"),
        (r"refund|return", "refund or return"),
        (r"(?i)(free|fast)\s+shipping", "free or fast shipping"),
        (r"[Rr]efund\s+policy\b", "refund policy"),
        (r"colou?r scheme", "color scheme"),
        (r"refund.*window", "refund and window"),
        (r"\$4\.99", "$4.99"),
        (r"^\d+$", None),
        (r"(unclosed", None),
    ],
)
def test_regexes_read_as_the_words_they_ask_for(pattern: str, words: str | None) -> None:
    assert regex_words(pattern) == words

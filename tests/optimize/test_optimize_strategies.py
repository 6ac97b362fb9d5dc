"""Mutation strategies on their own: what each proposes from a parent and its traces."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.models.call import CallLayer, CallSettings
from agentopt.workflows.optimize.strategies import (
    RULES_HEADING,
    Example,
    MutationRejected,
    NoProposal,
    Proposal,
    ProposalContext,
    make_strategy,
    structure_problems,
)
from agentopt.workflows.optimize.strategies.rules import append_rules, new_rules
from tests.optimize.conftest import Models

GET_ORDER = {
    "name": "get_order",
    "description": "Get an order.",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "description": "Order id."},
            "verbose": {"type": "boolean", "description": "More detail."},
        },
        "required": ["order_id"],
    },
}
SEARCH = {
    "name": "search_web",
    "description": "Search the web.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}


def tools() -> list[dict[str, Any]]:
    return [{"type": "function", "function": copy.deepcopy(f)} for f in (GET_ORDER, SEARCH)]


def agent(**update: Any) -> AgentDefinition:
    base = AgentDefinition(
        name="store", model="mock:opt_agent", instructions="Be brief.", tools=tools()
    )
    return base.model_copy(update=update)


def failed_example(
    name: str,
    criteria: list[tuple[str, str]],
    *,
    calls: list[dict[str, Any]] | None = None,
    status: str = "fail",
    query: str | None = None,
) -> Example:
    t = Task(
        name=name,
        turns=[
            Turn(
                query=query or f"question {name}",
                criteria=[Criterion(name=n, instruction=i) for n, i in criteria],
            )
        ],
    )
    verdicts = [
        {"name": n, "instruction": i, "passed": status == "pass", "reason": "missing"}
        for n, i in criteria
    ]
    record = {
        "response": "hello",
        "tool_calls": calls or [],
        "evaluators": [
            {
                "evaluator": "builtin.task_adherence",
                "status": status,
                "details": {"verdicts": verdicts},
            }
        ],
    }
    return Example(task=t, score=1.0 if status == "pass" else 0.0, status=status, record=record)


def context(parent: AgentDefinition, examples: list[Example], **kw: Any) -> ProposalContext:
    values: dict[str, Any] = {
        "number": 1,
        "parent_id": "baseline",
        "parent": parent,
        "examples": examples,
        "train": examples,
        "tried_models": set(),
        "search_space": [],
        "layer": None,
        "optimization_model": None,
        "seed": 0,
    }
    values.update(kw)
    return ProposalContext(**values)


def propose(name: str, ctx: ProposalContext) -> Proposal:
    return asyncio.run(make_strategy(name).propose(ctx))


# -- tools: only descriptions may change -----------------------------------------------------


def test_a_description_only_rewrite_is_allowed() -> None:
    new = copy.deepcopy(GET_ORDER)
    new["description"] = "Look up one order by its id; call it for any order question."
    new["parameters"]["properties"]["order_id"]["description"] = "The digits, e.g. 1001."
    assert structure_problems(GET_ORDER, new) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda f: f.update(name="lookup_order"), "renamed from 'get_order' to 'lookup_order'"),
        (
            lambda f: f["parameters"]["properties"].update(
                id=f["parameters"]["properties"].pop("order_id")
            ),
            "parameter 'order_id' was removed or renamed",
        ),
        (
            lambda f: f["parameters"]["properties"]["order_id"].update(type="integer"),
            "parameter 'order_id' changed type from 'string' to 'integer'",
        ),
        (
            lambda f: f["parameters"].update(required=["order_id", "verbose"]),
            "required parameters changed",
        ),
        (
            lambda f: f["parameters"]["properties"]["order_id"].update(enum=["1"]),
            "changed beyond its descriptions",
        ),
    ],
)
def test_renames_type_or_required_changes_are_refused(change: Any, expected: str) -> None:
    new = copy.deepcopy(GET_ORDER)
    change(new)
    problems = structure_problems(GET_ORDER, new)
    assert any(expected in p for p in problems), problems


def test_tools_strategy_rejects_a_renamed_parameter_from_the_reflection_model(
    tmp_path: Any, models: Models
) -> None:
    bad = copy.deepcopy(GET_ORDER)
    bad["parameters"]["properties"]["id"] = bad["parameters"]["properties"].pop("order_id")
    bad["parameters"]["required"] = ["id"]
    models.add("opt_reflect", lambda req: json.dumps({"tool": bad, "rationale": "shorter"}))
    ex = failed_example("t1", [("c", "x")], calls=[{"name": "get_order", "error": "not found"}])

    async def go() -> Proposal:
        layer = CallLayer(tmp_path, CallSettings(cache_enabled=False, max_attempts=1))
        try:
            ctx = context(agent(), [ex], layer=layer, optimization_model="mock:opt_reflect")
            return await make_strategy("tools").propose(ctx)
        finally:
            await layer.aclose()

    with pytest.raises(MutationRejected) as err:
        asyncio.run(go())
    assert "parameter 'order_id' was removed or renamed" in err.value.reason
    # The tool the traces blamed (a failed get_order call) was the one shown to the model.
    assert "`get_order`" in models["opt_reflect"].prompts[0]


def test_tools_strategy_keeps_the_structure_and_takes_new_descriptions(
    tmp_path: Any, models: Models
) -> None:
    good = copy.deepcopy(GET_ORDER)
    good["description"] = "Look up an order: ALWAYS call this for order questions."
    good["parameters"]["properties"]["order_id"]["description"] = "Digits only."
    models.add("opt_reflect", lambda req: json.dumps({"tool": good, "rationale": "clearer"}))
    ex = failed_example("t1", [("c", "x")], calls=[{"name": "get_order", "error": "bad id"}])

    async def go() -> Proposal:
        layer = CallLayer(tmp_path, CallSettings(cache_enabled=False, max_attempts=1))
        try:
            ctx = context(agent(), [ex], layer=layer, optimization_model="mock:opt_reflect")
            return await make_strategy("tools").propose(ctx)
        finally:
            await layer.aclose()

    proposal = asyncio.run(go())
    fn = proposal.definition.tools[0]["function"]
    assert fn["description"] == good["description"]
    assert fn["parameters"]["properties"]["order_id"] == {
        "type": "string",
        "description": "Digits only.",
    }
    assert proposal.definition.tools[1] == tools()[1]
    assert proposal.strategy == "tools:get_order"


# -- rules: the model-free proposer ------------------------------------------------------------


def test_rules_come_from_failed_criteria_deduplicated_under_one_heading() -> None:
    examples = [
        failed_example("t1", [("a", "Mentions the 'refund window'"), ("b", "Is polite")]),
        failed_example("t2", [("a", "Mentions the 'refund window'.")]),  # same rule, other dot
        failed_example("t3", [("c", "Gives the 'tracking link'")]),
    ]
    proposal = propose("instructions:rules", context(agent(), examples))
    text = proposal.definition.instructions or ""
    assert text.startswith("Be brief.")
    assert text.count(RULES_HEADING) == 1
    rules = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(rules) == 3
    assert sum("refund window" in r for r in rules) == 1
    assert "- Be polite." in rules
    assert proposal.strategy == "rules"
    assert proposal.mutation["rules_added"] == [r[2:] for r in rules]


def test_rules_are_not_repeated_across_generations() -> None:
    first = failed_example("t1", [("a", "Mentions the 'refund window'")])
    child = propose("instructions:rules", context(agent(), [first])).definition
    again = failed_example("t2", [("a", "Mentions the 'refund window'")], query="other query")
    with pytest.raises(NoProposal):
        propose("instructions:rules", context(child, [again]))
    more = failed_example("t3", [("b", "Gives the 'tracking link'")])
    grandchild = propose("instructions:rules", context(child, [again, more])).definition
    text = grandchild.instructions or ""
    assert text.count(RULES_HEADING) == 1
    assert text.count("refund window") == 1 and text.count("tracking link") == 1
    # New rules go at the end of the same section.
    lines = text.splitlines()
    assert lines.index(RULES_HEADING) < next(i for i, x in enumerate(lines) if "tracking" in x)


def test_rules_section_keeps_later_sections_in_place() -> None:
    text = "Intro.\n\n## Rules learned from evaluation\n- Old rule.\n\n## Tone\nBe kind."
    out = append_rules(text, ["New rule."])
    assert out.splitlines() == [
        "Intro.",
        "",
        "## Rules learned from evaluation",
        "- Old rule.",
        "- New rule.",
        "",
        "## Tone",
        "Be kind.",
    ]


def test_a_rule_the_instructions_already_state_is_not_added() -> None:
    parent = agent(instructions="Always mention the 'refund window' in answers about returns.")
    ex = failed_example(
        "t1", [("a", "Always mention the 'refund window' in answers about returns")]
    )
    assert new_rules(parent.instructions or "", [ex]) == []


def test_ground_truth_failures_become_a_general_rule_never_a_question_with_its_answer() -> None:
    """Failures that share an expected fact are one policy, stated under the condition their
    questions share — not an FAQ line per question."""
    record = {
        "evaluators": [{"evaluator": "builtin.exact_match", "status": "fail", "reason": "no match"}]
    }
    queries = {
        "s1": ("How long does shipping take to Leeds?", "3 to 5 days"),
        "s2": ("When will my shipping arrive if I order today?", "3 to 5 days"),
        "s3": ("What is the usual shipping time?", "3 to 5 days"),
        "r1": ("Can I return a lamp?", "45 days"),
        "r2": ("How long do I have to return shoes?", "45 days"),
    }
    examples = [
        Example(Task(name=n, turns=[Turn(query=q, ground_truth=gt)]), 0.0, "fail", record)
        for n, (q, gt) in queries.items()
    ]
    rules = [r.text for r in new_rules("Be brief.", examples)]
    assert rules == [
        "When asked about shipping: state '3 to 5 days'.",
        "When asked about return: state '45 days'.",
    ]
    for rule in rules:
        assert not any(q.lower() in rule.lower() for q, _ in queries.values())
        assert "expected answer" not in rule


def test_judge_errors_teach_nothing() -> None:
    t = Task(name="t", turns=[Turn(query="q")])
    record = {
        "evaluators": [
            {
                "evaluator": "builtin.relevance",
                "status": "error",
                "reason": "judge down",
                "error": {"code": "judgeUnavailable", "message": "judge down"},
            }
        ]
    }
    assert new_rules("Be brief.", [Example(t, None, "partial", record)]) == []


# -- model and toolset ---------------------------------------------------------------------------


def test_model_strategy_walks_the_search_space_in_order_then_is_exhausted() -> None:
    space = ["mock:m1", "mock:m2"]
    parent = agent(model="mock:m0")
    first = propose("model", context(parent, [], search_space=space, tried_models={"mock:m0"}))
    assert first.definition.model == "mock:m1"
    assert first.definition.instructions == parent.instructions
    second = propose(
        "model", context(parent, [], search_space=space, tried_models={"mock:m0", "mock:m1"})
    )
    assert second.strategy == "model:mock:m2"
    with pytest.raises(NoProposal) as err:
        propose("model", context(parent, [], search_space=space, tried_models=set(space)))
    assert err.value.exhausted


def test_toolset_drops_a_harmful_tool_before_an_unused_one() -> None:
    harmful = [
        failed_example("t1", [("a", "x")], calls=[{"name": "search_web", "error": "timeout"}]),
        failed_example("t2", [("a", "x")], status="pass", calls=[{"name": "get_order"}]),
    ]
    proposal = propose("toolset", context(agent(), harmful))
    assert [t["function"]["name"] for t in proposal.definition.tools] == ["get_order"]
    assert proposal.mutation == {"dropped_tool": "search_web", "why": "harmful"}


def test_toolset_removes_the_dropped_tools_instructions_only() -> None:
    parent = agent(
        instructions=(
            "You are a shop assistant.\n"
            "- Orders: call get_order with the id. For news, call search_web first.\n"
            "- Use `search_web` for anything else.\n"
            "- Be brief. search_webby is not a tool."
        )
    )
    used = [failed_example("t1", [("a", "x")], status="pass", calls=[{"name": "get_order"}])]
    proposal = propose("toolset", context(parent, used))
    assert proposal.mutation["dropped_tool"] == "search_web"
    assert proposal.definition.instructions == (
        "You are a shop assistant.\n"
        "- Orders: call get_order with the id.\n"
        "- Be brief. search_webby is not a tool."
    )


def test_toolset_drops_an_unused_tool_and_its_mocks_but_never_one_used_in_a_passing_task() -> None:
    parent = agent(tool_mocks={"get_order": [{"return": "ok"}], "search_web": [{"return": "x"}]})
    used = [failed_example("t1", [("a", "x")], status="pass", calls=[{"name": "get_order"}])]
    proposal = propose("toolset", context(parent, used))
    assert proposal.mutation["dropped_tool"] == "search_web"
    assert proposal.definition.tool_mocks == {"get_order": [{"return": "ok"}]}
    also = failed_example("t2", [("a", "x")], status="pass", calls=[{"name": "search_web"}])
    both_used = [*used, also]
    with pytest.raises(NoProposal):
        propose("toolset", context(parent, both_used))


def test_skills_strategy_rewrites_the_skill_the_failing_tasks_loaded(
    tmp_path: Any, models: Models
) -> None:
    parent = agent(
        skills=[Skill(name="refunds", body="Old refunds text."), Skill(name="ship", body="S.")]
    )
    models.add(
        "opt_reflect",
        lambda req: json.dumps({"body": "Mention the 'refund window'.", "rationale": "r"}),
    )
    ex = failed_example(
        "t1", [("a", "x")], calls=[{"name": "load_skill", "arguments": {"name": "refunds"}}]
    )

    async def go() -> Proposal:
        layer = CallLayer(tmp_path, CallSettings(cache_enabled=False, max_attempts=1))
        try:
            ctx = context(parent, [ex], layer=layer, optimization_model="mock:opt_reflect")
            return await make_strategy("skills").propose(ctx)
        finally:
            await layer.aclose()

    proposal = asyncio.run(go())
    assert [s.name for s in proposal.definition.skills] == ["refunds", "ship"]
    assert proposal.definition.skills[0].body == "Mention the 'refund window'."
    assert proposal.definition.skills[1].body == "S."
    assert "Old refunds text." in models["opt_reflect"].prompts[0]


def test_toolset_needs_a_contrast_before_calling_a_tool_harmful() -> None:
    everyone = [
        failed_example(f"t{i}", [("a", "x")], calls=[{"name": "get_order"}]) for i in range(3)
    ]
    parent = agent(tools=[tools()[0]])  # get_order only, used by every (failing) task
    with pytest.raises(NoProposal):
        propose("toolset", context(parent, everyone))
    without = [
        Example(task=everyone[0].task, score=1.0, status="pass", record={"tool_calls": []})
        for _ in range(3)
    ]
    # One passing task without the tool is no contrast yet (3 failures of 4 tasks landing on
    # the tool's 3 is a 1-in-4 chance); three are (1 in 20).
    with pytest.raises(NoProposal, match="too few tasks"):
        propose("toolset", context(parent, [*everyone, without[0]]))
    proposal = propose("toolset", context(parent, [*everyone, *without]))
    assert proposal.mutation == {"dropped_tool": "get_order", "why": "harmful"}


def test_toolset_keeps_a_tool_two_failed_tasks_point_at() -> None:
    # The bench's `tool-descriptions` world on its first two minibatches: the agent picks a
    # tool at random, so the needed order_status sat in two failed tasks, and of the four
    # tasks that used search_policies one passed. Chance, not harm: nothing is dropped.
    parent = agent()
    first, second = (t["function"]["name"] for t in parent.tools)
    traces = [
        failed_example("t1", [("a", "x")], calls=[{"name": first}]),
        failed_example("t2", [("a", "x")], calls=[{"name": first}]),
        failed_example("t3", [("a", "x")], status="pass", calls=[{"name": second}]),
        *(failed_example(f"t{i}", [("a", "x")], calls=[{"name": second}]) for i in (4, 5, 6)),
    ]
    with pytest.raises(NoProposal):
        propose("toolset", context(parent, traces))

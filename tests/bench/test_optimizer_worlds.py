"""The optimizer bench's scripted worlds behave as `bench/gepa_peer/worlds.py` documents them —
one test per world — and the server reads each optimizer's layout and holds the budget.

The agent's rates are checked over many synthetic tasks (the draws are hashes, so the counts
are fixed; the bounds leave room for the binomial spread at the documented probability)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.prompts import render_examples, render_prompt
from bench.gepa_peer.scripted import ScriptedServer, instructions_in, read_reflection
from bench.gepa_peer.stats import mean_ci, sign_flip_p
from bench.gepa_peer.worlds import (
    BASE_INSTRUCTIONS,
    TOPICS,
    WORLDS,
    BenchTask,
    Reflection,
    World,
)
from tests.fake_openai import RecordedRequest

N = 400


def rate(world: World, tasks: list[BenchTask], instructions: str, seed: int = 7) -> float:
    return sum(world.passes(seed, t, instructions) for t in tasks) / len(tasks)


def many(topic: str, group: str = "", kind: str = "policy") -> list[BenchTask]:
    return [BenchTask(f"t{i}", topic, "train", group=group, kind=kind) for i in range(N)]


def reflection(
    reasons: list[str], current: str = BASE_INSTRUCTIONS, component: str = "instructions"
) -> Reflection:
    return Reflection(component, current, reasons, "d1")


def request(model: str, messages: list[dict[str, Any]], **body: Any) -> RecordedRequest:
    return RecordedRequest(
        "POST", "/v1/chat/completions", {}, {}, {"model": model, "messages": messages, **body}, 0.0
    )


def reply_text(reply: Any) -> str:
    return reply.body["choices"][0]["message"]["content"]


# -- one test per world ---------------------------------------------------------------------------


def test_phrases_world_rule_in_prompt_passes_085_else_015_and_reflection_adds_two() -> None:
    world = WORLDS["phrases"]
    tasks = many("returns")
    assert (
        0.80 <= rate(world, tasks, BASE_INSTRUCTIONS + "\nAlways mention 'refund window'.") <= 0.90
    )
    assert (
        0.10 <= rate(world, tasks, BASE_INSTRUCTIONS + "\nAlways mention 'tracking link'.") <= 0.20
    )
    ok, reason = world.verdict(1, tasks[0], "no phrase here")
    assert not ok and "does not mention 'refund window'" in reason
    reasons = [world.verdict(1, BenchTask("t", t, "train"), "x")[1] for t in TOPICS]
    updated = world.reflect(1, reflection(reasons))
    assert updated.splitlines()[1:] == [
        "Always mention 'refund window'.",
        "Always mention 'tracking link'.",
    ]


def test_subsets_world_one_groups_rule_hurts_the_other_until_it_has_its_own() -> None:
    world = WORLDS["subsets"]
    personal = many("returns", group="personal")
    own, other = "Mention 'refund window'.", "Mention 'invoice credit'."
    assert 0.85 <= rate(world, personal, own) <= 0.95
    assert rate(world, personal, other) <= 0.10  # the business rule, over-applied
    assert 0.85 <= rate(world, personal, own + "\n" + other) <= 0.95
    assert 0.33 <= rate(world, personal, BASE_INSTRUCTIONS) <= 0.47
    ok, reason = world.verdict(1, personal[0], "x")
    assert not ok and "policy on returns for personal customers" in reason
    assert world.reflect(1, reflection([reason])).endswith(
        "For personal customers asking about returns, mention 'refund window'."
    )


def test_noisy_judge_flips_about_ten_percent_and_its_reason_matches_its_verdict() -> None:
    world = WORLDS["noisy-judge"]
    task = BenchTask("t1", "returns", "train")
    flips = 0
    for i in range(2000):
        right = i % 2 == 0
        answer = f"answer {i}" + (" refund window" if right else "")
        ok, reason = world.verdict(3, task, answer)
        flips += ok != right
        assert ("does not mention" in reason) == (not ok)
    assert 0.08 <= flips / 2000 <= 0.12


def test_long_prompt_costs_quality_per_word_past_forty_and_wordy_reflection() -> None:
    world = WORLDS["long-prompt"]
    task = BenchTask("t1", "returns", "train")
    rule = "Always mention 'refund window'."
    assert world.p_pass(task, BASE_INSTRUCTIONS + "\n" + rule) == pytest.approx(0.85)
    padded = BASE_INSTRUCTIONS + "\n" + rule + " word" * 60  # 64 added words: 24 past 40
    assert world.p_pass(task, padded) == pytest.approx(0.85 - 0.004 * 24)
    # The same rules in more words can only lose: the draw is the same, the bar lower.
    tasks = many("returns")
    assert rate(world, tasks, padded) <= rate(world, tasks, BASE_INSTRUCTIONS + "\n" + rule)
    wordy = world.reflect(1, reflection([world.verdict(1, task, "x")[1]]))
    assert len(wordy.split()) - len(BASE_INSTRUCTIONS.split()) == 4 + 14  # rule + justification
    turn = world.answer(1, task, padded, {}, [])
    assert turn.prompt_tokens > world.answer(1, task, BASE_INSTRUCTIONS, {}, []).prompt_tokens


def test_tool_world_only_a_better_description_steers_the_agent_to_order_status() -> None:
    world = WORLDS["tool-descriptions"]
    tools = {t["function"]["name"]: t["function"]["description"] for t in world.tools}
    orders = many("orders", kind="order")
    picked = [world.choose(5, t, tools) for t in orders]
    assert 0.4 <= picked.count("order_status") / N <= 0.6  # no description names orders
    told = BASE_INSTRUCTIONS + "\nUse order_status for order questions."
    assert [world.answer(5, t, told, tools, []).tool for t in orders] == picked
    fixed = {**tools, "order_status": "Use this tool for order questions."}
    assert {world.choose(5, t, fixed) for t in orders} == {"order_status"}
    policy = many("returns")
    assert {world.choose(5, t, fixed) for t in policy} == {"search_policies"}
    # Through the server: a tool call first, then an answer built from the tool's result.
    srv = ScriptedServer(world, 5, {"t1": orders[1]})
    fns = [
        {**t, "function": {**t["function"], "description": fixed[t["function"]["name"]]}}
        for t in world.tools
    ]
    messages = [
        {"role": "system", "content": BASE_INSTRUCTIONS},
        {"role": "user", "content": orders[1].query},
    ]
    call = srv(request("agent", messages, tools=fns)).body["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "order_status"
    messages += [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "content": world.DATA["order_status"]},
    ]
    answer = reply_text(srv(request("agent", messages, tools=fns)))
    ok, _ = world.verdict(5, orders[1], answer)
    assert ok == (world.DATA["order_status"] in answer)
    _, wrong = world.verdict(5, orders[1], world.DATA["search_policies"])
    assert "order questions need order_status" in wrong
    assert world.reflect(5, reflection([wrong], tools["order_status"], "order_status")) == (
        "Use this tool for order questions."
    )
    assert (
        world.reflect(5, reflection([wrong], tools["search_policies"], "search_policies"))
        == (tools["search_policies"])
    )


def test_conflicting_world_only_one_of_two_plausible_rules_helps() -> None:
    world = WORLDS["conflicting"]
    tasks = many("returns")
    right, wrong = "Always mention 'original payment method'.", "Always mention 'store credit'."
    assert 0.80 <= rate(world, tasks, right) <= 0.90
    assert rate(world, tasks, wrong) <= 0.05
    assert rate(world, tasks, right + "\n" + wrong) <= 0.05
    _, ambiguous = world.verdict(1, tasks[0], "no rule")
    assert "'original payment method'" in ambiguous and "'store credit'" in ambiguous
    picks = {
        world.reflect(1, Reflection("instructions", BASE_INSTRUCTIONS, [ambiguous], f"d{i}"))
        for i in range(20)
    }
    assert {p.splitlines()[-1] for p in picks} == {right, wrong}  # either, at random
    _, refused = world.verdict(1, tasks[0], "You can have store credit.")
    fixed = world.reflect(1, reflection([refused], BASE_INSTRUCTIONS + "\n" + wrong))
    assert wrong not in fixed and fixed.endswith(right)


# -- the server ---------------------------------------------------------------------------------


def test_server_reads_agentopts_real_reflection_prompt_and_answers_in_its_format() -> None:
    world = WORLDS["phrases"]
    task = Task(
        name="t1",
        turns=[Turn(query="[t01] q", criteria=[Criterion(name="policy", instruction="c")])],
    )
    _, reason = world.verdict(1, BenchTask("t01", "returns", "train"), "x")
    verdict = {"name": "policy", "instruction": "c", "passed": False, "reason": reason}
    result = {"evaluator": "builtin.task_adherence", "status": "fail"}
    record = {"response": "x", "evaluators": [{**result, "details": {"verdicts": [verdict]}}]}
    messages = render_prompt(
        "reflect_instructions.j2",
        data={
            "instructions": BASE_INSTRUCTIONS,
            **render_examples([Example(task, 0.0, "fail", record)]),
        },
        params={"count": 1, "tools": [], "skills": []},
    )
    srv = ScriptedServer(world, 1, {})
    reply = srv(request("reflect", [m.model_dump(exclude_none=True) for m in messages]))
    out = json.loads(reply_text(reply))
    assert out["instructions"] == BASE_INSTRUCTIONS + "\nAlways mention 'refund window'."


def test_server_reads_dspy_and_gepa_layouts() -> None:
    dspy_system = (
        "Your input fields are:\n1. `question` (str):\n[[ ## completed ## ]]\n"
        "In adhering to this structure, your objective is: \n        Line one.\n        Line two."
    )
    assert instructions_in(dspy_system) == "Line one.\nLine two."
    gepa = (
        "I provided an assistant with:\n```\nCurrent text.\n```\nExamples:\n"
        "```\n# Example 1\nTool being described: order_status\n```"
    )
    read = read_reflection(gepa)
    assert (read.component, read.current) == ("order_status", "Current text.")


def test_server_refuses_past_the_budget_and_keeps_the_test_splits_share() -> None:
    task = BenchTask("t01", "returns", "test")
    srv = ScriptedServer(WORLDS["phrases"], 1, {"t01": task}, budget=4, reserve=2)
    messages = [{"role": "user", "content": task.query}]
    codes = [srv(request("agent", messages)).status for _ in range(3)]
    assert codes == [200, 200, 429]  # search names stop at budget − reserve
    codes = [srv(request("agent-test", messages)).status for _ in range(3)]
    assert codes == [200, 200, 429]  # the test split gets the rest, not more
    assert srv.counts["agent"] == 4 and sum(srv.refused.values()) == 2


def test_stats_paired_sign_flip_and_t_interval() -> None:
    assert sign_flip_p([0.1] * 10) == pytest.approx(2 / 1024)
    assert sign_flip_p([0.1, -0.1]) == 1.0
    ci = mean_ci([1.0, 2.0, 3.0])
    assert ci.mean == 2.0 and ci.low == pytest.approx(2 - 4.303 / 3**0.5)

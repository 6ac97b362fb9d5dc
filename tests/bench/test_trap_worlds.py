"""The seven trap worlds (`bench/gepa_peer/traps.py`) trap as documented — one test per world
— and the bench's own leak scan finds a quoted question."""

from __future__ import annotations

from bench.gepa_peer.leakscan import leaks
from bench.gepa_peer.suite import WORLDS
from bench.gepa_peer.traps import by_task
from bench.gepa_peer.worlds import BASE_INSTRUCTIONS, BenchTask, Reflection, World

N = 400


def rate(world: World, tasks: list[BenchTask], instructions: str, seed: int = 7) -> float:
    return sum(world.passes(seed, t, instructions) for t in tasks) / len(tasks)


def many(topic: str, split: str = "train", **kw: str) -> list[BenchTask]:
    return [BenchTask(f"x{i}", topic, split, **kw) for i in range(N)]


def reflection(lines: list[str], current: str = BASE_INSTRUCTIONS, component: str = "instructions"):
    return Reflection(component, current, lines, "d1")


def test_many_rules_each_rule_is_needed_by_four_tasks() -> None:
    world = WORLDS["many-rules"]
    tasks = world.tasks()
    per_topic = {t: sum(x.topic == t for x in tasks) for t in world.TOPICS12}
    assert set(per_topic.values()) == {4}
    assert 0.85 <= rate(world, many("repairs"), "Always mention 'repair ticket'.") <= 0.95
    assert rate(world, many("repairs"), "Always mention 'refund window'.") <= 0.15


def test_distractor_helps_its_train_tasks_and_fails_held_out_answers() -> None:
    world = WORLDS["distractor"]
    sale = BASE_INSTRUCTIONS + "\nAlways mention 'holiday sale'."
    promo = many("promotions", kind="promo")
    assert rate(world, promo, sale) >= 0.8 and rate(world, promo, BASE_INSTRUCTIONS) <= 0.2
    rule = "\nAlways mention 'refund window'."
    held_out = many("returns", split="test")
    answers = [world.answer(3, t, sale + rule, {}, []).text for t in held_out]
    verdicts = [world.verdict(3, t, a)[0] for t, a in zip(held_out, answers, strict=True)]
    clean = [world.verdict(3, t, world.answer(3, t, BASE_INSTRUCTIONS + rule, {}, []).text)[0]
             for t in held_out]  # fmt: skip
    assert sum(verdicts) / N <= sum(clean) / N - 0.4  # the sale costs 60% of the passes
    train = many("returns")
    said = [world.answer(3, t, sale + rule, {}, []).text for t in train]
    assert sum(world.verdict(3, t, a)[0] for t, a in zip(train, said, strict=True)) / N >= 0.8
    assert world.tasks()[3].kind == "promo" and not any(
        t.kind == "promo" for t in world.tasks() if t.split != "train"
    )


def test_scoped_a_rule_naming_no_group_is_applied_to_both_and_fails_one() -> None:
    world = WORLDS["scoped"]
    personal = many("returns", group="personal")
    unscoped = "Mention 'invoice credit'."
    scoped = "On returns for business customers: mention 'invoice credit'."
    assert rate(world, personal, unscoped) <= 0.1
    assert 0.25 <= rate(world, personal, scoped) <= 0.35  # untouched by the business rule
    ok, reason = world.verdict(1, personal[0], "Please note our invoice credit.")
    assert not ok and reason == "offers 'invoice credit', which is only for business customers"
    fixed = world.reflect(1, reflection([reason], BASE_INSTRUCTIONS + "\n" + unscoped))
    assert unscoped not in fixed and "For business customers asking about returns" in fixed


def test_reworded_reasons_come_in_three_styles_the_reflection_model_reads() -> None:
    world = WORLDS["reworded"]
    task = BenchTask("t01", "returns", "train")
    reasons = {world.verdict(s, task, f"no phrase {s}")[1] for s in range(60)}
    assert any(r.startswith("does not mention 'refund window'") for r in reasons)
    assert "Left out: refund window (returns policy)." in reasons
    assert any("never brings up the refund window;" in r for r in reasons)
    for reason in reasons:
        assert world.reflect(1, reflection([reason])).endswith("Always mention 'refund window'.")


def test_memorizer_memorized_lines_help_only_their_own_question() -> None:
    world = WORLDS["memorizer"]
    tasks = [t for t in world.tasks() if t.topic == "returns"]
    first = tasks[0]
    memorized = world.memorized(first, "refund window")
    assert world.p_pass(first, memorized) == world.p_with
    assert all(world.p_pass(t, memorized) == world.p_without for t in tasks[1:])
    lines = [f"User: {first.query}", "- task_adherence / policy: x — does not mention "
             "'refund window', which the policy on returns requires"]  # fmt: skip
    outs = {world.reflect(1, Reflection("instructions", BASE_INSTRUCTIONS, lines, f"d{i}"))
            for i in range(30)}  # fmt: skip
    assert any(memorized in o for o in outs) and any("Always mention" in o for o in outs)
    assert leaks([memorized], world.tasks()) == [first.name]


def test_tool_routing_quoted_descriptions_route_only_the_quoted_question() -> None:
    world = WORLDS["tool-routing"]
    tools = {t["function"]["name"]: t["function"]["description"] for t in world.tools}
    tracking = [t for t in world.tasks() if t.kind == "tracking"]
    orders = [t for t in world.tasks() if t.kind == "order"]
    assert {world.choose(2, t, tools) for t in orders} == {"track_parcel"}  # misled
    fixed = {
        **tools,
        "track_parcel": "Use this tool for tracking questions.",
        "order_status": "Use this tool for order questions.",
    }
    assert all(world.choose(2, t, fixed) == "track_parcel" for t in tracking)
    assert all(world.choose(2, t, fixed) == "order_status" for t in orders)
    quoted = {**tools, "track_parcel": f'Use this tool for questions like "{tracking[0].query}"'}
    assert world.choose(2, tracking[0], quoted) == "track_parcel"
    # No longer named by any description, order questions are a draw among the three.
    assert {world.choose(2, t, quoted) for t in orders} == set(tools)
    _, reason = world.verdict(2, tracking[1], world.DATA["order_status"])
    assert "tracking questions need track_parcel" in reason


def test_memorized_qa_memorized_lines_pass_their_train_question_not_reworded_ones() -> None:
    world = WORLDS["memorized-qa"]
    tasks = world.tasks()
    returns = [t for t in tasks if t.topic == "returns"]
    assert len({t.text for t in returns}) == len(returns)  # every question worded anew
    train, held = returns[0], [t for t in returns if t.split != "train"]
    memorized = f'When asked "{train.query}", the answer is 45 days.'
    assert world.p_pass(train, memorized) == 0.9
    assert all(world.p_pass(t, memorized) == 0.1 for t in held)
    general = "When asked about return or refund: state '45 days'."
    assert all(world.p_pass(t, general) == 0.9 for t in returns)
    assert leaks([memorized], tasks) == [train.name] and leaks([general], tasks) == []
    assert train.row() == {"name": train.name, "query": train.query, "ground_truth": "45 days"}


def test_reflection_lines_are_read_per_task_in_any_layout() -> None:
    lines = ["Task 1:", "User: [t03] q", "reason a", "Task 2:", "### question", "[t05] q", "b"]
    assert by_task(reflection(lines)) == [
        ("t03", "User: [t03] q"),
        ("t03", "reason a"),
        ("t03", "Task 2:"),
        ("t03", "### question"),
        ("t05", "[t05] q"),
        ("t05", "b"),
    ]

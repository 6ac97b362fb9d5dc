"""Rubric generation (rules, repair, re-ask) and the rubric self-check (good > bad)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.core.errors import ModelCallError
from agentopt.core.files.rubric import RubricDimension, dump_rubric, load_rubric
from agentopt.models.call import CallLayer, CallSettings
from agentopt.workflows.generate.prompts import AgentContext
from agentopt.workflows.generate.rubric import RubricRejected, generate_rubric, repair_rubric
from agentopt.workflows.generate.rubric_check import RubricCheck, check_rubric
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

AGENT = AgentContext(instruction="A support agent for an online store that handles refunds.")


def _dims(*weights: Any) -> dict[str, Any]:
    return {
        "dimensions": [
            {"id": f"dim_{i}", "description": f"Does thing {i} well.", "weight": w}
            for i, w in enumerate(weights)
        ]
    }


def _check_rules(dims: list[RubricDimension]) -> None:
    """The rules of cli.md: 4–8 + general_quality, one weight 8–10, the others 1–6."""
    own = [d for d in dims if d.id != "general_quality"]
    assert 4 <= len(own) <= 8
    assert [d.id for d in dims].count("general_quality") == 1
    assert dims[-1].id == "general_quality" and dims[-1].always_applicable
    assert sum(1 for d in dims if 8 <= d.weight <= 10) == 1
    assert all(1 <= d.weight <= 6 for d in dims if d.weight < 8)
    assert len({d.id for d in dims}) == len(dims)


def test_repair_makes_ids_snake_case_and_weights_follow_the_rule() -> None:
    raw = {
        "dimensions": [
            {"id": "Refund Accuracy", "description": "States the window.", "weight": 7},
            {"id": "tone", "description": "Polite.", "weight": 9},
            {"id": "3rd-party links", "description": "No unsafe links.", "weight": "12"},
            {"id": "refund_accuracy", "description": "Duplicate after repair.", "weight": 2},
            {"id": "brevity", "description": "Short.", "weight": 0},
            {"id": "general_quality", "description": "Generated one is replaced.", "weight": 9},
        ]
    }
    dims = repair_rubric(raw)
    _check_rules(dims)
    by_id = {d.id: d.weight for d in dims}
    # "12" (as text) is the highest: it becomes the one 8–10 dimension, clamped to 10;
    # the 9 and the 7 fall to 6; 0 rises to 1; the duplicate id is dropped.
    assert by_id == {
        "refund_accuracy": 6,
        "tone": 6,
        "dimension_3rd_party_links": 10,
        "brevity": 1,
        "general_quality": 5,
    }
    assert dims[-1].description == "Other important quality factors not already covered."


def test_no_heavy_dimension_promotes_the_heaviest_and_too_many_are_cut() -> None:
    dims = repair_rubric(_dims(3, 5, 2, 5))
    assert [d.weight for d in dims] == [3, 8, 2, 5, 5]  # the first 5 becomes the 8
    many = repair_rubric(_dims(*range(1, 11)))  # ten dimensions: keep the 8 heaviest
    _check_rules(many)
    assert [d.id for d in many][:8] == [f"dim_{i}" for i in range(2, 10)]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (_dims(9, 3, 2), "found 3"),
        ({"dimensions": "tone"}, "list of dimension objects"),
        ({"dimensions": [{"id": "a", "weight": 3}] * 4}, "no description"),
    ],
)
def test_unrepairable_rubrics_are_rejected_with_the_reason(raw: Any, why: str) -> None:
    with pytest.raises(RubricRejected, match=why):
        repair_rubric(raw)


def test_embedded_ids_are_made_from_the_descriptions() -> None:
    # What the embedded model writes: no ids, a repeated dimension, two that start alike.
    raw = {
        "dimensions": [
            {"description": "Refunds within 30 days of delivery are offered.", "weight": 10},
            {"description": "I've checked the order status before answering.", "weight": 4},
            {"description": "Refunds within 30 days of delivery are offered!", "weight": 9},
            {"description": "Refunds within the window are explained clearly.", "weight": 5},
            {"description": "12; 9; 8.", "weight": 3},
            {"description": "Polite, calm and short replies.", "weight": 2},
        ]
    }
    dims = repair_rubric(raw, ids_from_descriptions=True)
    _check_rules(dims)
    assert [d.id for d in dims] == [
        "refunds_within_days",
        "checked_order_status",
        "refunds_within_window",
        "dimension",
        "polite_calm_short",
        "general_quality",
    ]
    same_start = {**raw["dimensions"][3], "description": "Refunds within days, always."}
    again = repair_rubric(
        {"dimensions": [*raw["dimensions"][:3], same_start, *raw["dimensions"][4:]]},
        ids_from_descriptions=True,
    )
    assert "refunds_within_days_2" in [d.id for d in again]
    with pytest.raises(RubricRejected, match="found 3"):  # repeats do not count twice
        repair_rubric({"dimensions": raw["dimensions"][:4]}, ids_from_descriptions=True)


def _layer_run(project: Path, coro_fn: Callable[[CallLayer], Any]) -> Any:
    async def main() -> Any:
        async with CallLayer(project, CallSettings(cache_enabled=False, max_attempts=1)) as layer:
            return await coro_fn(layer)

    return asyncio.run(main())


def test_generate_rubric_reasks_quoting_the_problem(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    good = json.dumps(_dims(10, 4, 3, 2))
    gen = generator(rubric_replies=["I think tone matters.", json.dumps(_dims(9, 1)), good])
    dims = _layer_run(project, lambda layer: generate_rubric(layer, gen.model, AGENT, seed=3))
    _check_rules(dims)
    assert gen.calls("rubric_dimensions") == 3
    reask = gen.requests[1].messages[-1].content or ""
    assert "cannot be used" in reask and "JSON object" in reask
    third = gen.requests[2].messages[-1].content or ""
    assert "found 2" in third  # the second reply had too few dimensions, and was told so
    # The rubric round-trips through the rubric loader.
    path = project / "rubric_dimensions.json"
    path.write_text(dump_rubric(dims), encoding="utf-8")
    assert load_rubric(path) == dims


def test_generate_rubric_gives_up_after_two_reasks(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(rubric_replies=["no json here"])
    with pytest.raises(ModelCallError, match="no usable rubric after 3 attempts"):
        _layer_run(project, lambda layer: generate_rubric(layer, gen.model, AGENT))


def _tasks() -> list[Task]:
    def task(name: str, category: str, index: int) -> Task:
        turn = Turn(
            query=f"Can I get a refund for order {name}?",
            ground_truth="Yes, within 30 days.",
            criteria=[Criterion(name="window", instruction="States the 30-day window.")],
        )
        return Task(name=name, turns=[turn], category=category, index=index)

    thread = Task(
        name="thread",
        turns=[Turn(query="Hi"), Turn(query="Return it")],
        category="core",
        index=0,
    )
    return [thread, task("edge_1", "edge", 1), task("core_1", "core", 2), task("x", "edge", 3)]


def _check(project: Path, gen: ScriptedGenerator) -> RubricCheck:
    rubric = project / "rubric_dimensions.json"
    rubric.write_text(dump_rubric(repair_rubric({"dimensions": gen.rubric})), encoding="utf-8")
    spec = {"name": "shop-quality", "local_uri": str(rubric)}
    return _layer_run(
        project,
        lambda layer: check_rubric(layer, gen.model, spec, _tasks(), AGENT, project_dir=project),
    )


def test_self_check_passes_when_the_rubric_tells_good_from_bad(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    check = _check(project, gen)
    assert check.status == "passed"
    # Two single-turn tasks, core first; never the thread.
    assert [r.task for r in check.rows] == ["core_1", "edge_1"]
    assert all(r.good_score == 1.0 and r.bad_score == 0.0 for r in check.rows)
    assert gen.calls("answer_pair") == 2 and gen.calls("rubric") == 4
    assert check.summary().startswith("✓ good answers outscore poor ones on 2/2 tasks")


def test_self_check_warns_when_good_and_bad_score_the_same(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    check = _check(project, generator(judge_can_tell=False))
    assert check.status == "failed"
    assert all(r.good_score == r.bad_score == 0.5 for r in check.rows)
    assert "did not score a good answer above a poor one on core_1, edge_1" in check.summary()


def test_self_check_reports_a_judge_that_cannot_be_reached(project: Path) -> None:
    rubric = project / "rubric_dimensions.json"
    rubric.write_text(dump_rubric(repair_rubric(_dims(9, 3, 2, 1))), encoding="utf-8")
    spec = {"name": "shop-quality", "local_uri": str(rubric)}
    check = _layer_run(
        project,
        lambda layer: check_rubric(
            layer, "mock:not-registered", spec, _tasks(), AGENT, project_dir=project
        ),
    )
    assert check.status == "error" and "not registered" in check.message

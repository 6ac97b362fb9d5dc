"""Which evaluators run on each task turn: configured, M365 defaults / extend / replace per item
and per turn, task_adherence where criteria exist."""

from __future__ import annotations

import pytest

from agentopt.contracts.task import Criterion, Dataset, EvaluatorRef, Task, Turn
from agentopt.datasets.load import load_dataset
from agentopt.evaluators import EvaluatorUse, select_evaluators


def names(uses: list[EvaluatorUse]) -> list[str]:
    return [u.name for u in uses]


def task(*turns: Turn, evaluators=None, mode="extend") -> Task:
    return Task(name="t", turns=list(turns), evaluators=evaluators, evaluators_mode=mode)


def m365(default=None) -> Dataset:
    return Dataset(tasks=[], format="m365", default_evaluators=default)


CRIT = [Criterion(name="c", instruction="Do c.")]


def test_nothing_configured_gives_relevance_and_coherence():
    assert [names(t) for t in select_evaluators(task(Turn(query="q")))] == [
        ["Relevance", "Coherence"]
    ]


def test_nothing_configured_with_criteria_adds_task_adherence_once():
    (uses,) = select_evaluators(task(Turn(query="q", criteria=CRIT * 3)))
    assert names(uses) == ["Relevance", "Coherence", "builtin.task_adherence"]


def test_configured_evaluators_run_on_every_task():
    configured = [
        "ExactMatch",
        {"name": "builtin.regex_match", "initialization_parameters": {"patterns": ["x"]}},
    ]
    (uses,) = select_evaluators(task(Turn(query="q")), configured=configured)
    assert names(uses) == ["ExactMatch", "builtin.regex_match"]
    assert uses[1].options == {"patterns": ["x"]}


def test_configured_task_adherence_is_not_doubled():
    (uses,) = select_evaluators(
        task(Turn(query="q", criteria=CRIT)), configured=["builtin.Task_Adherence"]
    )
    assert names(uses) == ["builtin.Task_Adherence"]


def test_m365_without_defaults_uses_system_defaults_then_extends():
    item = task(Turn(query="q"), evaluators=[EvaluatorRef(name="ExactMatch")])
    (uses,) = select_evaluators(item, dataset=m365())
    assert names(uses) == ["Relevance", "Coherence", "ExactMatch"]


def test_m365_extend_item_options_win_on_a_clash():
    doc = m365(
        [EvaluatorRef(name="Relevance", options={"threshold": 3}), EvaluatorRef(name="Citations")]
    )
    item = task(
        Turn(query="q"),
        evaluators=[EvaluatorRef(name="relevance", options={"threshold": 4})],
        mode="extend",
    )
    (uses,) = select_evaluators(item, dataset=doc)
    assert names(uses) == ["Relevance", "Citations"]
    assert uses[0].options == {"threshold": 4}


def test_m365_replace_uses_the_items_own_only():
    doc = m365([EvaluatorRef(name="Relevance"), EvaluatorRef(name="Coherence")])
    item = task(Turn(query="q"), evaluators=[EvaluatorRef(name="PartialMatch")], mode="replace")
    assert [names(u) for u in select_evaluators(item, dataset=doc)] == [["PartialMatch"]]


def test_m365_configured_evaluators_replace_only_the_system_defaults():
    (uses,) = select_evaluators(task(Turn(query="q")), configured=["ExactMatch"], dataset=m365())
    assert names(uses) == ["ExactMatch"]
    doc = m365([EvaluatorRef(name="Citations")])
    (uses,) = select_evaluators(task(Turn(query="q")), configured=["ExactMatch"], dataset=doc)
    assert names(uses) == ["ExactMatch", "Citations"]


def test_m365_per_turn_resolution(m365):
    """The official multi-turn example: turn 2 extends with Groundedness (threshold 4),
    turn 3 replaces everything with ExactMatch."""
    path = m365 / "schema/v1/examples/valid/multi-turn-with-evaluators.json"
    dataset = load_dataset(path, upgrade=False)
    per_turn = select_evaluators(dataset.tasks[0], dataset=dataset)
    assert [names(u) for u in per_turn] == [
        ["Relevance", "Coherence"],
        ["Relevance", "Coherence", "Groundedness"],
        ["ExactMatch"],
    ]
    assert per_turn[1][2].options == {"threshold": 4}
    assert per_turn[2][0].options == {"case_sensitive": False}


def test_m365_custom_evaluators_example(m365):
    path = m365 / "schema/v1/examples/valid/custom-evaluators.json"
    dataset = load_dataset(path, upgrade=False)
    got = [names(select_evaluators(t, dataset=dataset)[0]) for t in dataset.tasks]
    assert got == [
        ["Relevance", "Coherence", "professional_tone"],
        ["consistency_check"],
        ["answer_accuracy"],
    ]
    assert select_evaluators(dataset.tasks[1], dataset=dataset)[0][0].options == {
        "threshold": 3,
        "options": {"samples": 5},
    }


@pytest.mark.parametrize("mode", ["extend", "replace"])
def test_turn_level_criteria_get_task_adherence_in_either_mode(mode):
    t = task(
        Turn(query="a"),
        Turn(
            query="b",
            criteria=CRIT,
            evaluators=[EvaluatorRef(name="Fluency")],
            evaluators_mode=mode,
        ),
    )
    first, second = select_evaluators(t, dataset=m365())
    assert "builtin.task_adherence" not in names(first)
    assert names(second)[-1] == "builtin.task_adherence"
    assert ("Relevance" in names(second)) is (mode == "extend")

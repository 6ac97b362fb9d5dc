"""Racing a candidate's validation against the best's score: stop only when even a perfect
rest cannot reach it — never on a tie, never while an error is unexplained."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agentopt.workflows.optimize.evaluation import Race


def unit(score: float | None, error: bool = False) -> Any:
    errors = [("agent_error", "boom")] if error else []
    return SimpleNamespace(score=SimpleNamespace(score=score, errors=lambda: errors))


def test_a_candidate_is_out_once_a_perfect_rest_cannot_reach_the_bar() -> None:
    race = Race(4, lambda: ("cand_02", 0.75))
    race.add(unit(1.0))
    race.add(unit(0.0))
    assert not race.lost()  # 1 + 0 + 1 + 1 = 3 of 4: it can still tie the best
    race.add(unit(0.5))
    assert race.lost() and race.stopped == ("cand_02", 0.75, 0.625)
    assert race.lost()  # stays out, whatever the bar does next


def test_no_bar_or_an_error_keeps_the_candidate_running() -> None:
    assert not Race(2, lambda: None).lost()
    race = Race(4, lambda: ("baseline", 1.0))
    race.add(unit(None, error=True))
    race.add(unit(0.0))
    assert not race.lost()  # an error is left out of the mean: no bound can be drawn


def test_the_bar_is_read_at_each_check() -> None:
    bar = {"now": ("baseline", 0.5)}
    race = Race(4, lambda: bar["now"])
    race.add(unit(0.0))
    race.add(unit(0.0))
    assert not race.lost()  # at most 0.5: ties the baseline
    bar["now"] = ("cand_03", 0.75)  # another proposal became the best meanwhile
    assert race.lost() and race.stopped is not None and race.stopped[0] == "cand_03"

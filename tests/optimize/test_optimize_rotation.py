"""Proposer rotation: strategies of a target alternate, but one whose screenings keep failing
yields its turns to one that fails less (and gets them back when the other fails too)."""

from __future__ import annotations

from dataclasses import dataclass

from agentopt.workflows.optimize.rotation import Rotation


@dataclass
class Named:
    name: str


def picks(rotation: Rotation, n: int) -> list[str]:
    out = []
    for _ in range(n):
        strategy = rotation.next(model_left=False)
        assert strategy is not None
        out.append(strategy.name)
    return out


def test_strategies_alternate_while_none_fails() -> None:
    rotation = Rotation(
        targets=["instructions"], strategies={"instructions": [Named("reflect"), Named("rules")]}
    )  # type: ignore[list-item]
    assert picks(rotation, 4) == ["reflect", "rules", "reflect", "rules"]


def test_a_failing_strategy_yields_its_turns() -> None:
    rotation = Rotation(
        targets=["instructions"], strategies={"instructions": [Named("reflect"), Named("rules")]}
    )  # type: ignore[list-item]
    rotation.record("rules", success=False)
    rotation.record("rules", success=False)
    assert picks(rotation, 3) == ["reflect", "reflect", "reflect"]
    rotation.record("reflect", success=False)  # now 1 vs 2: both within one failure again
    assert set(picks(rotation, 2)) == {"reflect", "rules"}
    rotation.record("rules", success=True)  # a success resets its count
    assert rotation.failures["rules"] == 0


def test_a_target_whose_strategies_keep_failing_yields_to_the_others() -> None:
    rotation = Rotation(
        targets=["instructions", "toolset"],
        strategies={"instructions": [Named("reflect")], "toolset": [Named("toolset")]},
    )  # type: ignore[list-item]
    assert picks(rotation, 2) == ["reflect", "toolset"]
    rotation.record("toolset", success=False)
    rotation.record("toolset", success=False)  # e.g. "every tool is used in a passing task"
    assert picks(rotation, 3) == ["reflect", "reflect", "reflect"]
    rotation.record("reflect", success=False)
    assert set(picks(rotation, 2)) == {"reflect", "toolset"}

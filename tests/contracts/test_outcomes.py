"""The one ordering of task outcomes (contracts/outcomes.py): a test per transition."""

from __future__ import annotations

import pytest

from agentopt.contracts.outcomes import OUTCOME_ORDER, outcome_change

# Every (before, after) pair of outcomes, and what the change is. Written out by hand (not
# derived from the order) so a change to the order shows here.
TRANSITIONS = [
    ("pass", "pass", "same"),
    ("pass", "partial", "worse"),
    ("pass", "fail", "worse"),
    ("pass", "error", "worse"),
    ("pass", "skipped", "worse"),
    ("partial", "pass", "better"),
    ("partial", "partial", "same"),
    ("partial", "fail", "worse"),
    ("partial", "error", "worse"),
    ("partial", "skipped", "worse"),
    ("fail", "pass", "better"),
    ("fail", "partial", "better"),
    ("fail", "fail", "same"),
    ("fail", "error", "worse"),
    ("fail", "skipped", "worse"),
    ("error", "pass", "better"),
    ("error", "partial", "better"),
    ("error", "fail", "better"),
    ("error", "error", "same"),
    ("error", "skipped", "changed"),
    ("skipped", "pass", "better"),
    ("skipped", "partial", "better"),
    ("skipped", "fail", "better"),
    ("skipped", "error", "changed"),
    ("skipped", "skipped", "same"),
    # present in one run only, or an outcome this version does not know
    (None, "pass", "changed"),
    ("fail", None, "changed"),
    (None, None, "same"),
    ("pass", "timeout", "changed"),
]


@pytest.mark.parametrize(("before", "after", "expected"), TRANSITIONS)
def test_transition(before: str | None, after: str | None, expected: str) -> None:
    assert outcome_change(before, after) == expected


def test_every_pair_of_known_outcomes_is_listed() -> None:
    listed = {(b, a) for b, a, _ in TRANSITIONS}
    assert {(b, a) for b in OUTCOME_ORDER for a in OUTCOME_ORDER} <= listed


def test_order_is_best_first_and_changes_are_antisymmetric() -> None:
    assert OUTCOME_ORDER == ("pass", "partial", "fail", "error", "skipped")
    opposite = {"better": "worse", "worse": "better", "changed": "changed", "same": "same"}
    for b in OUTCOME_ORDER:
        for a in OUTCOME_ORDER:
            assert outcome_change(a, b) == opposite[outcome_change(b, a)]

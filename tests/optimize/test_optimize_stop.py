"""The search stops for the right reason (issue 31): not `completed` on a perfect validation
score while the best still fails train tasks a proposal could fix, and the reason is said in
one phrase everywhere."""

from __future__ import annotations

from pathlib import Path

from agentopt.contracts.optimize_job import TERMINATION_TEXT, termination_text
from tests.optimize.conftest import Models, make_project, optimize, task

SIX = ("refund window", "tracking link", "order number", "data export", "gift card", "repair slip")


def test_a_perfect_validation_score_does_not_end_the_search_while_train_failures_remain(
    tmp_path: Path, models: Models
) -> None:
    """Validation only asks for the first phrase; train asks for six. The first child (five
    rules, the proposer's most per proposal) is perfect on validation but still fails the
    sixth phrase on train: the search goes on, and the child that holds all six ties it on
    validation and ranks first as its descendant."""
    train = [task(f"tr{i}", p) for i, p in enumerate(SIX)]
    validation = [task(f"va{i}", SIX[0]) for i in range(4)]
    test = [task(f"te{i}", p) for i, p in enumerate(SIX)]
    project = make_project(
        tmp_path,
        train,
        validation=validation,
        test=test,
        options={"optimization_config": {"candidate_screening_sample_size": 6}},
    )
    outcome = optimize(project, max_candidates=5, seed=1, parallel_proposals=1)
    job = outcome.job
    first = job.candidate("cand_01")
    assert first is not None and first.validation is not None and first.validation.score == 1.0
    assert len(first.mutation["rules_added"]) == 5  # one phrase short
    best = job.candidate(job.best or "")
    assert best is not None and best.id != "cand_01" and best.parent == "cand_01"
    text = outcome.instructions[best.id]
    assert all(p in text for p in SIX)
    assert best.test is not None and best.test.score == 1.0
    assert job.termination_reason == "completed"
    assert job.stop_detail == (
        f"{best.id} passes every validation task with the top score and no train failure it "
        "could still fix remains"
    )
    assert job.stop_reason == f"{TERMINATION_TEXT['completed']} ({job.stop_detail})"


def test_every_stop_reason_has_one_phrase() -> None:
    for reason in ("completed", "budget_exhausted", "screening_stalled", "interrupted"):
        assert termination_text(reason) == TERMINATION_TEXT[reason]
    assert termination_text(None) == ""

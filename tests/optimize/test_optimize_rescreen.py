"""A tool rewrite whose screening tied its parent on every minibatch task is no evidence
against it: the minibatch (the parent's weakest tasks) need not have asked for that tool. The
same rewrite proposed again from the parent is screened once more, on the new slot's
minibatch, and never a third time; a rewrite that lost a task, and instructions or rules
(written from the very tasks they are screened on), are not. Measured in the bench's tool
worlds, seeds 1–40: `tool-routing` runs that ended below GEPA's final test 12 → 2 (with the
re-ask of a quoting reply), `tool-descriptions` 1 → 0."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord, Screening
from agentopt.workflows.optimize.screening import tied
from agentopt.workflows.optimize.search import Search

TASKS = ["t01", "t02", "t03"]


class Book:
    """Scores by (candidate, task), as the job's book holds its units."""

    def __init__(self, scores: dict[tuple[str, str], float]) -> None:
        self.scores = scores

    def get(self, cand: str, task: str) -> Any:
        score = self.scores.get((cand, task))
        return None if score is None else SimpleNamespace(score=SimpleNamespace(score=score))


def screened(cid: str, strategy: str, child: list[float], parent: list[float]) -> tuple:
    record = CandidateRecord(
        id=cid,
        parent="baseline",
        strategy=strategy,
        status="screened_out",
        screening=Screening(
            tasks=TASKS,
            child=sum(child) / len(child),
            parent=sum(parent) / len(parent),
            accepted=False,
        ),
    )
    scores = {(cid, t): s for t, s in zip(TASKS, child, strict=True)}
    scores |= {("baseline", t): s for t, s in zip(TASKS, parent, strict=True)}
    return record, scores


def context(*records: tuple) -> Any:
    job = JobRecord.model_construct(candidates=[r for r, _ in records])
    scores: dict[tuple[str, str], float] = {}
    for _, s in records:
        scores |= s
    job.candidate = lambda cid: next((c for c in job.candidates if c.id == cid), None)  # type: ignore[method-assign]
    return SimpleNamespace(job=job, book=Book(scores))


def test_a_tool_rewrite_that_tied_on_every_task_is_no_evidence_against_it() -> None:
    same = screened("cand_02", "tools:order_status", [1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    lost = screened("cand_03", "tools:order_status", [1.0, 0.0, 0.0], [1.0, 0.0, 1.0])
    swap = screened("cand_04", "tools:order_status", [0.0, 1.0, 1.0], [1.0, 0.0, 1.0])
    rule = screened("cand_05", "rules", [1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    ctx = context(same, lost, swap, rule)
    assert tied(ctx, same[0])
    assert not tied(ctx, lost[0])  # it lost a task
    assert not tied(ctx, swap[0])  # one up, one down: the minibatch told something
    assert not tied(ctx, rule[0])  # written from these very tasks: a tie is evidence


def test_the_same_tool_rewrite_is_screened_again_once_after_a_tie() -> None:
    same = screened("cand_02", "tools:order_status", [1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    lost = screened("cand_03", "tools:track_parcel", [1.0, 0.0, 0.0], [1.0, 0.0, 1.0])
    search = Search.__new__(Search)
    search.ctx = context(same, lost)
    search.screened_again = set()
    assert search._screen_again("cand_02", "baseline", "digest-a")  # once more
    assert not search._screen_again("cand_02", "baseline", "digest-a")  # never a third time
    assert not search._screen_again("cand_02", "cand_09", "digest-b")  # from another parent
    assert not search._screen_again("cand_03", "baseline", "digest-c")  # it lost a task

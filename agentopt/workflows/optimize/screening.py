"""Phase B of the search loop (search.py): a candidate's screening and, when it passes, its
validation race. Its own module so the loop reads as plan → propose → screen → apply."""

from __future__ import annotations

from agentopt.contracts.optimize_job import CandidateRecord, Outranked, Screening
from agentopt.core.errors import BudgetExceeded
from agentopt.workflows.optimize.evaluation import (
    CandidateRun,
    StopRequested,
    mean_without_errors,
)
from agentopt.workflows.optimize.merge import merge_verdict
from agentopt.workflows.optimize.race import Race
from agentopt.workflows.optimize.ranking import SCORE_EPS as _EPS
from agentopt.workflows.optimize.slots import SlotOutcome
from agentopt.workflows.optimize.state import JobContext


async def screen(ctx: JobContext, out: SlotOutcome) -> None:
    """Screen a proposal on its minibatch and, when it beats its parent there (or, for a merge,
    the better parent where the two differ), race it through validation against the best.
    Errors are left out of both means and counted, never scored 0."""
    plan = out.plan
    assert out.cand_id is not None
    definition = ctx.definitions[out.cand_id]
    try:
        async with CandidateRun(ctx.eval, out.cand_id, definition) as run:
            ctx.sink.status(f"{out.cand_id}: screening on {len(plan.minibatch)} train tasks")
            child = await run.evaluate(plan.minibatch)
            # Errors are left out of both means and counted: never scored 0.
            child_mean, errors = mean_without_errors(list(child.values()))
            parent_mean: float | None
            if plan.merge is not None:
                scores = {t: u.score.score for t, u in child.items() if not u.score.errors()}
                mean, parent_mean, beats = merge_verdict(ctx.job, plan.merge, scores)
                child_mean = mean if child_mean is not None else None
                accepted = not errors and beats
            else:
                parent = [ctx.book.get(plan.parent, n) for n in plan.minibatch]
                parent_mean, _ = mean_without_errors(parent)
                accepted = (
                    not errors
                    and child_mean is not None
                    and child_mean > (parent_mean if parent_mean is not None else -1.0) + _EPS
                )
            out.screening = Screening(
                tasks=plan.minibatch,
                child=child_mean,
                parent=parent_mean,
                accepted=accepted,
                errors=errors,
            )
            if accepted:
                # Only a candidate that goes on to validation gets its folder now. Most are
                # screened out (10 of 13 in a bench `tool-routing` run), and their folders
                # were ~12% of that run's CPU (files, fsyncs, a thread each). The journal
                # holds every proposal: `JobStore.candidate_folder` writes one on demand.
                ctx.write_folder(out.cand_id, definition)
                names = ctx.splits.validation.names
                ctx.sink.status(f"{out.cand_id}: evaluating on {len(names)} validation tasks")
                race = Race(len(names), ctx.best_score, window=run.window)
                ran = await run.race(names, race)
                if race.stopped is not None:
                    best, score, at_most = race.stopped
                    out.outranked = Outranked(
                        tasks=len(ran), of=len(names), at_most=at_most, best=best,
                        best_score=score,
                    )  # fmt: skip
    except (BudgetExceeded, StopRequested) as exc:
        out.failure = exc


def tied(ctx: JobContext, record: CandidateRecord) -> bool:
    """A tool rewrite screened out on a minibatch where it scored as its parent on every
    task: the minibatch (the parent's weakest tasks) need not have asked for that tool, so
    the tie is no evidence against the rewrite. It may be proposed again from the parent and
    screened once more (`Search._screen_again`); one that lost a task may not. Instructions
    and rules are written from the very tasks they are screened on: their tie is evidence."""
    screening, parent = record.screening, record.parent
    if not record.strategy.startswith("tools:"):
        return False
    if screening is None or screening.accepted or record.status != "screened_out":
        return False
    if parent is None or not screening.tasks:
        return False
    for name in screening.tasks:
        mine, theirs = ctx.book.get(record.id, name), ctx.book.get(parent, name)
        if mine is None or theirs is None:
            return False
        if abs((mine.score.score or 0.0) - (theirs.score.score or 0.0)) > _EPS:
            return False
    return True

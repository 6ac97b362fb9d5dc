"""Step 4: the baseline and the best candidate on the held-out test split, once per job.

Its numbers never feed a choice (the best was fixed on validation before this runs); they
show how much of the validation gain survives on unseen tasks (the optimism gap).
"""

from __future__ import annotations

from agentopt.contracts.optimize_job import BASELINE_ID, TestReport
from agentopt.core.errors import BudgetExceeded
from agentopt.workflows.optimize.evaluation import CandidateRun, StopRequested, gather_settled
from agentopt.workflows.optimize.ranking import paired_delta, summarize_split
from agentopt.workflows.optimize.state import JobContext


async def evaluate_test_split(ctx: JobContext) -> None:
    """Fill `job.test` and each evaluated candidate's `test` (baseline and best)."""
    job, split = ctx.job, ctx.splits.test
    base = job.baseline
    if split is None or base is None or base.validation is None:
        return
    best_id = job.best or BASELINE_ID
    ids = [BASELINE_ID] if best_id == BASELINE_ID else [BASELINE_ID, best_id]
    report = TestReport(best=best_id)
    job.test = report
    names = split.names
    ctx.sink.status(f"test split: {' and '.join(ids)} on {len(names)} held-out tasks")

    async def one(cid: str) -> None:
        async with CandidateRun(ctx.eval, cid, ctx.definitions[cid]) as run:
            await run.evaluate(names, final=True)

    try:
        if ctx.definitions[BASELINE_ID].target == "hosted":
            for cid in ids:  # one process at a time on the agent's port
                await one(cid)
        else:
            await gather_settled([one(cid) for cid in ids])
    except BudgetExceeded as exc:
        report.note = f"the test split was not fully evaluated: {exc.message}"
        ctx.sink.notice(report.note)
    except StopRequested:
        report.note = "the test split was not fully evaluated: interrupted"
    for cid in ids:
        record = job.candidate(cid)
        scores = ctx.book.scores(cid, names)
        if record is None or len(scores) < len(names):
            continue
        record.test = summarize_split(scores, names, ctx.settings.seed)
    report.baseline_score = base.test
    best = job.candidate(best_id)
    report.best_score = best.test if best else None
    if best is None or best_id == BASELINE_ID or base.test is None or best.test is None:
        return
    report.delta = paired_delta(base.test, best.test, ctx.settings.seed)
    if (
        best.validation is not None
        and best.validation.score is not None
        and base.validation.score is not None
        and best.test.score is not None
        and base.test.score is not None
    ):
        report.validation_gain = best.validation.score - base.validation.score
        report.test_gain = best.test.score - base.test.score
        report.optimism_gap = report.validation_gain - report.test_gain

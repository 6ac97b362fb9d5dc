"""The search loop (optimizer.md §2): rounds of `--parallel-proposals` slots, each one
parent (sampled from the per-task Pareto front) × one strategy (round-robin over targets),
screened on the parent's weakest train tasks (`minibatch.py`), fully validated when it beats
the parent. When
two lineages complement each other on validation, one slot of the round merges them instead
(`merge.py`, at most `MAX_MERGES` per job), screened on the validation tasks where the two
parents differ (units its full validation then reuses).

Determinism is what makes `--resume` free: every random choice comes from a generator seeded
by (seed, proposal number), slots are planned and applied in order, and proposals are
journaled, so replaying a job after a crash rebuilds the same candidates from the journal
without calling any model again.
"""

from __future__ import annotations

import asyncio
import random

from agentopt.contracts.optimize_job import (
    BASELINE_ID,
    CandidateRecord,
    Termination,
)
from agentopt.contracts.optimize_journal import ProposalEntry, ProposedChange
from agentopt.core.errors import BudgetExceeded
from agentopt.core.ids import utc_now_iso
from agentopt.workflows.optimize.candidates import candidate_id, config_hash, fill_validation
from agentopt.workflows.optimize.evaluation import (
    CandidateRun,
    StopRequested,
)
from agentopt.workflows.optimize.examples import Examples
from agentopt.workflows.optimize.harm import HarmTracker
from agentopt.workflows.optimize.leak import LeakCheck
from agentopt.workflows.optimize.merge import (
    MAX_MERGES,
    merge_proposal,
    pick_pair,
)
from agentopt.workflows.optimize.minibatch import weakest_tasks
from agentopt.workflows.optimize.perfect import (
    FROM_FAILURES,
    Barren,
    failures,
    nothing_new_to_ask,
    nothing_to_learn,
    resisted,
)
from agentopt.workflows.optimize.ranking import SCORE_EPS as _EPS
from agentopt.workflows.optimize.ranking import sample_parent
from agentopt.workflows.optimize.rotation import Rotation
from agentopt.workflows.optimize.screening import screen, tied
from agentopt.workflows.optimize.slots import SlotOutcome, SlotPlan
from agentopt.workflows.optimize.state import JobContext
from agentopt.workflows.optimize.stop import StopRule, nothing_screened
from agentopt.workflows.optimize.strategies.base import (
    Example,
    NoProposal,
    Proposal,
    ProposalContext,
)
from agentopt.workflows.optimize.strategies.model import next_untried

SAVE_EVERY_S = 2.0
"""job.json and report.html are rewritten at most this often during the search."""


class Search:
    """Runs rounds until a stop condition holds; returns the termination reason."""

    def __init__(self, ctx: JobContext, rotation: Rotation) -> None:
        self.ctx = ctx
        self.rotation = rotation
        self.hashes = {config_hash(d): cid for cid, d in ctx.definitions.items()}
        self.screened_again: set[str] = set()
        """Configurations given a second screening after a tie (`_screen_again`)."""
        self.examples = Examples(ctx)
        self.replay: dict[int, ProposalEntry] = ctx.replay
        self.merged: set[frozenset[str]] = {
            frozenset((e.parent, e.merge_with)) for e in self.replay.values() if e.merge_with
        }
        self.empty = 0
        """Proposals in a row that gave no candidate to screen (nothing new, duplicates)."""
        self.empty_reason = ""
        """Why the last of them gave none (what the stop says when they end the search)."""
        self.barren = Barren()
        self.known: set[tuple[str, str]] = set()
        """The units in the book when the current round started."""
        self.seen: list[Example] = []
        """Their train runs, any candidate's, in a fixed order (`ProposalContext.seen`)."""
        splits = ctx.splits
        every = [*splits.train.tasks, *splits.validation.tasks]
        self.leaks = LeakCheck.of(every + (splits.test.tasks if splits.test else []))
        self.harm = HarmTracker()
        self.harmful: frozenset[str] = frozenset()
        self.stopper = StopRule(ctx)

    # -- planning ------------------------------------------------------------------------------
    def plan_merge(self) -> SlotPlan | None:
        """A merge slot, when two lineages complement each other and merges are left."""
        if len(self.merged) >= MAX_MERGES:
            return None
        pair = pick_pair(self.ctx.job, self.merged)
        if pair is None:
            return None
        self.merged.add(frozenset((pair.first, pair.second)))
        job = self.ctx.job
        job.proposals += 1
        return SlotPlan(job.proposals, pair.first, None, list(pair.tasks), set(), merge=pair)

    def plan(self, reserved: set[str], taken: dict[str, set[str]]) -> SlotPlan | None:
        job = self.ctx.job
        number = job.proposals + 1
        tried = {c.model for c in job.candidates if c.model} | reserved
        space = self.ctx.settings.model_search_space
        strategy = self.rotation.next(model_left=next_untried(space, tried) is not None)
        if strategy is None:
            return None
        job.proposals = number
        rng = random.Random(f"{self.ctx.settings.seed}:{number}")
        per_task = {c.id: c.validation.per_task for c in job.evaluated if c.validation}
        parent = sample_parent(per_task, rng)
        if strategy.target == "model":
            model = next_untried(space, tried)
            if model is not None:
                reserved.add(model)
        stuck = resisted(job, self.ctx.book, parent)
        barren = self.barren.of(parent, strategy.name)
        minibatch = weakest_tasks(self.ctx, parent, rng, taken.setdefault(parent, set()), stuck)
        saved = self.replay.get(number)
        if saved is not None:
            if saved.strategy == strategy.name and saved.parent == parent:
                # The journal knows what this slot used: the book now also holds units from
                # later rounds, which must not change an earlier choice.
                minibatch = list(saved.minibatch or minibatch)
            else:
                del self.replay[number]
        taken[parent].update(minibatch)
        return SlotPlan(number, parent, strategy, minibatch, tried, stuck=stuck, barren=barren)

    # -- phase A: propose ------------------------------------------------------------------------
    async def propose(self, plan: SlotPlan) -> SlotOutcome:
        out = SlotOutcome(plan)
        ctx = self.ctx
        saved = self.replay.get(plan.number)
        if saved is not None:
            if saved.proposal is not None:
                p = saved.proposal
                out.proposal = Proposal(
                    definition=p.definition,
                    strategy=p.strategy,
                    rationale=p.rationale,
                    mutation=p.mutation,
                    signature=p.signature,
                )
            else:
                out.reason, out.exhausted = saved.reason, saved.exhausted
                out.leaks, out.empty = saved.leaks, saved.empty
            return out
        if plan.merge is not None:
            made = merge_proposal(self.ctx.definitions, plan.merge)
            if isinstance(made, str):
                out.reason = made
            else:
                out.proposal = made
            self._journal(out)
            return out
        assert plan.strategy is not None
        parent_def = ctx.definitions[plan.parent]
        try:
            ctx.sink.status(f"proposal {plan.number}: {plan.strategy.name} from {plan.parent}")
            async with CandidateRun(ctx.eval, plan.parent, parent_def) as run:
                units = await run.evaluate(plan.minibatch)
            if plan.strategy.target in FROM_FAILURES:
                why = nothing_to_learn(plan.parent, units, plan.stuck) or nothing_new_to_ask(
                    plan.strategy.name, plan.parent, units, plan.barren
                )
                if why:
                    raise NoProposal(why)
            examples = sorted(
                (self.examples.of(n, u) for n, u in units.items()),
                key=lambda e: e.score if e.score is not None else -1.0,
            )
            # What the parent is known to do: its units from before this round, and this
            # slot's own minibatch — not whatever another slot of the round happened to
            # finish first, so the proposal does not depend on timing.
            train = [
                self.examples.of(n, u)
                for n in ctx.splits.train.names
                if (u := ctx.book.get(plan.parent, n)) is not None
                and ((plan.parent, n) in self.known or n in plan.minibatch)
            ]
            pctx = ProposalContext(
                number=plan.number,
                parent_id=plan.parent,
                parent=parent_def,
                examples=examples,
                train=train,
                tried_models=plan.tried_models,
                search_space=ctx.settings.model_search_space,
                layer=ctx.layer,
                optimization_model=ctx.optimization_model,
                seed=ctx.settings.seed,
                rng=random.Random(f"{ctx.settings.seed}:{plan.number}:propose"),
                tried=[
                    c.strategy
                    for c in ctx.job.candidates
                    if c.parent == plan.parent and not tied(ctx, c)
                ],
                harmful=self.harmful,
                leaks=self.leaks,
                start=ctx.definitions[BASELINE_ID],
                seen=self.seen,
            )
            if plan.strategy.needs_model and ctx.optimization_model:
                ctx.sink.status(
                    f"proposal {plan.number}: reflecting with {ctx.optimization_model} "
                    f"({plan.strategy.name} from {plan.parent})"
                )
            out.proposal = await plan.strategy.propose(pctx)
        except NoProposal as exc:
            out.reason, out.exhausted, out.leaks = exc.reason, exc.exhausted, exc.leaks
            out.empty = exc.empty
        except (BudgetExceeded, StopRequested) as exc:
            out.failure = exc
            return out
        self._journal(out)
        return out

    def _journal(self, out: SlotOutcome) -> None:
        plan, ctx = out.plan, self.ctx
        entry = ProposalEntry(
            number=plan.number,
            strategy=plan.label,
            parent=plan.parent,
            minibatch=plan.minibatch,
            at=utc_now_iso(),
            merge_with=plan.merge.second if plan.merge is not None else None,
        )
        if out.proposal is not None:
            entry.proposal = ProposedChange(
                definition=out.proposal.definition,
                strategy=out.proposal.strategy,
                rationale=out.proposal.rationale,
                mutation=out.proposal.mutation,
                signature=out.proposal.signature,
            )
        else:
            entry.reason, entry.exhausted, entry.leaks = out.reason, out.exhausted, out.leaks
            entry.empty = out.empty
        ctx.store.append(entry)
        self.replay[plan.number] = entry

    def register(self, out: SlotOutcome) -> None:
        """In slot order: refuse duplicates, give the child its id, folder and record."""
        proposal = out.proposal
        ctx, plan = self.ctx, out.plan
        if proposal is None:
            ctx.job.leak_refusals += out.leaks
            return
        ctx.job.leak_refusals += int(proposal.mutation.get("leaks_dropped", 0) or 0)
        leaks = self.leaks.in_definition(proposal.definition, ctx.definitions[BASELINE_ID])
        if leaks:
            # Never evaluated: a text that quotes a task teaches that task, not a policy.
            ctx.job.leak_refusals += 1
            out.reason = f"refused before evaluation: {proposal.strategy} " + leaks[0].describe()
            out.proposal = None
            return
        digest = config_hash(proposal.definition)
        meaning = f"{plan.parent}:{proposal.signature}" if proposal.signature else None
        same = self.hashes.get(digest) or (self.hashes.get(meaning) if meaning else None)
        if same is not None and not self._screen_again(same, plan.parent, digest):
            out.reason = f"same change as {same}"
            out.proposal = None
            return
        cid = candidate_id(plan.number)
        self.hashes[digest] = cid
        if meaning:
            self.hashes[meaning] = cid
        out.cand_id = cid
        ctx.definitions[cid] = proposal.definition
        saved = self.replay.get(plan.number)
        ctx.job.candidates.append(
            CandidateRecord(
                id=cid,
                number=plan.number,
                parent=plan.parent,
                strategy=proposal.strategy,
                rationale=proposal.rationale,
                mutation=proposal.mutation,
                model=proposal.definition.model,
                status="screening",
                config_dir=f"candidates/{cid}",
                created_at=(saved.at if saved else "") or utc_now_iso(),
            )
        )

    # -- phase C: apply ------------------------------------------------------------------------
    def apply(self, out: SlotOutcome) -> None:
        ctx, plan = self.ctx, out.plan
        label = out.proposal.strategy if out.proposal else plan.label
        if out.cand_id is None:
            if out.failure is not None:
                return
            # Nothing was screened: not a stall (optimizer.md §2), but counted, so that a
            # search with nothing left to propose ends.
            self.empty += 1
            self.empty_reason = out.reason
            if plan.strategy is not None:
                self.rotation.record(plan.strategy.name, success=False)
                if out.exhausted:
                    self.rotation.exhausted.add(plan.strategy.name)
                if out.empty:
                    shown = ctx.book_units(plan.parent, plan.minibatch)
                    self.barren.record(plan.parent, plan.strategy.name, failures(shown))
            ctx.sink.stalled(plan.number, label, out.reason)
            return
        self.empty = 0
        record = ctx.job.candidate(out.cand_id)
        assert record is not None
        record.screening = out.screening
        if out.failure is not None or out.screening is None:
            return
        if plan.strategy is not None:
            self.rotation.record(plan.strategy.name, success=out.screening.accepted)
        if not out.screening.accepted:
            record.status = "incomplete" if out.screening.errors else "screened_out"
            ctx.job.stalls += 1
            self.stopper.screened_out(self._moved(out.cand_id, plan))
            ctx.sink.candidate(ctx.job, record)
            return
        if out.outranked is not None:
            # Not in the pool: it could not have been the best, and a score from part of the
            # validation split is no score (optimizer.md §5).
            record.status, record.outranked = "outranked", out.outranked
            ctx.sink.candidate(ctx.job, record)
            return
        names = ctx.splits.validation.names
        fill_validation(
            record, ctx.book_units(out.cand_id, names), names, ctx.layer, ctx.settings.seed
        )
        record.status = "evaluated"
        ranking = ctx.rerank()
        if ranking.best == out.cand_id:
            ctx.job.stalls = 0
            self.stopper.new_best()
        self.harmful = self.harm.lines(ctx)
        ctx.sink.candidate(ctx.job, record)

    def _screen_again(self, same: str, parent: str, digest: str) -> bool:
        """A change proposed again from the same parent is screened once more, on this slot's
        minibatch, when its first screening tied on every task (`screening.tied`: no
        evidence against it); never a third time."""
        record = self.ctx.job.candidate(same)
        if record is None or record.parent != parent or digest in self.screened_again:
            return False
        if not tied(self.ctx, record):
            return False
        self.screened_again.add(digest)
        return True

    def _moved(self, child: str, plan: SlotPlan) -> bool:
        """The child beat its parent on at least one minibatch task."""
        for name in plan.minibatch:
            mine, theirs = self.ctx.book.get(child, name), self.ctx.book.get(plan.parent, name)
            if mine is None or theirs is None:
                continue
            if (mine.score.score or 0.0) > (theirs.score.score or 0.0) + _EPS:
                return True
        return False

    # -- the loop --------------------------------------------------------------------------------
    def _stop_reason(self) -> Termination | None:
        job, settings = self.ctx.job, self.ctx.settings
        accepted = sum(1 for c in job.evaluated if c.id != BASELINE_ID)
        if accepted >= settings.max_candidates:
            job.stop_detail = f"{accepted} candidates evaluated (--max-candidates)"
            return "completed"
        stalled = self.stopper.stalled()
        if stalled is not None:
            job.stop_detail = stalled
            return "screening_stalled"
        top = self.stopper.ceiling()
        if top is not None:
            job.stop_detail = top
            return "completed"
        if self.empty >= settings.max_empty:
            # Nothing was screened, so no screening failed: the proposers ran dry.
            job.stop_detail = nothing_screened(self.empty, self.empty_reason)
            return "completed"
        return None

    async def run(self) -> Termination:
        ctx = self.ctx
        while True:
            if ctx.eval.stop_requested:
                return "interrupted"
            reason = self._stop_reason()
            if reason is not None:
                return reason
            accepted = sum(1 for c in ctx.job.evaluated if c.id != BASELINE_ID)
            slots = min(ctx.settings.parallel_proposals, ctx.settings.max_candidates - accepted)
            reserved: set[str] = set()
            taken: dict[str, set[str]] = {}
            merge = self.plan_merge()
            plans = [merge] if merge is not None else []
            plans += [
                p
                for _ in range(slots - len(plans))
                if (p := self.plan(reserved, taken)) is not None
            ]
            if not plans:
                ctx.job.stop_detail = "no target has anything left to propose"
                return "completed"
            self.known = set(ctx.book.units)
            self.seen = self.examples.train_runs(self.known)
            outcomes = await asyncio.gather(*(self.propose(p) for p in plans))
            for out in outcomes:
                if out.failure is None:
                    self.register(out)
            await asyncio.gather(
                *(screen(self.ctx, o) for o in outcomes if o.cand_id and not o.failure)
            )
            for out in outcomes:
                self.apply(out)
            ctx.save(every=SAVE_EVERY_S)
            failures = [o.failure for o in outcomes if o.failure is not None]
            if any(isinstance(f, StopRequested) for f in failures):
                return "interrupted"
            if failures:
                ctx.sink.notice(failures[0].message)
                ctx.job.stop_detail = failures[0].message
                return "budget_exhausted"

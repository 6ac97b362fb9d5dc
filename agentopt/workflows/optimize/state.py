"""The state one optimization job carries through its phases (baseline, search, test)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.contracts.optimize_job import JobRecord
from agentopt.contracts.optimize_journal import ProposalEntry
from agentopt.contracts.task_record import UnitResult
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call import CallLayer
from agentopt.reports.optimize_html import render_optimize_html
from agentopt.workflows.optimize.evaluation import EvalContext, UnitBook
from agentopt.workflows.optimize.events import OptimizeSink
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.optimize.options import OptimizeSettings
from agentopt.workflows.optimize.ranking import Ranking, rank_candidates
from agentopt.workflows.optimize.splits import Splits

USAGE_KEYS = ("calls", "cache_hits", "input_tokens", "output_tokens", "cost_usd")


@dataclass
class JobContext:
    """Everything the loop reads and updates."""

    job: JobRecord
    store: JobStore
    splits: Splits
    settings: OptimizeSettings
    layer: CallLayer
    eval: EvalContext
    sink: OptimizeSink
    optimization_model: str | None
    definitions: dict[str, AgentDefinition] = field(default_factory=dict)
    usage_before: dict[str, dict[str, float]] = field(default_factory=dict)
    replay: dict[int, ProposalEntry] = field(default_factory=dict)
    """The proposals an earlier session of the job journaled (--resume), by number."""
    saved_at: float = 0.0
    folders: list[asyncio.Future[Path]] = field(default_factory=list)
    """Candidate folders being written off the loop (`write_folder`)."""

    @property
    def book(self) -> UnitBook:
        return self.eval.book

    def book_units(self, cand_id: str, names: Sequence[str]) -> dict[str, UnitResult]:
        return {n: u for n in names if (u := self.book.get(cand_id, n)) is not None}

    def rerank(self) -> Ranking:
        ranking = rank_candidates(self.job.candidates, self.settings.seed)
        self.job.best = ranking.best
        self.job.outcome = ranking.outcome
        return ranking

    def best_score(self) -> tuple[str, float] | None:
        """The best candidate and its validation score now: what a candidate whose
        validation is running must be able to reach (`evaluation.Race`)."""
        best = self.job.candidate(self.job.best) if self.job.best else None
        if best is None or best.validation is None or best.validation.score is None:
            return None
        return best.id, best.validation.score

    def usage(self) -> dict[str, dict[str, float]]:
        """Per pool, this session plus the earlier ones of the job."""
        pools = self.layer.stats().pools
        out: dict[str, dict[str, float]] = {}
        for pool in ("agent", "judge", "optimizer", "simulator"):
            now: dict[str, Any] = pools[pool].model_dump() if pool in pools else {}
            before = self.usage_before.get(pool, {})
            if pool == "simulator" and not (before or now.get("calls") or now.get("cache_hits")):
                continue  # listed once simulated users ran (older job.json files stay as they were)
            out[pool] = {k: float(now.get(k, 0)) + float(before.get(k, 0)) for k in USAGE_KEYS}
        return out

    def write_folder(self, cand_id: str, definition: AgentDefinition) -> None:
        """Start writing a candidate's folder (what `apply` copies) on a worker thread. Only
        the job's end waits for it (`folders_written`): a screening that waited for its
        folder finished first in 8 of 10 screenings of a bench run and waited up to 24 ms. A
        resumed job writes again any folder a crash left unwritten."""
        write = self.store.candidate_writer(cand_id, definition)
        self.folders.append(asyncio.ensure_future(asyncio.to_thread(write)))

    async def folders_written(self, *, raise_error: bool = True) -> None:
        """Wait for every folder started so far; the first write's error is raised (unless
        the job is already ending with another)."""
        pending, self.folders = self.folders, []
        for result in await asyncio.gather(*pending, return_exceptions=True):
            if raise_error and isinstance(result, BaseException):
                raise result

    def count_calls(self, phase: str, since: int) -> None:
        """Add the agent + judge calls made since `since` (a `budget.used()` value) to a phase."""
        made = self.eval.budget.used() - since
        self.job.phase_calls[phase] = self.job.phase_calls.get(phase, 0) + made

    def instructions(self) -> dict[str, str]:
        return {k: d.instructions or "" for k, d in self.definitions.items()}

    def save(self, *, every: float = 0.0) -> None:
        """Rewrite job.json and report.html (atomic, by the store's writer thread: `store.flush`
        waits for them), so `optimize status` and `agentopt view` show a running job's
        progress. `every`: skip when the last save is more recent than this many seconds (the
        search saves after each round; the journal, not job.json, is what `--resume` replays,
        so a skipped save loses nothing)."""
        now = time.monotonic()
        if every and now - self.saved_at < every:
            return
        self.saved_at = now
        self.job.usage = self.usage()
        self.store.save_files(self.job, render_optimize_html(self.job, self.instructions()))

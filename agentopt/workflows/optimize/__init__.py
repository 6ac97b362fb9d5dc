"""`agentopt optimize` as a library (optimizer.md).

    prepared = prepare_optimize(OptimizeOptions(...), project_dir, ask=None)   # exit-2 errors
    outcome = run_optimize(prepared, NullOptimizeSink())                       # the job
    outcome.job.outcome, outcome.job.best, outcome.report_path

`apply_candidate`, `show_candidate`, `job_status` and `job_records` back the subcommands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.workflows.optimize.apply import (
        ApplyResult,
        CandidateView,
        apply_candidate,
        find_project,
        job_records,
        job_status,
        show_candidate,
    )
    from agentopt.workflows.optimize.events import NullOptimizeSink, OptimizeSink
    from agentopt.workflows.optimize.job import OptimizeOutcome, run_optimize
    from agentopt.workflows.optimize.journal import JobStore, list_job_ids, resolve_job
    from agentopt.workflows.optimize.options import (
        TARGETS,
        OptimizeOptions,
        OptimizeSettings,
        split_list,
    )
    from agentopt.workflows.optimize.prepare import PreparedJob, prepare_optimize
    from agentopt.workflows.optimize.ranking import rank_candidates, sample_parent, task_wins
    from agentopt.workflows.optimize.splits import Splits, make_splits

_HOMES = {
    "ApplyResult": "agentopt.workflows.optimize.apply",
    "CandidateView": "agentopt.workflows.optimize.apply",
    "apply_candidate": "agentopt.workflows.optimize.apply",
    "find_project": "agentopt.workflows.optimize.apply",
    "job_records": "agentopt.workflows.optimize.apply",
    "job_status": "agentopt.workflows.optimize.apply",
    "show_candidate": "agentopt.workflows.optimize.apply",
    "NullOptimizeSink": "agentopt.workflows.optimize.events",
    "OptimizeSink": "agentopt.workflows.optimize.events",
    "OptimizeOutcome": "agentopt.workflows.optimize.job",
    "run_optimize": "agentopt.workflows.optimize.job",
    "JobStore": "agentopt.workflows.optimize.journal",
    "list_job_ids": "agentopt.workflows.optimize.journal",
    "resolve_job": "agentopt.workflows.optimize.journal",
    "TARGETS": "agentopt.workflows.optimize.options",
    "OptimizeOptions": "agentopt.workflows.optimize.options",
    "OptimizeSettings": "agentopt.workflows.optimize.options",
    "split_list": "agentopt.workflows.optimize.options",
    "PreparedJob": "agentopt.workflows.optimize.prepare",
    "prepare_optimize": "agentopt.workflows.optimize.prepare",
    "rank_candidates": "agentopt.workflows.optimize.ranking",
    "sample_parent": "agentopt.workflows.optimize.ranking",
    "task_wins": "agentopt.workflows.optimize.ranking",
    "Splits": "agentopt.workflows.optimize.splits",
    "make_splits": "agentopt.workflows.optimize.splits",
}

__all__ = [
    "TARGETS",
    "ApplyResult",
    "CandidateView",
    "JobStore",
    "NullOptimizeSink",
    "OptimizeOptions",
    "OptimizeOutcome",
    "OptimizeSettings",
    "OptimizeSink",
    "PreparedJob",
    "Splits",
    "apply_candidate",
    "find_project",
    "job_records",
    "job_status",
    "list_job_ids",
    "make_splits",
    "prepare_optimize",
    "rank_candidates",
    "resolve_job",
    "run_optimize",
    "sample_parent",
    "show_candidate",
    "split_list",
    "task_wins",
]

__getattr__ = lazy_exports(__name__, _HOMES)

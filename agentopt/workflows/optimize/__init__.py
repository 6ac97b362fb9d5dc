"""`agentopt optimize` as a library (optimizer.md).

    prepared = prepare_optimize(OptimizeOptions(...), project_dir, ask=None)   # exit-2 errors
    outcome = run_optimize(prepared, NullOptimizeSink())                       # the job
    outcome.job.outcome, outcome.job.best, outcome.report_path

`apply_candidate`, `show_candidate`, `job_status` and `job_records` back the subcommands.
"""

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

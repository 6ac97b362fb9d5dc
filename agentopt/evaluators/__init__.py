"""agentopt.evaluators — the evaluator catalogue, LLM judges, rubric scoring and aggregation.

Typical use by the run workflow, per task and repeat: `select_evaluators(task, configured=...,
dataset=...)` gives the evaluators of each turn; `EvaluatorCache.get(use)` builds each once;
`samples_from_run(task, transcript)` gives each turn's `EvalSample`; `evaluate_sample(evaluators,
sample)` returns the results; `score_transcript(...)` makes the `TaskScore`; a `RunTally` counts
each unit as it finishes and its `stats()` (or `summarize_run(task_scores, ...)`) gives the
`RunStats`, whose `summary(usage)` is results.json's.
"""

from agentopt.contracts.eval_result import EvalCost, EvalError, EvalResult
from agentopt.contracts.scores import TaskScore, TaskStatus, TurnScore
from agentopt.evaluators.aggregate import score_task, score_transcript, score_turn
from agentopt.evaluators.base import (
    BuildContext,
    EvalSample,
    Evaluator,
    EvaluatorBase,
    EvaluatorUse,
    HistoryTurn,
)
from agentopt.evaluators.build import EvaluatorCache, build_evaluator
from agentopt.evaluators.registry import (
    EvaluatorInfo,
    canonical_name,
    evaluator,
    load_plugins,
    lookup,
    m365_score_key,
    registered,
    valid_names,
)
from agentopt.evaluators.run_stats import RepeatStats, RunStats, RunTally, summarize_run
from agentopt.evaluators.samples import evaluate_sample, samples_from_run
from agentopt.evaluators.selection import select_evaluators
from agentopt.evaluators.stats import (
    ConfidenceInterval,
    PairedDelta,
    bootstrap_ci,
    paired_bootstrap_ci,
)

__all__ = [
    "BuildContext",
    "ConfidenceInterval",
    "EvalCost",
    "EvalError",
    "EvalResult",
    "EvalSample",
    "Evaluator",
    "EvaluatorBase",
    "EvaluatorCache",
    "EvaluatorInfo",
    "EvaluatorUse",
    "HistoryTurn",
    "PairedDelta",
    "RepeatStats",
    "RunStats",
    "RunTally",
    "TaskScore",
    "TaskStatus",
    "TurnScore",
    "bootstrap_ci",
    "build_evaluator",
    "canonical_name",
    "evaluate_sample",
    "evaluator",
    "load_plugins",
    "lookup",
    "m365_score_key",
    "paired_bootstrap_ci",
    "registered",
    "samples_from_run",
    "score_task",
    "score_transcript",
    "score_turn",
    "select_evaluators",
    "summarize_run",
    "valid_names",
]

"""agentopt.evaluators — the evaluator catalogue, LLM judges, rubric scoring and aggregation.

Typical use by the run workflow, per task and repeat: `select_evaluators(task, configured=...,
dataset=...)` gives the evaluators of each turn; `EvaluatorCache.get(use)` builds each once;
`samples_from_run(task, transcript)` gives each turn's `EvalSample`; `evaluate_sample(evaluators,
sample)` returns the results; `score_transcript(...)` makes the `TaskScore`; a `RunTally` counts
each unit as it finishes and its `stats()` (or `summarize_run(task_scores, ...)`) gives the
`RunStats`, whose `summary(usage)` is results.json's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.contracts import (
        EvalCost,
        EvalError,
        EvalResult,
        TaskScore,
        TaskStatus,
        TurnScore,
    )
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
    from agentopt.evaluators.options import EvaluatorOptions, JudgeOptions
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

_HOMES = {
    # The records: from the contracts package, which alone says where each lives.
    "EvalCost": "agentopt.contracts",
    "EvalError": "agentopt.contracts",
    "EvalResult": "agentopt.contracts",
    "TaskScore": "agentopt.contracts",
    "TaskStatus": "agentopt.contracts",
    "TurnScore": "agentopt.contracts",
    "score_task": "agentopt.evaluators.aggregate",
    "score_transcript": "agentopt.evaluators.aggregate",
    "score_turn": "agentopt.evaluators.aggregate",
    "BuildContext": "agentopt.evaluators.base",
    "EvalSample": "agentopt.evaluators.base",
    "Evaluator": "agentopt.evaluators.base",
    "EvaluatorBase": "agentopt.evaluators.base",
    "EvaluatorUse": "agentopt.evaluators.base",
    "HistoryTurn": "agentopt.evaluators.base",
    "EvaluatorCache": "agentopt.evaluators.build",
    "build_evaluator": "agentopt.evaluators.build",
    "EvaluatorOptions": "agentopt.evaluators.options",
    "JudgeOptions": "agentopt.evaluators.options",
    "EvaluatorInfo": "agentopt.evaluators.registry",
    "canonical_name": "agentopt.evaluators.registry",
    "evaluator": "agentopt.evaluators.registry",
    "load_plugins": "agentopt.evaluators.registry",
    "lookup": "agentopt.evaluators.registry",
    "m365_score_key": "agentopt.evaluators.registry",
    "registered": "agentopt.evaluators.registry",
    "valid_names": "agentopt.evaluators.registry",
    "RepeatStats": "agentopt.evaluators.run_stats",
    "RunStats": "agentopt.evaluators.run_stats",
    "RunTally": "agentopt.evaluators.run_stats",
    "summarize_run": "agentopt.evaluators.run_stats",
    "evaluate_sample": "agentopt.evaluators.samples",
    "samples_from_run": "agentopt.evaluators.samples",
    "select_evaluators": "agentopt.evaluators.selection",
    "ConfidenceInterval": "agentopt.evaluators.stats",
    "PairedDelta": "agentopt.evaluators.stats",
    "bootstrap_ci": "agentopt.evaluators.stats",
    "paired_bootstrap_ci": "agentopt.evaluators.stats",
}

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
    "EvaluatorOptions",
    "EvaluatorUse",
    "HistoryTurn",
    "JudgeOptions",
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

__getattr__ = lazy_exports(__name__, _HOMES)

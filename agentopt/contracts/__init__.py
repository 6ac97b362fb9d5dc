"""agentopt.contracts: the typed records every layer shares and every file saves.

A task (`Task`), what the agent did with it (`Transcript`), each evaluator's verdict
(`EvalResult`), the verdict of a (task, repeat) (`TaskScore`), a run's results.json
(`RunResults`) and an optimize job's job.json (`JobRecord`). They sit below every other
package except `core`, so a record passes between layers (and processes) without the reader
importing the writer.
"""

from agentopt.contracts.eval_result import EvalCost, EvalError, EvalResult
from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord, load_job
from agentopt.contracts.run_results import (
    EvalOutcome,
    RunInfo,
    RunResults,
    RunSummary,
    TaskOutcome,
    TurnOutcome,
    iter_results,
    load_results,
    parse_results,
    redacted,
)
from agentopt.contracts.scores import TaskScore, TaskStatus, TurnScore
from agentopt.contracts.task import Criterion, Dataset, EvaluatorRef, LegacyUpgrade, Task, Turn
from agentopt.contracts.transcript import (
    Citation,
    ToolCallRecord,
    Transcript,
    TurnError,
    TurnResult,
)
from agentopt.contracts.usage import Usage

__all__ = [
    "BASELINE_ID",
    "CandidateRecord",
    "Citation",
    "Criterion",
    "Dataset",
    "EvalCost",
    "EvalError",
    "EvalOutcome",
    "EvalResult",
    "EvaluatorRef",
    "JobRecord",
    "LegacyUpgrade",
    "RunInfo",
    "RunResults",
    "RunSummary",
    "Task",
    "TaskOutcome",
    "TaskScore",
    "TaskStatus",
    "ToolCallRecord",
    "Transcript",
    "Turn",
    "TurnError",
    "TurnOutcome",
    "TurnResult",
    "TurnScore",
    "Usage",
    "iter_results",
    "load_job",
    "load_results",
    "parse_results",
    "redacted",
]

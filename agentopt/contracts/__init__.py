"""agentopt.contracts: the typed records every layer shares and every file saves.

A task (`Task`), what the agent did with it (`Transcript`), each evaluator's verdict
(`EvalResult`), the verdict and record of a (task, repeat) (`TaskScore`, `RepeatOutcome`,
together a `UnitResult`), a run's run.json and results.json (`RunRecord`, `RunResults`), its
journal (`RunJournalEntry`), and an optimize job's job.json and journal (`JobRecord`,
`UnitEntry`, `ProposalEntry`). They sit below every other package except `core`, so a record
passes between layers (and processes, as JSON) without the reader importing the writer.
Saved records keep unknown keys on a round trip; files carry a `schema_version` (`record`).
"""

from agentopt.contracts.eval_result import EvalCost, EvalError, EvalResult
from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord, load_job
from agentopt.contracts.optimize_journal import (
    OptimizeEntry,
    ProposalEntry,
    ProposedChange,
    UnitEntry,
    parse_optimize_entry,
)
from agentopt.contracts.record import SCHEMA_VERSION, Record, VersionedRecord, read_journal
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import (
    EvaluatorSummary,
    RunInfo,
    RunRecord,
    RunResults,
    RunSummary,
    UsageBucket,
    load_results,
    load_run_record,
    parse_results,
    redacted,
)
from agentopt.contracts.scores import TaskScore, TaskStatus, TurnScore
from agentopt.contracts.task import Criterion, Dataset, EvaluatorRef, LegacyUpgrade, Task, Turn
from agentopt.contracts.task_record import (
    RepeatOutcome,
    TaskOutcome,
    TokenCount,
    TurnOutcome,
    UnitResult,
    iter_results,
)
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
    "SCHEMA_VERSION",
    "CandidateRecord",
    "Citation",
    "Criterion",
    "Dataset",
    "EvalCost",
    "EvalError",
    "EvalResult",
    "EvaluatorRef",
    "EvaluatorSummary",
    "JobRecord",
    "LegacyUpgrade",
    "OptimizeEntry",
    "ProposalEntry",
    "ProposedChange",
    "Record",
    "RepeatOutcome",
    "RunInfo",
    "RunJournalEntry",
    "RunRecord",
    "RunResults",
    "RunSummary",
    "Task",
    "TaskOutcome",
    "TaskScore",
    "TaskStatus",
    "TokenCount",
    "ToolCallRecord",
    "Transcript",
    "Turn",
    "TurnError",
    "TurnOutcome",
    "TurnResult",
    "TurnScore",
    "UnitEntry",
    "UnitResult",
    "Usage",
    "UsageBucket",
    "VersionedRecord",
    "iter_results",
    "load_job",
    "load_results",
    "load_run_record",
    "parse_optimize_entry",
    "parse_results",
    "read_journal",
    "redacted",
]

"""agentopt.contracts: the typed records every layer shares and every file saves.

A task (`Task`), what the agent did with it (`Transcript`), each evaluator's verdict
(`EvalResult`), the verdict and record of a (task, repeat) (`TaskScore`, `RepeatOutcome`,
together a `UnitResult`), a run's run.json and results.json (`RunRecord`, `RunResults`), its
journal (`RunJournalEntry`), and an optimize job's job.json and journal (`JobRecord`,
`UnitEntry`, `ProposalEntry`). They sit below every other package except `core`, so a record
passes between layers (and processes, as JSON) without the reader importing the writer.
Saved records keep unknown keys on a round trip; files carry a `schema_version` (`record`).

Names are imported from their module on first use (PEP 562), so `import agentopt.contracts.task`
does not build every record class (the optimizer's among them) for `eval validate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
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

_HOMES = {
    "EvalCost": "agentopt.contracts.eval_result",
    "EvalError": "agentopt.contracts.eval_result",
    "EvalResult": "agentopt.contracts.eval_result",
    "BASELINE_ID": "agentopt.contracts.optimize_job",
    "CandidateRecord": "agentopt.contracts.optimize_job",
    "JobRecord": "agentopt.contracts.optimize_job",
    "load_job": "agentopt.contracts.optimize_job",
    "OptimizeEntry": "agentopt.contracts.optimize_journal",
    "ProposalEntry": "agentopt.contracts.optimize_journal",
    "ProposedChange": "agentopt.contracts.optimize_journal",
    "UnitEntry": "agentopt.contracts.optimize_journal",
    "parse_optimize_entry": "agentopt.contracts.optimize_journal",
    "SCHEMA_VERSION": "agentopt.contracts.record",
    "Record": "agentopt.contracts.record",
    "VersionedRecord": "agentopt.contracts.record",
    "read_journal": "agentopt.contracts.record",
    "RunJournalEntry": "agentopt.contracts.run_journal",
    "EvaluatorSummary": "agentopt.contracts.run_results",
    "RunInfo": "agentopt.contracts.run_results",
    "RunRecord": "agentopt.contracts.run_results",
    "RunResults": "agentopt.contracts.run_results",
    "RunSummary": "agentopt.contracts.run_results",
    "UsageBucket": "agentopt.contracts.run_results",
    "load_results": "agentopt.contracts.run_results",
    "load_run_record": "agentopt.contracts.run_results",
    "parse_results": "agentopt.contracts.run_results",
    "redacted": "agentopt.contracts.run_results",
    "TaskScore": "agentopt.contracts.scores",
    "TaskStatus": "agentopt.contracts.scores",
    "TurnScore": "agentopt.contracts.scores",
    "Criterion": "agentopt.contracts.task",
    "Dataset": "agentopt.contracts.task",
    "EvaluatorRef": "agentopt.contracts.task",
    "LegacyUpgrade": "agentopt.contracts.task",
    "Task": "agentopt.contracts.task",
    "Turn": "agentopt.contracts.task",
    "RepeatOutcome": "agentopt.contracts.task_record",
    "TaskOutcome": "agentopt.contracts.task_record",
    "TokenCount": "agentopt.contracts.task_record",
    "TurnOutcome": "agentopt.contracts.task_record",
    "UnitResult": "agentopt.contracts.task_record",
    "iter_results": "agentopt.contracts.task_record",
    "Citation": "agentopt.contracts.transcript",
    "ToolCallRecord": "agentopt.contracts.transcript",
    "Transcript": "agentopt.contracts.transcript",
    "TurnError": "agentopt.contracts.transcript",
    "TurnResult": "agentopt.contracts.transcript",
    "Usage": "agentopt.contracts.usage",
}

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

__getattr__ = lazy_exports(__name__, _HOMES)

"""The run's journal (`.agentopt/runs/<id>/journal.jsonl`): one line per finished (task,
repeat), holding both its verdict and its record, so a resumed run, and results.json, are
rebuilt from the journal alone. Its version is its run.json's."""

from __future__ import annotations

from agentopt.contracts.record import Record
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task_record import RepeatOutcome, UnitResult


class RunJournalEntry(Record):
    """One finished (task, repeat)."""

    task: int
    """The task's position in the run's (filtered) task list."""
    repeat: int
    score: TaskScore
    record: RepeatOutcome

    @classmethod
    def of(cls, position: int, repeat: int, unit: UnitResult) -> RunJournalEntry:
        return cls(task=position, repeat=repeat, score=unit.score, record=unit.record)

    @property
    def key(self) -> tuple[int, int]:
        return (self.task, self.repeat)

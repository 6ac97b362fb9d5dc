"""The run's journal (`.agentopt/runs/<id>/journal.jsonl`): one line per finished (task,
repeat), holding both its verdict and its record, so a resumed run, and results.json, are
rebuilt from the journal alone. Its version is its run.json's.

Beside it, `turns.jsonl` holds the answered turns of simulated conversations still in
progress, and the simulated user's reply after each (`TurnJournalEntry`), so `--resume`
continues a conversation where it stopped without asking anything twice."""

from __future__ import annotations

from agentopt.contracts.record import Record
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.simulation import UserReply
from agentopt.contracts.task_record import RepeatOutcome, UnitResult
from agentopt.contracts.transcript import TurnResult


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


class TurnJournalEntry(Record):
    """One step of a simulated conversation (task, repeat) not yet finished: an answered agent
    turn (`turn`), or the simulated user's reply after turn `number` (`reply`; after turn 0:
    the opening message). A resumed run restores these into the target and the simulated user
    instead of asking again; the unit's journal line, once written, supersedes them."""

    task: int
    """The task's position in the run's (filtered) task list."""
    repeat: int
    number: int
    """The turn (1-based) this line holds, or that the reply follows. A turn line numbered n
    drops what the unit's earlier lines said about turn n and later (a conversation played
    again from its start writes its steps anew)."""
    turn: TurnResult | None = None
    reply: UserReply | None = None

    @property
    def key(self) -> tuple[int, int]:
        return (self.task, self.repeat)

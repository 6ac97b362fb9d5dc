"""The optimize job's journal (`.agentopt/optimize/<id>/journal.jsonl`): one line per finished
unit (a candidate on a task) and per proposal, so `--resume` replays finished work from the file
without calling a model again (optimizer.md §3). Its version is its job.json's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentopt.contracts.record import Record, read_journal
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task_record import RepeatOutcome, UnitResult
from agentopt.core.files.agent_definition import AgentDefinition


class UnitEntry(Record):
    """One candidate run on one task."""

    kind: Literal["unit"] = "unit"
    candidate: str
    task: str
    """The task's name."""
    score: TaskScore
    record: RepeatOutcome

    @classmethod
    def of(cls, candidate: str, task: str, unit: UnitResult) -> UnitEntry:
        return cls(candidate=candidate, task=task, score=unit.score, record=unit.record)

    @property
    def unit(self) -> UnitResult:
        return UnitResult(score=self.score, record=self.record)


class ProposedChange(Record):
    """The child configuration a strategy proposed."""

    definition: AgentDefinition
    strategy: str
    rationale: str
    mutation: dict[str, Any] = Field(default_factory=dict)
    signature: str | None = None


class ProposalEntry(Record):
    """One proposal slot: what it was planned on and what came of it — a change, or the
    reason there was none (`exhausted`: the strategy has nothing left to try)."""

    kind: Literal["proposal"] = "proposal"
    number: int
    strategy: str
    parent: str
    minibatch: list[str] = Field(default_factory=list)
    at: str = ""
    proposal: ProposedChange | None = None
    reason: str = ""
    exhausted: bool = False
    merge_with: str | None = None
    """A merge's second parent (`strategy` "merge"; `parent` is the first)."""
    leaks: int = 0
    """Lines of a reflection reply dropped because they quoted a task, when no proposal came
    of it (a proposal counts its own in `mutation.leaks_dropped`); written only when set."""
    empty: bool = False
    """The optimization model's reply changed nothing (the same text, or only lines quoting
    a task), so a resumed job counts it as the first session did; written only when set."""

    @model_serializer(mode="wrap")
    def _one_outcome(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A line holds either the proposal or why there is none, never both (and a merge's
        second parent only on a merge)."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("reason", "exhausted") if self.proposal is not None else ("proposal",):
                data.pop(key, None)
            if self.merge_with is None:
                data.pop("merge_with", None)
            if not self.leaks:
                data.pop("leaks", None)
            if not self.empty:
                data.pop("empty", None)
        return data


OptimizeEntry = UnitEntry | ProposalEntry


def parse_optimize_entry(data: Any) -> OptimizeEntry | None:
    """A journal line as its record; None for a kind this version does not know."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == "unit":
        return UnitEntry.model_validate(data)
    if kind == "proposal":
        return ProposalEntry.model_validate(data)
    return None


def proposed_definitions(journal: Path) -> dict[int, AgentDefinition]:
    """Proposal number → the configuration it produced, as the journal keeps them. A
    candidate screened out never had a folder of its own written (`JobStore.candidate_folder`):
    this is where its configuration lives."""
    found: dict[int, AgentDefinition] = {}
    for entry in read_journal(journal, _proposal_only):
        if entry is not None and entry.proposal is not None:
            found[entry.number] = entry.proposal.definition
    return found


def _proposal_only(data: Any) -> ProposalEntry | None:
    """A proposal line as its record; a unit line (most of a journal) is not validated."""
    if isinstance(data, dict) and data.get("kind") == "proposal":
        return ProposalEntry.model_validate(data)
    return None

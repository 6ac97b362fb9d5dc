"""On-disk state of one `eval run`: `.agentopt/runs/<run-id>/{run.json, journal.jsonl,
results.json}` (files.md §7), and `turns.jsonl` while simulated conversations are in progress.

The journal gets one fsync'd line per finished (task, repeat), so a crash or Ctrl-C loses at
most the calls in flight — and those are in the model-call cache, so `--resume` repeats no paid
call. results.json is written at the end by streaming the journal, never by holding every
transcript in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.record import read_journal
from agentopt.contracts.run_journal import RunJournalEntry, TurnJournalEntry
from agentopt.contracts.run_results import RunRecord, load_run_record
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.simulation import UserReply
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core.atomic import write_json_atomic
from agentopt.core.errors import ConfigError
from agentopt.core.ids import ID_RE, new_id
from agentopt.core.journal import append_entry, read_numbered
from agentopt.core.paths import inside_project, runs_dir


@dataclass
class Played:
    """A simulated conversation's answered turns, and the simulated user's reply after each
    (after turn 0: the opening message)."""

    turns: list[TurnResult] = field(default_factory=list)
    replies: dict[int, UserReply] = field(default_factory=dict)


class RunStore:
    """Files of one run."""

    def __init__(self, project: Path, run_id: str | None = None) -> None:
        self.run_id = run_id or new_id()
        self.dir = inside_project(project, runs_dir(project) / self.run_id, "the run folder")
        self.dir.mkdir(parents=True, exist_ok=True)

    @classmethod
    def open_existing(cls, project: Path, run_id: str) -> RunStore:
        """For --resume: the run must exist."""
        folder = runs_dir(project) / run_id
        if not (folder / "run.json").exists():
            known = ", ".join(list_run_ids(project)[-5:]) or "none"
            raise ConfigError(
                f"no run '{run_id}' in {runs_dir(project)}",
                hint=f"--resume takes a run id from `agentopt eval list` (recent: {known})",
            )
        return cls(project, run_id)

    @property
    def run_json(self) -> Path:
        return self.dir / "run.json"

    @property
    def journal(self) -> Path:
        return self.dir / "journal.jsonl"

    @property
    def results_json(self) -> Path:
        return self.dir / "results.json"

    def write_run(self, run: RunRecord) -> None:
        write_json_atomic(self.run_json, run.model_dump(mode="json"))

    def read_run(self) -> RunRecord:
        return load_run_record(self.run_json)

    @property
    def answers(self) -> Path:
        return self.dir / "answers.jsonl"

    def append(self, entry: RunJournalEntry) -> None:
        """One finished (task, repeat), fsync'd."""
        append_entry(self.journal, entry.model_dump(mode="json"))

    @property
    def turns_journal(self) -> Path:
        return self.dir / "turns.jsonl"

    def append_turn(self, entry: TurnJournalEntry) -> None:
        """One step of a simulated conversation in progress, fsync'd."""
        append_entry(self.turns_journal, entry.model_dump(mode="json"))

    def played(self) -> dict[tuple[int, int], Played]:
        """(task position, repeat) → what its simulated conversation got to (what `--resume`
        restores). A turn line numbered n replaces what the unit had from turn n on: a
        conversation played again from its start wrote its steps anew."""
        played: dict[tuple[int, int], Played] = {}
        for entry in read_journal(self.turns_journal, TurnJournalEntry.model_validate):
            unit = played.setdefault(entry.key, Played())
            if entry.turn is not None:
                del unit.turns[entry.number - 1 :]
                unit.replies = {n: r for n, r in unit.replies.items() if n < entry.number}
                if len(unit.turns) == entry.number - 1:
                    unit.turns.append(entry.turn)
            elif entry.reply is not None and entry.number == len(unit.turns):
                unit.replies[entry.number] = entry.reply
        return played

    def entries(self) -> Iterator[RunJournalEntry]:
        """Journal entries in order; a torn last line (crash mid-write) is ignored."""
        return read_journal(self.journal, RunJournalEntry.model_validate)

    def done_keys(self) -> set[tuple[int, int]]:
        """(task position, repeat) pairs finished for good: no agent error and no evaluator
        error. Everything else is done again on --resume (see `reusable_transcripts`)."""
        latest = {e.key: e for e in self.entries()}  # a unit redone on --resume: last wins
        return {key for key, e in latest.items() if not _errored(e.score)}

    def reusable_transcripts(self) -> dict[tuple[int, int], Transcript]:
        """Units whose agent answered but an evaluator failed (a judge behind a 429 storm):
        on --resume only their evaluators run again, on the journaled answers."""
        latest = {e.key: e for e in self.entries()}
        redo = {k for k, e in latest.items() if _errored(e.score) and not e.score.agent_failed}
        out: dict[tuple[int, int], Transcript] = {}
        for _, entry in read_numbered(self.answers):
            try:
                key = (int(entry["task"]), int(entry["repeat"]))
                if key in redo:
                    out[key] = Transcript.model_validate(entry["transcript"])
            except (KeyError, TypeError, ValueError):
                continue  # a line another version wrote: that unit runs again in full
        return out

    def append_answer(self, position: int, repeat: int, transcript: Transcript) -> None:
        """The agent's answers of one unit, kept beside the journal (`answers.jsonl`) so that
        --resume can re-score them. Not fsync'd: a lost line only means the unit is played
        again."""
        line = {
            "task": position,
            "repeat": repeat,
            "transcript": transcript.model_dump(mode="json"),
        }
        with open(self.answers, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def _errored(score: TaskScore) -> bool:
    """An agent or evaluator error (what --max-errors counts), or a unit marked error."""
    return score.status == "error" or bool(score.errors())


def list_run_ids(project: Path) -> list[str]:
    """Run ids in time order."""
    folder = runs_dir(project)
    if not folder.is_dir():
        return []
    runs = [p for p in folder.iterdir() if ID_RE.match(p.name) and p.is_dir()]
    # Ids sort by second; two runs in the same second are ordered by when they were created.
    return [p.name for p in sorted(runs, key=lambda p: (p.name[:15], p.stat().st_ctime_ns))]


def resolve_run_ref(project: Path, ref: str | None) -> Path:
    """A run id, 'latest'/None, or a path to a results.json → the results.json path."""
    if ref and (ref.endswith(".json") or "/" in ref or "\\" in ref):
        path = Path(ref)
        if not path.is_absolute():
            path = Path(project) / path
        if not path.exists():
            raise ConfigError(f"results file not found: {ref}")
        return path
    ids = list_run_ids(project)
    if not ids:
        raise ConfigError("no runs yet in .agentopt/runs", hint="run `agentopt eval run` first")
    run_id = ids[-1] if ref in (None, "latest") else ref
    path = runs_dir(project) / str(run_id) / "results.json"
    if not path.exists():
        if (runs_dir(project) / str(run_id)).is_dir():
            raise ConfigError(
                f"run {run_id} has no results.json (interrupted?)",
                hint=f"finish it with `agentopt eval run --resume {run_id}`",
            )
        raise ConfigError(f"no run '{run_id}'", hint=f"recent runs: {', '.join(ids[-5:])}")
    return path

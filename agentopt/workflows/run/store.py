"""On-disk state of one `eval run`: `.agentopt/runs/<run-id>/{run.json, journal.jsonl,
results.json}` (files.md §7), and `turns.jsonl` while simulated conversations are in progress.

Every line is masked as it is written (`core.redaction`): a secret in a task, an answer or an
error never reaches the journal, answers.jsonl or the results.json written from the journal.

The journal gets one line per finished (task, repeat), written with the others that finished
meanwhile by one writer thread (one write and one fsync per batch, `core.batch_writer`), so a
crash loses at most the units finished in the last few milliseconds, which `--resume` plays
again like the calls that were in flight (Ctrl-C loses nothing: the run flushes on the way
out). The store keeps what the journal holds as it
goes: each unit's line offset and its verdict counted in a `RunTally`, from one scan of an
existing journal (`--resume`) plus every append, so the end of the run reads the journal only to
write results.json, streaming, never holding every transcript in memory.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

from pydantic import ConfigDict

from agentopt.contracts.record import Record, parse_record, read_journal
from agentopt.contracts.run_journal import RunJournalEntry, TurnJournalEntry
from agentopt.contracts.run_results import RunRecord, load_run_record
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.simulation import UserReply
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core import heap
from agentopt.core.atomic import append_lines_fsync, write_json_atomic
from agentopt.core.batch_writer import LINGER_S, BatchWriter
from agentopt.core.errors import ConfigError
from agentopt.core.files import bounded
from agentopt.core.ids import ID_RE, new_id
from agentopt.core.journal import append_entry, read_numbered
from agentopt.core.paths import inside_project, runs_dir
from agentopt.core.redaction import current as current_redactor
from agentopt.core.redaction import model_line, redact_data, redact_json
from agentopt.evaluators.run_stats import RunTally
from agentopt.workflows.run.unit_usage import RecordUsage, UnitUsage, record_usage

UnitKey = tuple[int, int]
"""(task position, repeat)."""


class _Verdict(Record):
    """The part of a journal line the store reads: the verdict, and of the record only what
    its requests and tokens are counted from (the record is read whole when results are;
    here the rest of it is skipped by the parser, not built: 8 µs a replayed line, not 11)."""

    model_config = ConfigDict(extra="ignore")

    task: int
    repeat: int
    score: TaskScore
    record: RecordUsage | None = None

    def usage(self) -> UnitUsage:
        return self.record.usage() if self.record is not None else (0, 0, 0)


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
        self._writer: BatchWriter[bytes] | None = None
        self._end: int | None = None
        self._units: _Units | None = None
        """Per unit journaled: where its line starts and what --resume and the usage read."""
        self._tally = RunTally()
        self._answers: BatchWriter[bytes] | None = None
        self._added = 0

    @classmethod
    def open_existing(cls, project: Path, run_id: str) -> RunStore:
        """For --resume: the run must exist."""
        folder = runs_dir(project) / run_id
        if os.path.lexists(folder / "run.json"):
            bounded.check_regular(folder / "run.json")  # a broken file is named, not "no run"
        elif folder.is_dir():
            raise ConfigError.at(
                str(folder / "run.json"),
                "",
                f"run '{run_id}' has no run.json (its folder exists): it cannot be resumed",
            )
        else:
            known = ", ".join(list_run_ids(project)[-5:]) or "none"
            raise ConfigError(
                f"no run '{run_id}' in {runs_dir(project)}",
                hint=f"--resume takes a run id from `agentopt eval list` (recent: {known})",
            )
        store = cls(project, run_id)
        store.read_run()  # a broken run.json is an error naming it and the key, now
        return store

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

    def append(self, entry: RunJournalEntry) -> tuple[str, int]:
        """One finished (task, repeat): counted now, written by the writer thread. Returns
        the line as written (masked) and where in the journal it starts (what a replay of
        the unit reads back)."""
        text = model_line(entry)  # the write boundary: once
        return text, self._add(entry.key, entry.score, record_usage(entry.record), text)

    def append_lines(self, lines: list[str]) -> None:
        """Units replayed from an earlier run's lines (`unit_replay`: lines this code wrote,
        masked, then renumbered): each masked again for the secrets known now (one may be
        new: a look for each value, a walk only when one is there), parsed once for its
        verdict, then written."""
        redactor = current_redactor()
        for text in lines:
            if not redactor.masked_json_clean(text):
                _, text = redact_json(json.loads(text))
            verdict = _Verdict.model_validate_json(text)
            self._add((verdict.task, verdict.repeat), verdict.score, verdict.usage(), text)

    def _add(self, key: UnitKey, score: TaskScore, usage: UnitUsage, text: str) -> int:
        self._scan()
        assert self._units is not None
        line = (text + "\n").encode()
        if self._end is None:
            self._end = self._journal_end()
        at = self._end
        self._units.put(key, at, score, usage)
        self._end += len(line)
        self._tally.add(key, score)
        self._added += 1
        if self._added % heap.TRIM_EVERY == 0:
            heap.trim()  # the holes the growing tally and index leave (core/heap.py)
        if self._writer is None:
            self._writer = BatchWriter(
                self._write_lines, name=f"agentopt-journal-{self.run_id}", linger=LINGER_S
            )
        self._writer.submit(line)
        return at

    def flush(self) -> None:
        """Block until every appended line is in its file (the journal's fsync'd)."""
        for writer in (self._writer, self._answers):
            if writer is not None:
                writer.flush()

    def close(self) -> None:
        """Flush and stop the writer threads (the store can append again afterwards)."""
        writers, self._writer, self._answers = (self._writer, self._answers), None, None
        for writer in writers:
            if writer is not None:
                writer.close()

    @property
    def turns_journal(self) -> Path:
        return self.dir / "turns.jsonl"

    def append_turn(self, entry: TurnJournalEntry) -> None:
        """One step of a simulated conversation in progress, fsync'd."""
        append_entry(self.turns_journal, redact_data(entry.model_dump(mode="json")))

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
        self.flush()
        return read_journal(self.journal, RunJournalEntry.model_validate)

    def done_keys(self) -> set[UnitKey]:
        """(task position, repeat) pairs finished for good: no agent error and no evaluator
        error. Everything else is done again on --resume (see `reusable_transcripts`)."""
        self._scan()
        assert self._units is not None
        return {key for key, _, errored, _ in self._units.items() if not errored}

    def reusable_transcripts(self) -> dict[UnitKey, Transcript]:
        """Units whose agent answered but an evaluator failed (a judge behind a 429 storm):
        on --resume only their evaluators run again, on the journaled answers."""
        self._scan()
        assert self._units is not None
        redo = {k for k, _, errored, agent in self._units.items() if errored and not agent}
        out: dict[UnitKey, Transcript] = {}
        if not redo:
            return out
        self.flush()
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
            "transcript": redact_data(transcript.model_dump(mode="json")),
        }
        if self._answers is None:
            self._answers = BatchWriter(
                self._write_answers, name=f"agentopt-answers-{self.run_id}", linger=LINGER_S
            )
        self._answers.submit((json.dumps(line, ensure_ascii=False) + "\n").encode())

    def offsets(self) -> Iterator[tuple[UnitKey, int]]:
        """Where each unit's latest journal line starts (all written once this returns)."""
        self._scan()
        self.flush()
        assert self._units is not None
        return ((key, offset) for key, offset, _, _ in self._units.items())

    def repeat_offsets(self, position: int) -> list[tuple[int, int]]:
        """(repeat, where its latest journal line starts) of the task at `position`, by
        repeat (call `flush` first to read the lines)."""
        self._scan()
        assert self._units is not None
        return self._units.of_position(position)

    def agent_usage(self) -> dict[str, int]:
        """Requests and tokens of an agent that runs outside agentopt (hosted, endpoint,
        command, foundry), as its answers reported them over every session of the run: the
        call layer never sees its model calls, so without this the usage table said 0 agent
        calls for a run of a hundred turns."""
        self._scan()
        assert self._units is not None
        return self._units.usage()

    @property
    def tally(self) -> RunTally:
        """Every unit the journal holds, counted (the latest line of a unit run twice)."""
        self._scan()
        return self._tally

    # -- internals ---------------------------------------------------------------------------
    def _scan(self) -> None:
        """Read an existing journal once: offsets, verdicts and the tally."""
        if self._units is not None:
            return
        self._units = units = _Units()
        if not os.path.lexists(self.journal):
            return
        with bounded.open_regular(self.journal) as fh:
            for number in count(1):
                at = fh.tell()
                line = fh.readline()
                if not line:
                    break
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # a torn last line after a crash
                source = f"{self.journal}:line {number}"
                verdict = parse_record(_Verdict, data, source=source)
                key = (verdict.task, verdict.repeat)
                # A unit run again on --resume (it had failed) is journaled twice: last wins.
                units.put(key, at, verdict.score, verdict.usage())
                self._tally.add(key, verdict.score)

    def _journal_end(self) -> int:
        """The size of the journal, after ending a torn last line so the next one starts
        clean (a crash mid-write leaves a fragment without its newline)."""
        if not self.journal.exists():
            return 0
        with open(self.journal, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")
                    size += 1
        return size

    def _write_lines(self, lines: Sequence[bytes]) -> None:
        """The writer thread: every line queued so far, one write, one fsync."""
        append_lines_fsync(self.journal, lines)

    def _write_answers(self, lines: Sequence[bytes]) -> None:
        append_lines_fsync(self.answers, lines, fsync=False)  # whole lines, not fsync'd


class _Units:
    """The journaled units, in ~10 bytes each (a run of 100,000 units keeps them all; a
    record object and a dict entry each took ~210 bytes): per repeat, arrays by task position
    of where the unit's latest line starts (-1: not journaled) and of what --resume decides
    from (an error; the agent's), and the requests and tokens its answers reported (arrays
    made at the first unit that reported any)."""

    ERRORED, AGENT_FAILED = 1, 2

    def __init__(self) -> None:
        self._offsets: dict[int, array[int]] = {}
        self._flags: dict[int, bytearray] = {}
        self._usage: dict[int, array[int]] = {}
        """Per repeat: requests, input tokens, output tokens, three per position."""

    def put(self, key: UnitKey, offset: int, score: TaskScore, counts: UnitUsage) -> None:
        pos, repeat = key
        offsets = self._offsets.get(repeat)
        if offsets is None:
            offsets = self._offsets[repeat] = array("q")
            self._flags[repeat] = bytearray()
        flags = self._flags[repeat]
        if pos >= len(offsets):
            grow = pos + 1 - len(offsets)
            offsets.extend(array("q", [-1]) * grow)
            flags.extend(bytes(grow))
        offsets[pos] = offset
        flags[pos] = (self.ERRORED if _errored(score) else 0) | (
            self.AGENT_FAILED if score.agent_failed else 0
        )
        usage = self._usage.get(repeat)
        if usage is None and any(counts):
            usage = self._usage[repeat] = array("i")
        if usage is not None:
            if 3 * pos + 3 > len(usage):
                usage.frombytes(bytes(4 * (3 * pos + 3 - len(usage))))  # zeros
            usage[3 * pos : 3 * pos + 3] = array("i", counts)

    def items(self) -> Iterator[tuple[UnitKey, int, bool, bool]]:
        """(key, offset, errored, agent failed) of every journaled unit."""
        for repeat, offsets in self._offsets.items():
            flags = self._flags[repeat]
            for pos, offset in enumerate(offsets):
                if offset >= 0:
                    bits = flags[pos]
                    yield (pos, repeat), offset, bool(bits & 1), bool(bits & 2)

    def of_position(self, pos: int) -> list[tuple[int, int]]:
        found = [
            (repeat, offsets[pos])
            for repeat, offsets in self._offsets.items()
            if pos < len(offsets) and offsets[pos] >= 0
        ]
        return sorted(found)

    def usage(self) -> dict[str, int]:
        totals = [0, 0, 0]
        for usage in self._usage.values():
            for i in range(3):
                totals[i] += sum(usage[i::3])
        return {"calls": totals[0], "input_tokens": totals[1], "output_tokens": totals[2]}


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

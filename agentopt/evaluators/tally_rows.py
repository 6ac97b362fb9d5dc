"""What `RunTally` keeps of each unit, in columns: ~48 bytes a unit with one evaluator.

A run of 100,000 units keeps every unit's verdict until its summary is made. As one record
object each (a frozen dataclass, a tuple of result records, the name, the score and the
normalized value as floats, a tuple key and its dict entry) they took ~450 bytes a unit, the
largest part of the run's memory; here a unit is a row of typed arrays, its results rows of
others, and a task's name is stored once in a shared buffer. Rows are only appended: a unit
added again under the same key gets a new row (the old one is left unreferenced).

Keys are (task position, repeat), the positions dense from 0: per repeat, an array by position
gives the unit's row.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from agentopt.contracts.scores import TaskScore
from agentopt.evaluators.selection import GOAL_REACHED

STATUSES = ("pass", "fail", "partial", "error")
RESULT_STATUSES = ("pass", "fail", "error")
HAS_SCORE, JUDGED = 1, 2


@dataclass(frozen=True, slots=True)
class Result:
    """What the summary reads of one evaluator result."""

    evaluator: str
    status: str
    normalized: float | None
    error_code: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit as the summary reads it (made when the summary is, one at a time)."""

    pos: int
    name: str
    repeat: int
    status: str
    score: float | None
    results: tuple[Result, ...]
    agent_errors: tuple[str, ...]
    judged: bool
    turns_to_goal: float | None


class _Column:
    """An append-only column of ints that holds no array while every value is its default
    (a unit's repeat, a deterministic result's tokens and error: 16 bytes a unit)."""

    __slots__ = ("_default", "_size", "_typecode", "_values")

    def __init__(self, typecode: str, default: int) -> None:
        self._typecode = typecode
        self._default = default
        self._size = 0
        self._values: array[int] | None = None

    def append(self, value: int) -> None:
        if self._values is None:
            if value == self._default:
                self._size += 1
                return
            self._values = array(self._typecode, [self._default]) * self._size
        self._values.append(value)

    def __getitem__(self, i: int) -> int:
        if self._values is not None:
            return self._values[i]
        if not -self._size <= i < self._size:
            raise IndexError(i)
        return self._default


class Rows:
    """The units of a run, keyed by (task position, repeat)."""

    def __init__(self) -> None:
        self._row_of: dict[int, array[int]] = {}
        """Per repeat: by task position, the unit's row + 1 (0: none)."""
        self._name_at = array("i")
        """By task position: where its name starts in `_names` (-1: none yet)."""
        self._name_end = array("i")
        self._names = bytearray()
        # One entry per row.
        self._repeat = _Column("i", 0)
        self._status = bytearray()
        self._flags = bytearray()
        self._score = array("d")
        self._each: int | None = None
        """How many results every row has had (rows are then `_each` apart), until two differ."""
        self._first: array[int] | None = None
        """By row, where its results start, once two rows' counts differ (else row × _each)."""
        self._count: array[int] | None = None
        self._agent_errors: dict[int, tuple[str, ...]] = {}
        self._turns_to_goal: dict[int, float] = {}
        # One entry per evaluator result.
        self._r_evaluator = array("i")
        self._r_status = bytearray()
        self._r_normalized = array("d")
        self._r_has_normalized = bytearray()
        self._r_error = _Column("i", -1)
        self._r_in = _Column("i", 0)
        self._r_out = _Column("i", 0)
        self._r_cost: dict[int, float] = {}
        """By result: its cost, when it cost anything (judges; deterministic checks: 0)."""
        self._words: list[str] = []
        """Evaluator names and error codes, each once (`_word`)."""
        self._word_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return sum(sum(1 for r in rows if r) for rows in self._row_of.values())

    def row(self, key: tuple[int, int]) -> int | None:
        pos, repeat = key
        rows = self._row_of.get(repeat)
        if rows is None or pos >= len(rows) or not rows[pos]:
            return None
        return rows[pos] - 1

    def add(self, key: tuple[int, int], score: TaskScore) -> int:
        """Store `score` as the unit at `key` (replacing one stored there); its row."""
        pos, repeat = key
        if pos < 0 or repeat < 0:
            raise ValueError(f"a unit key is two non-negative integers, got {key!r}")
        row = len(self._status)
        self._repeat.append(score.repeat)
        self._status.append(STATUSES.index(score.status))
        judged = False
        first = len(self._r_status)
        goal: float | None = None
        for turn in score.turns:
            for r in turn.results:
                details = r.details if isinstance(r.details, dict) else None
                judged = judged or bool(details and details.get("judge_model"))
                if (
                    goal is None
                    and r.evaluator == GOAL_REACHED
                    and r.status == "pass"
                    and details
                    and details.get("turns_to_goal")
                ):
                    goal = float(details["turns_to_goal"])
                self._r_evaluator.append(self._word(r.evaluator))
                self._r_status.append(RESULT_STATUSES.index(r.status))
                self._r_has_normalized.append(r.normalized is not None)
                self._r_normalized.append(r.normalized if r.normalized is not None else 0.0)
                self._r_error.append(self._word(r.error.code) if r.error is not None else -1)
                self._r_in.append(r.cost.input_tokens)
                self._r_out.append(r.cost.output_tokens)
                if r.cost.cost_usd:
                    self._r_cost[len(self._r_status) - 1] = r.cost.cost_usd
        self._add_span(row, first, len(self._r_status) - first)
        self._flags.append(
            (HAS_SCORE if score.score is not None else 0) | (JUDGED if judged else 0)
        )
        self._score.append(score.score if score.score is not None else 0.0)
        errors = tuple(sys.intern(t.error.code) for t in score.turns if t.error is not None)
        if errors:
            self._agent_errors[row] = errors
        if goal is not None:
            self._turns_to_goal[row] = goal
        self._set_name(pos, score.name)
        rows = self._row_of.get(repeat)
        if rows is None:
            rows = self._row_of[repeat] = array("i")
        if pos >= len(rows):
            rows.frombytes(bytes(4 * (pos + 1 - len(rows))))
        rows[pos] = row + 1
        return row

    def status(self, row: int) -> str:
        return STATUSES[self._status[row]]

    def score(self, row: int) -> float | None:
        return self._score[row] if self._flags[row] & HAS_SCORE else None

    def judged(self, row: int) -> bool:
        return bool(self._flags[row] & JUDGED)

    def agent_errors(self, row: int) -> tuple[str, ...]:
        return self._agent_errors.get(row, ())

    def result_statuses(self, row: int) -> Iterator[str]:
        first, count = self._span(row)
        for i in range(first, first + count):
            yield RESULT_STATUSES[self._r_status[i]]

    def keys_in_order(self) -> Iterator[tuple[int, int, int]]:
        """(position, repeat key, row) of every unit, by position then repeat key."""
        repeats = sorted(self._row_of)
        top = max((len(self._row_of[r]) for r in repeats), default=0)
        for pos in range(top):
            for repeat in repeats:
                rows = self._row_of[repeat]
                if pos < len(rows) and rows[pos]:
                    yield pos, repeat, rows[pos] - 1

    def name(self, pos: int) -> str:
        return self._names[self._name_at[pos] : self._name_end[pos]].decode(
            "utf-8", "surrogatepass"
        )

    def unit(self, pos: int, row: int) -> Unit:
        first, count = self._span(row)
        results = tuple(self._result(i) for i in range(first, first + count))
        return Unit(
            pos,
            self.name(pos),
            self._repeat[row],
            self.status(row),
            self.score(row),
            results,
            self.agent_errors(row),
            self.judged(row),
            self._turns_to_goal.get(row),
        )

    def _result(self, i: int) -> Result:
        error = self._r_error[i]
        return Result(
            self._words[self._r_evaluator[i]],
            RESULT_STATUSES[self._r_status[i]],
            self._r_normalized[i] if self._r_has_normalized[i] else None,
            self._words[error] if error >= 0 else None,
            self._r_in[i],
            self._r_out[i],
            self._r_cost.get(i, 0.0),
        )

    def _add_span(self, row: int, first: int, count: int) -> None:
        """Keep where a row's results are: nothing while every row has as many (8 bytes a
        unit of a run whose tasks are alike), two arrays from the first row that differs."""
        if self._first is None or self._count is None:
            if self._each is None:
                self._each = count
            if count == self._each:
                return
            self._first = array("i", [r * self._each for r in range(row)])
            self._count = array("I", [self._each]) * row
        self._first.append(first)
        self._count.append(count)

    def _span(self, row: int) -> tuple[int, int]:
        """(first result, count) of a row."""
        if self._first is None or self._count is None:
            each = self._each or 0
            return row * each, each
        return self._first[row], self._count[row]

    def _word(self, text: str) -> int:
        found = self._word_ids.get(text)
        if found is None:
            found = self._word_ids[text] = len(self._words)
            self._words.append(text)
        return found

    def _set_name(self, pos: int, name: str) -> None:
        if pos >= len(self._name_at):
            grow = pos + 1 - len(self._name_at)
            self._name_at.extend(array("i", [-1]) * grow)
            self._name_end.extend(array("i", [-1]) * grow)
        encoded = name.encode("utf-8", "surrogatepass")
        at = self._name_at[pos]
        if at >= 0 and self._names[at : self._name_end[pos]] == encoded:
            return
        self._name_at[pos] = len(self._names)
        self._names += encoded
        self._name_end[pos] = len(self._names)

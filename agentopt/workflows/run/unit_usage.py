"""What a unit's journal line says it spent: its requests and tokens, read from the record
object (`record_usage`), from a line parsed as JSON (`line_usage`, the `--resume` scan), or
from a line validated for that alone (`RecordUsage`, a replayed unit)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from agentopt.contracts.task_record import RepeatOutcome
from agentopt.core.lazy_model import LazyModel

UnitUsage = tuple[int, int, int]
"""A unit's requests, input tokens and output tokens."""


class Answered(LazyModel):
    """What counts a record, or one of its turns, as a request made."""

    model_config = ConfigDict(extra="ignore")

    response: Any = None
    error: Any = None


class Tokens(LazyModel):
    """A record's token counts (null in a line read as 0, as `line_usage` reads them)."""

    model_config = ConfigDict(extra="ignore")

    input: int | None = None
    output: int | None = None


class RecordUsage(Answered):
    """The part of a record `line_usage` reads."""

    turns: list[Answered] | None = None
    tokens: Tokens | None = None

    def usage(self) -> UnitUsage:
        calls = sum(1 for t in self.turns or [self] if t.response or t.error)
        tokens = self.tokens or Tokens()
        return calls, tokens.input or 0, tokens.output or 0


def record_usage(record: RepeatOutcome) -> UnitUsage:
    """(requests, input tokens, output tokens) of a unit's record: a turn that answered or
    failed made a request."""
    if record.turns:
        calls = sum(1 for t in record.turns if t.response or t.error is not None)
    else:
        calls = int(bool(record.response or record.error is not None))
    return calls, record.tokens.input, record.tokens.output


def line_usage(record: dict[str, Any]) -> UnitUsage:
    """`record_usage` of a record as a journal line holds it."""
    turns = record.get("turns") or [record]
    calls = sum(1 for t in turns if t.get("response") or t.get("error"))
    tokens = record.get("tokens") or {}
    return calls, int(tokens.get("input") or 0), int(tokens.get("output") or 0)

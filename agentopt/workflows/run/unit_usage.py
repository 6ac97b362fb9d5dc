"""What a unit spent, its requests and tokens: read from its record as the run holds it
(`record_usage`), or from its journal line (`RecordUsage`: what the `--resume` scan and a
replayed unit validate of the record, and nothing more)."""

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
    """A record's token counts (null in an older line: 0)."""

    model_config = ConfigDict(extra="ignore")

    input: int | None = None
    output: int | None = None


class RecordUsage(Answered):
    """The part of a journal line's record its usage is counted from."""

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

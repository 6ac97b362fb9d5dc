"""A unit's requests and tokens are the same numbers whichever way they are read: from the
record as the run holds it, and from its journal line, validated for its usage alone, as JSON
text (a replayed unit of a cached rerun) or as parsed data (the `--resume` scan). The run
summary's request count of a cached rerun equals the first run's only if they agree."""

from __future__ import annotations

import json

import pytest

from agentopt.contracts.task_record import RepeatOutcome, TokenCount, TurnOutcome
from agentopt.contracts.transcript import TurnError
from agentopt.core.redaction import model_line
from agentopt.workflows.run.unit_usage import RecordUsage, record_usage

FAILED = TurnError(code="agentRequestFailed", message="503 from the agent")

RECORDS = {
    "answered": RepeatOutcome(response="item 2", tokens=TokenCount(input=10, output=5)),
    "failed": RepeatOutcome(status="error", error=FAILED),
    "empty answer, no tokens": RepeatOutcome(response=""),
    "three turns: answered, failed, empty": RepeatOutcome(
        turns=[
            TurnOutcome(query="a", response="one", tokens=TokenCount(input=7, output=2)),
            TurnOutcome(query="b", error=FAILED),
            TurnOutcome(query="c", response=""),
        ],
        tokens=TokenCount(input=21, output=9),
    ),
}


@pytest.mark.parametrize("name", RECORDS)
def test_the_readings_of_a_record_agree(name: str) -> None:
    record = RECORDS[name]
    line = model_line(record)
    expected = record_usage(record)
    assert RecordUsage.model_validate_json(line).usage() == expected
    assert RecordUsage.model_validate(json.loads(line)).usage() == expected


def test_the_counts_are_what_the_record_says() -> None:
    assert record_usage(RECORDS["answered"]) == (1, 10, 5)
    assert record_usage(RECORDS["failed"]) == (1, 0, 0)
    assert record_usage(RECORDS["empty answer, no tokens"]) == (0, 0, 0)
    assert record_usage(RECORDS["three turns: answered, failed, empty"]) == (2, 21, 9)


def test_null_tokens_in_an_older_line_read_as_zero() -> None:
    line = '{"response": "x", "tokens": {"input": null, "output": 3}, "extra": [1, 2]}'
    assert RecordUsage.model_validate_json(line).usage() == (1, 0, 3)
    line = '{"turns": [], "error": {"code": "timeout", "message": "no answer"}, "tokens": null}'
    assert RecordUsage.model_validate_json(line).usage() == (1, 0, 0)

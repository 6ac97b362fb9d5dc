"""The shared records cross a process boundary as JSON and come back equal (what a worker in
another process, or on another machine, sends back for one (task, repeat)); saved records keep
keys they do not know."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentopt.contracts import (
    RepeatOutcome,
    RunJournalEntry,
    Task,
    Transcript,
    UnitResult,
    read_journal,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "records-e2ad180"

ROUND_TRIP = """
import sys
from agentopt.contracts import Task, Transcript, UnitResult
kinds = {"task": Task, "transcript": Transcript, "unit": UnitResult}
for line in sys.stdin:
    kind, _, body = line.partition(" ")
    print(kind, kinds[kind].model_validate_json(body).model_dump_json())
"""


def _units() -> list[UnitResult]:
    path = FIXTURES / "run-repeat2-journal.jsonl"
    return [
        UnitResult(score=e.score, record=e.record)
        for e in read_journal(path, RunJournalEntry.model_validate)
    ]


def test_task_transcript_and_unit_come_back_equal_from_another_process() -> None:
    task = Task.model_validate(
        {
            "name": "thread",
            "turns": [
                {"query": "Hi", "criteria": [{"name": "c", "instruction": "Greets"}]},
                {"query": "Bye", "ground_truth": "Goodbye."},
            ],
            "tags": ["smoke"],
            "tool_mocks": {"lookup": [{"return": {"ok": True}}]},
        }
    )
    transcript = Transcript.model_validate(
        {
            "turns": [
                {
                    "query": "Hi",
                    "response": "Hello",
                    "tool_calls": [{"name": "lookup", "arguments": {"id": 1}, "result": "x"}],
                    "usage": {"input_tokens": 12, "output_tokens": 3},
                    "latency_s": 0.25,
                },
                {"query": "Bye", "error": {"code": "timeout", "message": "no answer in 120s"}},
            ],
            "target": "local",
            "model": "mock:echo",
        }
    )
    units = _units()
    sent = [("task", task), ("transcript", transcript)] + [("unit", u) for u in units]
    lines = "".join(f"{kind} {value.model_dump_json()}\n" for kind, value in sent)
    proc = subprocess.run(
        [sys.executable, "-c", ROUND_TRIP], input=lines, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    back = [line.split(" ", 1) for line in proc.stdout.splitlines()]
    assert Task.model_validate_json(back[0][1]) == task
    assert Transcript.model_validate_json(back[1][1]) == transcript
    assert [UnitResult.model_validate_json(b) for _, b in back[2:]] == units
    assert Transcript.model_validate_json(back[1][1]).error is not None  # the timeout survived


def test_a_record_keeps_keys_a_newer_version_added() -> None:
    unit = _units()[0]
    data = unit.record.model_dump(mode="json")
    data["trace_id"] = "abc"
    data["evaluators"][0]["confidence"] = 0.9
    again = RepeatOutcome.model_validate(json.loads(json.dumps(data)))
    dumped = again.model_dump(mode="json")
    assert dumped["trace_id"] == "abc"
    assert dumped["evaluators"][0]["confidence"] == 0.9

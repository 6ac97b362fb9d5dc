"""Writing results.json from the journal, streaming one task at a time (files.md §7).

The journal is in completion order; a first pass records each line's byte offset per task,
then tasks are written in dataset order by seeking to their lines. Memory holds one task's
repeats at a time plus the small per-unit scores the summary needs.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from itertools import count
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentopt.contracts.record import SCHEMA_VERSION, parse_record
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import RunInfo, RunSummary
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task import Task
from agentopt.evaluators.aggregate import RepeatStats
from agentopt.workflows.run.records import task_record
from agentopt.workflows.run.store import RunStore


def journal_index(store: RunStore) -> tuple[dict[int, list[int]], list[TaskScore]]:
    """Byte offsets of each task's journal lines, and every unit's score."""
    offsets: dict[int, list[int]] = defaultdict(list)
    scores: list[TaskScore] = []
    if not store.journal.exists():
        return offsets, scores
    latest: dict[tuple[int, int], tuple[int, TaskScore]] = {}
    with open(store.journal, "rb") as fh:
        for number in count(1):
            at = fh.tell()
            line = fh.readline()
            if not line:
                break
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line after a crash
            entry = parse_record(RunJournalEntry, data, source=f"{store.journal}:line {number}")
            # A unit run again on --resume (it had failed) is journaled twice: last wins.
            latest[entry.key] = (at, entry.score)
    for (task, _repeat), (at, score) in sorted(latest.items()):
        offsets[task].append(at)
        scores.append(score)
    return offsets, scores


def write_results(
    store: RunStore,
    tasks: list[Task],
    offsets: dict[int, list[int]],
    repeat_stats: dict[str, RepeatStats],
    run: RunInfo,
    summary: RunSummary,
) -> Path:
    """Stream results.json, the `RunResults` shape, one task per line (atomic rename)."""
    target = store.results_json
    fd, tmp = tempfile.mkstemp(prefix=".results.", suffix=".tmp", dir=store.dir)
    try:
        if not store.journal.exists():  # stopped before the first unit finished
            store.journal.touch()
        with os.fdopen(fd, "w", encoding="utf-8") as out, open(store.journal, "rb") as journal:
            out.write(f'{{"schema_version": {SCHEMA_VERSION}, "run": {_json(run)}')
            out.write(f',\n"summary": {_json(summary)}')
            out.write(',\n"tasks": [')
            first = True
            for pos, task in enumerate(tasks):
                if pos not in offsets:
                    continue
                repeats = []
                for at in offsets[pos]:
                    journal.seek(at)
                    repeats.append(RunJournalEntry.model_validate_json(journal.readline()).record)
                record = task_record(task, repeats, repeat_stats.get(task.name))
                out.write(("\n" if first else ",\n") + _json(record))
                first = False
            out.write("\n]}\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _json(record: BaseModel) -> str:
    """A record as one line, in the layout every agentopt JSON file uses."""
    data: Any = record.model_dump(mode="json")
    return json.dumps(data, ensure_ascii=False)


def judged(scores: list[TaskScore]) -> bool:
    """Whether an LLM judge scored anything (every judge records its `judge_model`): a suite of
    deterministic checks and embedding-scored criteria names no judge in its reports."""
    return any(
        result.details.get("judge_model")
        for score in scores
        for turn in score.turns
        for result in turn.results
        if isinstance(result.details, dict)
    )


def reported_agent_usage(store: RunStore) -> dict[str, int]:
    """Requests and tokens of an agent that runs outside agentopt (hosted, endpoint, command,
    foundry), as its answers reported them: the call layer never sees its model calls, so
    without this the usage table said 0 agent calls for a run of a hundred turns."""
    latest: dict[tuple[int, int], dict[str, Any]] = {}
    if store.journal.exists():
        with open(store.journal, "rb") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line after a crash
                latest[(int(entry["task"]), int(entry["repeat"]))] = entry.get("record") or {}
    calls = tokens_in = tokens_out = 0
    for record in latest.values():
        turns = record.get("turns") or [record]
        calls += sum(1 for t in turns if t.get("response") or t.get("error"))
        tokens = record.get("tokens") or {}
        tokens_in += int(tokens.get("input") or 0)
        tokens_out += int(tokens.get("output") or 0)
    return {"calls": calls, "input_tokens": tokens_in, "output_tokens": tokens_out}

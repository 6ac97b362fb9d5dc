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
from pathlib import Path
from typing import Any

from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task import Task
from agentopt.evaluators.aggregate import RepeatStats, RunSummary
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
        while True:
            at = fh.tell()
            line = fh.readline()
            if not line:
                break
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line after a crash
            key = (int(entry["task"]), int(entry["repeat"]))
            # A unit run again on --resume (it had failed) is journaled twice: last wins.
            latest[key] = (at, TaskScore.model_validate(entry["score"]))
    for (task, _repeat), (at, score) in sorted(latest.items()):
        offsets[task].append(at)
        scores.append(score)
    return offsets, scores


def summary_dict(
    summary: RunSummary, usage: dict[str, Any], extra: dict[str, Any]
) -> dict[str, Any]:
    """RunSummary (evaluators) → the results.json `summary` shape (cli.md)."""
    return {
        "score": summary.score,
        "score_ci": [summary.ci.low, summary.ci.high] if summary.ci else None,
        "pass_rate": summary.pass_rate,
        "tasks": summary.tasks,
        "runs": summary.runs,
        "passed": summary.passed,
        "failed": summary.failed,
        "partial": summary.partial,
        "errors": summary.errored,
        "evaluators": [
            {
                "name": e.evaluator,
                "count": e.count,
                "passed": e.passed,
                "failed": e.failed,
                "errors": e.errors,
                "pass_rate": e.pass_rate,
                "mean": e.mean,
            }
            for e in summary.evaluators
        ],
        "errors_by_kind": summary.errors_by_kind,
        "usage": usage,
        "flaky": summary.flaky,
        **extra,
    }


def write_results(
    store: RunStore,
    tasks: list[Task],
    offsets: dict[int, list[int]],
    repeat_stats: dict[str, RepeatStats],
    header: dict[str, Any],
) -> Path:
    """Stream results.json: `{"run": …, "summary": …, "tasks": [ … ]}` (atomic rename)."""
    target = store.results_json
    fd, tmp = tempfile.mkstemp(prefix=".results.", suffix=".tmp", dir=store.dir)
    try:
        if not store.journal.exists():  # stopped before the first unit finished
            store.journal.touch()
        with os.fdopen(fd, "w", encoding="utf-8") as out, open(store.journal, "rb") as journal:
            out.write('{"run": ' + json.dumps(header["run"], ensure_ascii=False, default=str))
            out.write(',\n"summary": ' + json.dumps(header["summary"], ensure_ascii=False))
            out.write(',\n"tasks": [')
            first = True
            for pos, task in enumerate(tasks):
                if pos not in offsets:
                    continue
                repeats = []
                for at in offsets[pos]:
                    journal.seek(at)
                    repeats.append(json.loads(journal.readline())["record"])
                record = task_record(task, repeats, repeat_stats.get(task.name))
                out.write(("\n" if first else ",\n") + json.dumps(record, ensure_ascii=False))
                first = False
            out.write("\n]}\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target

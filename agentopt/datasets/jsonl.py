"""Foundry task JSONL: one JSON object per line (files.md §4.1)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentopt.core.files import bounded
from agentopt.datasets.foundry import UnknownKeys, task_from_record
from agentopt.datasets.problems import ProblemLog, describe
from agentopt.datasets.record_context import CHECK_ONLY, RecordContext, line_locator, task_models
from agentopt.datasets.task_names import LoadedNames, assign_names, generated_name

if TYPE_CHECKING:
    from agentopt.contracts.packed_tasks import PackedTasks


def load_jsonl(text: str, file: str, *, check_only: bool = False) -> tuple[PackedTasks, ProblemLog]:
    """Parse without raising: the tasks that loaded and every problem found. The tasks are
    packed as they load (`PackedTasks`): 100,000 of them take 15 MB, not 260. With
    `check_only` (`eval validate`) the same checks run and no task is built: the tasks
    returned are plain records, the problems the same."""
    log = ProblemLog(file)
    unknown = UnknownKeys()
    tasks: Any
    if check_only:
        tasks, models = [], CHECK_ONLY
    else:
        from agentopt.contracts.packed_tasks import PackedTasks

        tasks, models = PackedTasks(), task_models()
    names = LoadedNames()
    if not text.strip():
        log.error(
            "",
            'expected one JSON task object per line, like {"query": "...", '
            '"ground_truth": "..."}, found an empty file',
        )
        return tasks, log
    for n, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = bounded.loads(line)
        except json.JSONDecodeError as err:
            log.error(
                f"line {n}",
                f"expected a JSON object, found invalid JSON ({err.msg}, column {err.colno})",
            )
            continue
        if not isinstance(record, dict):
            log.error(
                f"line {n}", f"expected a JSON object (one task per line), found {describe(record)}"
            )
            continue
        ctx = RecordContext(log, n, line_locator(n), unknown, models)
        task = task_from_record(record, ctx, index=len(tasks))
        if task is not None:
            names.add(task.name, n)
            if not task.name and not check_only:
                task.name = generated_name(len(tasks))  # `assign_names` renames a clash
            tasks.append(task)
    if log.errors and _is_one_json_document(text):
        log.error(
            "",
            "this file holds one JSON document, not one object per line; give it a .json "
            "extension to load it as an M365 eval document",
        )
    unknown.report(log)
    assign_names(tasks, log, lambda n: f"line {n}", names, prenamed=not check_only)
    return tasks, log


_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Where `str.splitlines` breaks a line."""


def _lines(text: str) -> Iterator[str]:
    """`text.splitlines()`, one line at a time: the list of 100,000 lines took 11 MB of the
    load's peak (small objects whose memory the process keeps once freed)."""
    start = 0
    for brk in _LINE_BREAK.finditer(text):
        yield text[start : brk.start()]
        start = brk.end()
    if start < len(text):
        yield text[start:]


def _is_one_json_document(text: str) -> bool:
    try:
        value = bounded.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict | list) and len(text.strip().splitlines()) > 1

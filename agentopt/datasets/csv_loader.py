"""CSV datasets with a header row (files.md §4.3).

Each row becomes the same record a JSONL line would be, so both shapes accept the same
fields; cells of structured columns (`criteria`, `metadata`, ...) hold JSON. Problems name
the row's line number and the column.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from typing import Any

from agentopt.contracts.task import Task
from agentopt.core.files import bounded
from agentopt.datasets.foundry import (
    GOAL_KEYS,
    QUERY_KEYS,
    SYNONYMS,
    TASK_KEYS,
    UnknownKeys,
    task_from_record,
)
from agentopt.datasets.problems import ProblemLog, describe, did_you_mean
from agentopt.datasets.record_context import Locate, RecordContext
from agentopt.datasets.task_names import assign_names

JSON_COLUMNS = (
    "criteria",
    "metadata",
    "tool_mocks",
    "turns",
    "evaluators",
    "simulation_configuration",
)
INT_COLUMNS = ("desired_num_turns",)
_HEAD = re.compile(r"^([^.\[]+)(.*)$")


def load_csv(text: str, file: str) -> tuple[list[Task], ProblemLog]:
    """Parse without raising: the tasks that loaded and every problem found."""
    log = ProblemLog(file)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as err:
        log.error("line 1", f"expected a CSV header row, found unreadable CSV ({err})")
        return [], log
    if header is None or not any(cell.strip() for cell in header):
        log.error(
            "", "expected a header row naming the columns (at least query), found an empty file"
        )
        return [], log
    columns = [cell.strip() for cell in header]
    if not _check_header(columns, log):
        return [], log
    tasks: list[Task] = []
    unknown = UnknownKeys()
    end = reader.line_num
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            log.error(
                f"line {start}", f"expected a well-formed CSV row, found unreadable CSV ({err})"
            )
            break
        end = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(columns):
            log.error(
                f"line {start}",
                f"expected at most {len(columns)} cells (one per header column), found {len(row)}",
            )
            continue
        ctx = RecordContext(log, start, _cell_locator(start), unknown)
        record = _record(dict(zip(columns, row, strict=False)), ctx)
        if record is None:
            continue
        task = task_from_record(record, ctx, index=len(tasks))
        if task is not None:
            tasks.append(task)
    unknown.seen = {key: lines for key, lines in unknown.seen.items() if key[0] == "turn"}
    unknown.report(log)
    if not tasks and not log.errors:
        log.error("", "expected at least one data row below the header, found none")
    assign_names(tasks, log, lambda n: f"line {n}")
    return tasks, log


def _check_header(columns: list[str], log: ProblemLog) -> bool:
    ok = True
    counts = Counter(columns)  # one pass: `list.count` per column was quadratic
    for position, name in enumerate(columns, start=1):
        if not name:
            log.error("line 1", f"column {position}: expected a column name, found an empty cell")
            ok = False
        elif counts[name] > 1 and columns.index(name) == position - 1:
            log.error("line 1", f'column "{name}" appears {counts[name]} times; expected once')
            ok = False
    if not any(c in (*QUERY_KEYS, *GOAL_KEYS) for c in columns):
        shown = columns[:MAX_SHOWN_COLUMNS]
        guesses = "".join(filter(None, (did_you_mean(c, QUERY_KEYS) for c in shown)))
        more = f" and {len(columns) - len(shown):,} more" if len(columns) > len(shown) else ""
        log.error(
            "line 1",
            'expected a "query" (or "prompt") column, or a "goal" column for simulated users, '
            "found columns " + ", ".join(f'"{c}"' for c in shown) + more + guesses,
        )
        ok = False
    for name in columns:
        if name and name not in TASK_KEYS:
            guess = did_you_mean(name, TASK_KEYS, SYNONYMS) if log.listing("warning") else ""
            message = f'unknown column "{name}"{guess}; kept as extra data'
            log.warn(f"line 1, column {name}", message)
    return ok


MAX_SHOWN_COLUMNS = 20
"""Columns named in the "no query column" error; the rest are counted."""


def _record(cells: dict[str, str], ctx: RecordContext) -> dict[str, Any] | None:
    """Cells → a JSONL-like record: empty cells are absent, structured cells are parsed."""
    record: dict[str, Any] = {}
    ok = True
    for column, cell in cells.items():
        if not cell.strip() and column not in QUERY_KEYS:
            continue
        if column in JSON_COLUMNS or (column == "tags" and cell.lstrip().startswith("[")):
            try:
                record[column] = bounded.loads(cell)
            except json.JSONDecodeError as err:
                ctx.error(column, f"expected JSON in this cell, found invalid JSON ({err.msg})")
                ok = False
        elif column == "tags":
            record[column] = [t.strip() for t in cell.split(",") if t.strip()]
        elif column in INT_COLUMNS:
            try:
                record[column] = int(cell)
            except ValueError:
                ctx.error(column, f"expected a whole number, found {describe(cell)}")
                ok = False
        else:
            record[column] = cell
    return record if ok else None


def _cell_locator(line: int) -> Locate:
    def locate(path: str) -> tuple[str, str]:
        match = _HEAD.match(path)
        if not match:
            return f"line {line}", ""
        column, rest = match.groups()
        return f"line {line}, column {column}", f"{rest.lstrip('.')}: " if rest else ""

    return locate

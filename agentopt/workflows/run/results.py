"""Writing results.json from the journal, streaming one task at a time (files.md §7).

The journal is in completion order; the store knows each unit's line offset, so tasks are
written in dataset order by seeking to their lines. Memory holds one task's repeats at a time;
each finished `TaskOutcome` is also handed to `keep` (the tasks the caller still needs: the
terminal summary's few, or all of them for reports), so nothing reads results.json back.
What is written and kept is masked (`core.redaction`), like the journal it comes from.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from agentopt.contracts.record import SCHEMA_VERSION
from agentopt.contracts.run_results import RunInfo, RunSummary
from agentopt.contracts.task import Task
from agentopt.contracts.task_record import RepeatOutcome, TaskOutcome
from agentopt.core.lazy_model import LazyModel
from agentopt.core.redaction import masked_model_line
from agentopt.evaluators.run_stats import RepeatStats
from agentopt.workflows.run.records import task_record
from agentopt.workflows.run.store import RunStore

R = TypeVar("R", bound=BaseModel)


def write_results(
    store: RunStore,
    tasks: Sequence[Task],
    repeat_stats: dict[str, RepeatStats],
    run: RunInfo,
    summary: RunSummary,
    keep: Callable[[TaskOutcome], None] | None = None,
) -> Path:
    """Stream results.json, the `RunResults` shape, one task per line (atomic rename)."""
    store.flush()  # every journaled line is in the file, to be read back by offset
    target = store.results_json
    fd, tmp = tempfile.mkstemp(prefix=".results.", suffix=".tmp", dir=store.dir)
    try:
        if not store.journal.exists():  # stopped before the first unit finished
            store.journal.touch()
        with os.fdopen(fd, "w", encoding="utf-8") as out, open(store.journal, "rb") as journal:
            out.write(f'{{"schema_version":{SCHEMA_VERSION},"run":{_masked(run)[1]}')
            out.write(f',\n"summary":{_masked(summary)[1]}')
            out.write(',\n"tasks":[')
            first = True
            for pos, task in enumerate(tasks):
                journaled = store.repeat_offsets(pos)
                if not journaled:
                    continue
                repeats = []
                for _, at in journaled:
                    journal.seek(at)
                    repeats.append(_RecordOnly.model_validate_json(journal.readline()).record)
                record, line = _masked(task_record(task, repeats, repeat_stats.get(task.name)))
                out.write(("\n" if first else ",\n") + line)
                first = False
                if keep is not None:
                    keep(record)
            out.write("\n]}\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


class _RecordOnly(LazyModel):
    """A journal line read for its record alone (`RunJournalEntry` less the verdict, which
    the summary has already counted): half the validation a task."""

    model_config = ConfigDict(extra="ignore")

    record: RepeatOutcome


RESULT_MODELS = (_RecordOnly, TaskOutcome)
"""The models results.json is written with (built ahead: `finish.prebuild_finish_models`)."""


def _masked(record: R) -> tuple[R, str]:
    """The record with secrets masked (the same object when there were none: the task's own
    fields come from the dataset, not the masked journal) and its line, compact as the
    journal's are (`redaction.model_line`)."""
    return masked_model_line(record)

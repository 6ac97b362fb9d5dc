"""A JSONL dataset's tasks are held packed: each read gives back the task as loaded (same
values, same fields set, so records dump the same), and 20,000 of them fit in a few MB."""

from __future__ import annotations

import pickle
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentopt.contracts import packed_tasks
from agentopt.contracts.packed_tasks import PackedTasks
from agentopt.contracts.task import Criterion, Dataset, EvaluatorRef, Task, Turn
from agentopt.datasets import load_dataset

_TEXT = st.text(max_size=12)
_TURNS = st.builds(
    Turn,
    query=_TEXT,
    ground_truth=st.none() | _TEXT,
    criteria=st.lists(st.builds(Criterion, name=_TEXT, instruction=_TEXT), max_size=2),
    evaluators=st.none() | st.lists(st.builds(EvaluatorRef, name=_TEXT), max_size=1),
    extra=st.dictionaries(_TEXT, st.integers() | _TEXT, max_size=2),
)
_TASKS = st.builds(
    Task,
    name=_TEXT,
    turns=st.lists(_TURNS, min_size=1, max_size=3),
    tags=st.lists(_TEXT, max_size=2),
    metadata=st.dictionaries(_TEXT, st.none() | st.floats(allow_nan=False) | _TEXT, max_size=2),
    persona=st.none() | _TEXT,
    index=st.integers(0, 10**6),
    line=st.none() | st.integers(1, 10**6),
)


@settings(max_examples=200, deadline=None)
@given(tasks=st.lists(_TASKS, max_size=4))
def test_a_packed_task_reads_back_as_it_was_set(tasks: list[Task]) -> None:
    packed = PackedTasks(tasks)
    assert len(packed) == len(tasks)
    assert list(packed) == tasks and packed == tasks
    for read, original in zip(packed, tasks, strict=True):
        assert read.model_fields_set == original.model_fields_set
        assert read.model_dump(exclude_unset=True) == original.model_dump(exclude_unset=True)
        for a, b in zip(read.turns, original.turns, strict=True):
            assert a.model_fields_set == b.model_fields_set
    assert pickle.loads(pickle.dumps(packed)) == packed  # how a Ray worker receives them
    assert list(packed[1:3]) == tasks[1:3]


def test_a_read_is_a_copy_and_replace_stores_a_change() -> None:
    packed = PackedTasks([Task(name="a", turns=[Turn(query="q")])])
    task = packed[0]
    task.name = "renamed"
    assert packed[0].name == "a"
    packed.replace(0, task)
    assert packed[0].name == "renamed"


def test_a_dataset_keeps_them_packed_and_dumps_them_as_tasks() -> None:
    tasks = [Task(name="a", turns=[Turn(query="q", ground_truth="g")])]
    dataset = Dataset(tasks=PackedTasks(tasks))
    assert isinstance(dataset.tasks, PackedTasks)
    assert isinstance(dataset.model_copy(update={"name": "x"}).tasks, PackedTasks)
    assert dataset.model_dump()["tasks"] == [t.model_dump() for t in tasks]
    assert Dataset(tasks=tasks).tasks == tasks  # a list stays a list


def test_twenty_thousand_loaded_tasks_take_a_few_megabytes(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "".join(
            f'{{"name": "t{i}", "query": "item {i}", "ground_truth": "item {i}"}}\n'
            for i in range(20_000)
        )
        + '{"query": "a task without a name"}\n'
    )
    tracemalloc.start()
    try:
        dataset = load_dataset(path)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(dataset.tasks) == 20_001
    # Unpacked, these tasks held 41 MB of Python objects (2 KB a task); packed, ~6 MB with
    # the file's text still referenced by nothing.
    assert held < 12_000_000, f"{held / 1e6:.1f} MB held for 20,001 tasks"
    assert dataset.tasks[-1].name == "task_20001"  # the generated name was stored
    assert dataset.tasks[5].turns[0].ground_truth == "item 5"


def test_spilled_tasks_read_in_any_order_across_read_ahead_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spilled tasks read in order are read `READ_AHEAD` bytes at a time (not a read a task),
    again after a jump back to the start; a task that ends past a chunk, one larger than a
    chunk, reads backwards, strided and random, and tasks appended after a read all give back
    what was packed."""
    monkeypatch.setattr(packed_tasks, "SPILL_BYTES", 500)
    monkeypatch.setattr(packed_tasks, "READ_AHEAD", 400)
    tasks = [
        Task(name=f"t{i}", index=i, turns=[Turn(query="x" * (900 if i == 11 else i % 7))])
        for i in range(60)
    ]
    spilled = PackedTasks(tasks)
    assert spilled._file is not None
    assert len(spilled.json_at(11)) > 400  # more than a chunk
    size = sum(len(spilled.json_at(i)) for i in range(60)) - len(spilled.json_at(11))
    pread = packed_tasks._PREAD
    assert pread is not None
    reads: list[int] = []

    def counted(fd: int, size: int, at: int) -> bytes:
        reads.append(size)
        return pread(fd, size, at)

    monkeypatch.setattr(packed_tasks, "_PREAD", counted)
    for _ in range(2):  # each pass jumps back to the first task
        reads.clear()
        assert list(spilled) == tasks
        # A chunk starts where a task does: it holds at least 400 - 60 bytes of tasks.
        assert len(reads) <= size / 340 + 3, f"{len(reads)} reads of {size} bytes in order"
    order = [*reversed(range(60)), *range(0, 60, 7)]
    order += random.Random(3).choices(range(60), k=200)
    assert [spilled[i] for i in order] == [tasks[i] for i in order]
    late = Task(name="late", index=60, turns=[Turn(query="appended after the reads")])
    spilled.append(late)
    assert spilled[59] == tasks[59] and spilled[60] == late and list(spilled) == [*tasks, late]


def test_spilled_tasks_read_back_the_same_and_hold_only_their_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past `SPILL_BYTES` the JSON lives in a temporary file: every read, slice, replace and
    pickle gives what the in-memory buffer gave, and memory keeps 8 bytes a task."""
    tasks = [
        Task(name=f"t{i}", index=i, turns=[Turn(query=f"item {i}", ground_truth=f"é {i}")])
        for i in range(300)
    ]
    kept = PackedTasks(tasks)
    monkeypatch.setattr(packed_tasks, "SPILL_BYTES", 1_000)
    spilled = PackedTasks(tasks)
    assert spilled._file is not None and not spilled._data and kept._file is None
    assert spilled == kept and list(spilled) == tasks and spilled[-1] == tasks[-1]
    assert list(spilled[10:20]) == tasks[10:20]
    assert pickle.loads(pickle.dumps(spilled)) == kept
    changed = spilled[3]
    changed.name = "renamed"
    spilled.replace(3, changed)
    assert spilled[3].name == "renamed" and spilled[4] == tasks[4]
    spilled.append(tasks[0])
    assert spilled[-1] == tasks[0] and len(spilled) == 301

    many = [tasks[i % 300] for i in range(20_000)]
    tracemalloc.start()
    try:
        packed = PackedTasks(many)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert packed[19_999] == many[19_999]
    # In memory, 20,000 of these took ~1.6 MB; spilled, their ends (160 KB) and the file.
    assert held < 400_000, f"{held / 1e3:.0f} KB held for 20,000 spilled tasks"

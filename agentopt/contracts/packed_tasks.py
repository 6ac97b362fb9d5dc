"""A dataset's tasks held as compact JSON, one `Task` built each time one is read.

A loaded `Task` costs about 2.6 KB of Python objects (two models, their field dicts and
field sets, five empty containers); its JSON, with the unset fields left out, is ~100 bytes.
A run of 100,000 tasks held 260 MB of tasks before the first call. Packed, the same tasks
take ~10 MB, and reading one costs ~3 µs (pydantic-core parses the JSON straight into the
model), so the run, which reads each task a few times, pays milliseconds.

A task read from here is a fresh object: changing it changes nothing stored. The one place
that changes loaded tasks (generated names for unnamed ones) writes them back with
`replace`.

Past `SPILL_BYTES` of JSON the buffer moves to an unnamed temporary file and a read is one
`pread`: what a run keeps in memory until its summary no longer grows ~100 bytes a task
(10 MB of a 100,000-task run's peak; issue 37 wants the peak at 100,000 tasks within 1.2x the
10,000-task figure). Only the 8 bytes a task of where each one ends stay.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, overload

from pydantic_core import to_json

from agentopt.contracts.task import Task


class PackedTasks(Sequence[Task]):
    """An immutable-looking sequence of tasks stored as their JSON (unset fields left out,
    so a task read back has the same fields set, and dumps the same), back to back in one
    buffer: a task's JSON and 8 bytes for where it ends (a `bytes` object each took ~40 bytes
    more). A replaced task's JSON is kept beside the buffer."""

    __slots__ = ("_ahead", "_data", "_ends", "_file", "_lock", "_replaced")

    def __init__(self, tasks: Iterable[Task] = ()) -> None:
        self._data = bytearray()
        self._ends = array("q")
        self._replaced: dict[int, bytes] = {}
        self._file: IO[bytes] | None = None
        """The tasks' JSON once past `SPILL_BYTES` (`_data` is then empty)."""
        self._ahead: tuple[int, bytes] | None = None
        """The bytes last read from `_file` and where they start: `READ_AHEAD` of them when
        the read began inside the ones before or where they ended (the tasks read in order),
        the one task's after a jump."""
        self._lock = threading.Lock()
        for task in tasks:
            self.append(task)

    @classmethod
    def _of_blobs(cls, blobs: Iterable[bytes]) -> PackedTasks:
        packed = cls()
        for blob in blobs:
            packed._add(blob)
        return packed

    def _size(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _add(self, blob: bytes) -> None:
        end = self._size() + len(blob)
        if self._file is None:
            self._data += blob
            if len(self._data) > SPILL_BYTES:
                self._spill()
        else:
            with self._lock:
                self._file.seek(0, os.SEEK_END)
                self._file.write(blob)
        self._ends.append(end)

    def _spill(self) -> None:
        # Held open for the sequence's life, closed by `__del__`.
        self._file = tempfile.TemporaryFile(prefix="agentopt-tasks-", buffering=0)  # noqa: SIM115
        self._file.write(self._data)
        self._data = bytearray()

    def __del__(self) -> None:
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()  # unnamed: closing it frees its disk space

    def _blob(self, index: int) -> bytes:
        replaced = self._replaced.get(index)
        if replaced is not None:
            return replaced
        start = self._ends[index - 1] if index else 0
        if self._file is None:
            return bytes(self._data[start : self._ends[index]])
        end = self._ends[index]
        ahead = self._ahead
        if ahead is not None and ahead[0] <= start and end <= ahead[0] + len(ahead[1]):
            return ahead[1][start - ahead[0] : end - ahead[0]]
        size = end - start
        if _PREAD is not None:
            in_order = size < READ_AHEAD and (
                ahead is None or ahead[0] <= start <= ahead[0] + len(ahead[1])
            )
            # After a jump, this task alone; the file is only appended to: what was read
            # stays true.
            data = _PREAD(self._file.fileno(), READ_AHEAD if in_order else size, start)
            self._ahead = (start, data)
            return data[:size]
        with self._lock:  # no pread (Windows): a seek and a read, one reader at a time
            self._file.seek(start)
            return self._file.read(size)

    def json_at(self, index: int) -> bytes:
        """The task at `index` as `task_json` writes it, without building the task."""
        return self._blob(index)

    def _blobs(self) -> Iterator[bytes]:
        return (self._blob(i) for i in range(len(self._ends)))

    def append(self, task: Task) -> None:
        self._add(task_json(task))

    def replace(self, index: int, task: Task) -> None:
        """Store `task` in place of the task at `index`."""
        if not -len(self._ends) <= index < len(self._ends):
            raise IndexError("PackedTasks index out of range")
        self._replaced[index % len(self._ends)] = task_json(task)

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> PackedTasks: ...

    def __getitem__(self, index: int | slice) -> Task | PackedTasks:
        if isinstance(index, slice):
            return PackedTasks._of_blobs(
                self._blob(i) for i in range(*index.indices(len(self._ends)))
            )
        if not -len(self._ends) <= index < len(self._ends):
            raise IndexError("PackedTasks index out of range")
        return Task.model_validate_json(self._blob(index % len(self._ends)))

    def __iter__(self) -> Iterator[Task]:
        for blob in self._blobs():
            yield Task.model_validate_json(blob)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedTasks):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self._blobs(), other._blobs(), strict=True)
            )
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a list

    def __repr__(self) -> str:
        return f"PackedTasks({len(self)} tasks)"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as the blobs (the Ray wire)
        return (PackedTasks._of_blobs, (list(self._blobs()),))


SPILL_BYTES = 1 << 20
"""Tasks' JSON held in memory before it moves to a temporary file (~10,000 tasks)."""
READ_AHEAD = 64 << 10
"""Bytes of the temporary file read at once. A run reads its tasks in order, five times
over (the plan, the unit keys, the units, what is kept for a rerun, results.json): a `pread`
a task was 50,000 system calls in a 10,000-task run (~4 µs each); one every ~600 tasks now."""
_PREAD = getattr(os, "pread", None)


def task_json(task: Task) -> bytes:
    """The task as stored here (its set fields): what identifies it to a unit replay."""
    # JSON with Infinity/NaN written as such: a metadata value of 1e400 reads back as inf,
    # where model_dump_json would have written null.
    return to_json(task.model_dump(exclude_unset=True), inf_nan_mode="constants")

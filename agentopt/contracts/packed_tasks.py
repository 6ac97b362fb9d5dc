"""A dataset's tasks held as compact JSON, one `Task` built each time one is read.

A loaded `Task` costs about 2.6 KB of Python objects (two models, their field dicts and
field sets, five empty containers); its JSON, with the unset fields left out, is ~100 bytes.
A run of 100,000 tasks held 260 MB of tasks before the first call. Packed, the same tasks
take 15 MB, and reading one costs ~3 µs (pydantic-core parses the JSON straight into the
model), so the run, which reads each task a few times, pays milliseconds.

A task read from here is a fresh object: changing it changes nothing stored. The one place
that changes loaded tasks (generated names for unnamed ones) writes them back with
`replace`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pydantic_core import to_json

from agentopt.contracts.task import Task


class PackedTasks(Sequence[Task]):
    """An immutable-looking sequence of tasks stored as their JSON (unset fields left out,
    so a task read back has the same fields set, and dumps the same)."""

    __slots__ = ("_blobs",)

    def __init__(self, tasks: Iterable[Task] = ()) -> None:
        self._blobs: list[bytes] = [_pack(t) for t in tasks]

    @classmethod
    def _of_blobs(cls, blobs: list[bytes]) -> PackedTasks:
        packed = cls()
        packed._blobs = blobs
        return packed

    def append(self, task: Task) -> None:
        self._blobs.append(_pack(task))

    def replace(self, index: int, task: Task) -> None:
        """Store `task` in place of the task at `index`."""
        self._blobs[index] = _pack(task)

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> PackedTasks: ...

    def __getitem__(self, index: int | slice) -> Task | PackedTasks:
        if isinstance(index, slice):
            return PackedTasks._of_blobs(self._blobs[index])
        return Task.model_validate_json(self._blobs[index])

    def __iter__(self) -> Iterator[Task]:
        for blob in self._blobs:
            yield Task.model_validate_json(blob)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedTasks):
            return self._blobs == other._blobs
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a list

    def __repr__(self) -> str:
        return f"PackedTasks({len(self)} tasks)"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as the blobs (the Ray wire)
        return (PackedTasks._of_blobs, (self._blobs,))


def _pack(task: Task) -> bytes:
    # JSON with Infinity/NaN written as such: a metadata value of 1e400 reads back as inf,
    # where model_dump_json would have written null.
    return to_json(task.model_dump(exclude_unset=True), inf_nan_mode="constants")

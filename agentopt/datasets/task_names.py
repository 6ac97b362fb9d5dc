"""Task names: duplicates reported with both lines, `task_<n>` given to unnamed tasks.

A 100,000-task file's check held every name (6.5 MB of strings) and a dict of each name's
first line (5 MB) at the peak of its load, above all the run's later memory (issue 37). Names
are now checked by their hashes, 8 bytes a task (`core.repeated_hashes`), and a task's name
is read back only when its hash meets another's. Generated names
(`task_<n>`, `task_<n>_<k>`) can only collide with a name given in that form, so only those
names are kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from agentopt.core.repeated_hashes import repeated_hashes
from agentopt.datasets.problems import ProblemLog

if TYPE_CHECKING:
    from agentopt.contracts.packed_tasks import PackedTasks
    from agentopt.contracts.task import Task

GENERATED = "task_"
"""How every generated name starts."""


class LoadedNames:
    """Each task's name as its loader read it: its hash and line (16 bytes a task)."""

    def __init__(self) -> None:
        self.hashes = array("q")
        self.lines = array("q")
        """1-based; 0 where the task has no line."""
        self.unnamed = array("q")
        """Positions of the tasks without a name, in order."""
        self.generated_like: set[str] = set()
        """The given names a generated one could equal."""

    def add(self, name: str, line: int | None) -> None:
        if not name:
            self.unnamed.append(len(self.hashes))
        elif name.startswith(GENERATED):
            self.generated_like.add(name)
        self.hashes.append(hash(name))
        self.lines.append(line or 0)

    @classmethod
    def of(cls, tasks: Sequence[Any]) -> LoadedNames:
        names = cls()
        for task in tasks:
            names.add(task.name, task.line)
        return names

    def named_hashes(self) -> Iterator[int]:
        """The hashes of the tasks that have a name."""
        unnamed = iter(self.unnamed)
        skip = next(unnamed, -1)
        for pos, digest in enumerate(self.hashes):
            if pos == skip:
                skip = next(unnamed, -1)
                continue
            yield digest


def generated_name(position: int) -> str:
    """The name an unnamed task at `position` gets unless a given name already has it."""
    return f"{GENERATED}{position + 1}"


def assign_names(
    tasks: list[Task] | PackedTasks,
    log: ProblemLog,
    where: Callable[[int], str],
    known: LoadedNames | None = None,
    *,
    prenamed: bool = False,
) -> None:
    """Report duplicate names (naming both lines) and generate `task_<n>` for the rest.

    `known`: the names as the loader read them, so packed tasks are read back (a read parses
    the task's JSON) only where two names may be alike. `prenamed`: the loader stored each
    unnamed task under `generated_name` already (`known` still counts it unnamed), so only a
    task whose name a given one took is read back and renamed: reading, renaming and packing
    again every unnamed task was ~6 µs of each one's load, and kept a second copy of its JSON
    (`PackedTasks.replace`)."""
    names = known if known is not None else LoadedNames.of(tasks)
    repeated = repeated_hashes(names.named_hashes())
    first_line: dict[str, int] = {}
    if repeated:
        for pos, digest in enumerate(names.hashes):
            if digest not in repeated:
                continue
            name = tasks[pos].name
            if not name:
                continue
            line = names.lines[pos]
            if name in first_line:
                log.error(
                    where(line),
                    f'duplicate name "{name}": already used on {where(first_line[name])}; '
                    "expected every task name to be unique",
                )
            else:
                first_line[name] = line
    for pos in names.unnamed:
        candidate, k = generated_name(pos), 2
        while candidate in names.generated_like:
            candidate, k = f"{GENERATED}{pos + 1}_{k}", k + 1
        if prenamed and candidate == generated_name(pos):
            continue
        task = tasks[pos]
        task.name = candidate
        if not isinstance(tasks, list):  # PackedTasks: a packed task read is a copy
            tasks.replace(pos, task)

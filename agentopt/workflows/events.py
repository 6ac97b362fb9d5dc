"""Progress events from long workflows. Workflows emit; the CLI renders (rich bar on a
terminal, plain periodic lines otherwise), so library users can plug in their own sink."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass
class Progress:
    """Counts so far: tasks done out of total (task × repeat units)."""

    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    skipped: int = 0
    """Already finished in the journal (resume)."""


class ProgressSink(Protocol):
    """Receives progress; all methods are optional no-ops in `NullSink`."""

    def start(self, progress: Progress, title: str) -> None: ...

    def update(self, progress: Progress, last: str) -> None: ...

    def notice(self, message: str) -> None: ...

    def finish(self, progress: Progress) -> None: ...


class NullSink:
    """A sink that ignores everything (library use, tests)."""

    def start(self, progress: Progress, title: str) -> None:
        return None

    def update(self, progress: Progress, last: str) -> None:
        return None

    def notice(self, message: str) -> None:
        return None

    def finish(self, progress: Progress) -> None:
        return None

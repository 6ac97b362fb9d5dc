"""Progress events from long workflows. Workflows emit; the CLI renders (rich bar on a
terminal, plain periodic lines otherwise), so library users can plug in their own sink."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from agentopt.contracts.outcomes import OutcomeCounts

if TYPE_CHECKING:
    from agentopt.models.call_progress import TokenMeter


@dataclass
class Progress:
    """Counts so far: tasks done out of total (task × repeat units)."""

    total: int
    done: int = 0
    counts: OutcomeCounts = field(default_factory=OutcomeCounts)
    """The run's tally so far (`RunTally.counts`): the classes the summary ends with."""
    cost_usd: float = 0.0
    skipped: int = 0
    """Already finished in the journal (resume)."""
    source: str = ""
    """Whose tally `counts` is when it is not agentopt's own (e.g. "Foundry")."""
    answering: int = 0
    """Units whose agent is answering right now."""
    judging: int = 0
    """Units being scored right now (the judges' calls), so a slow judge shows as such."""
    meter: TokenMeter | None = None
    """The run's call-layer token meter: progress lines show tokens/s from it."""

    @property
    def passed(self) -> int:
        return self.counts.passed

    @property
    def errors(self) -> int:
        """Agent and evaluator calls that failed after retries, so far."""
        return self.counts.failed_calls


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


class PhaseSink(Protocol):
    """Progress of a long model phase with no task table (generation, the rubric, the
    self-check): what is made so far out of how many. The sink adds tokens/s and an ETA from
    the call layer's meter (`attach`), so a phase is never a silent minute."""

    def attach(self, meter: object) -> None: ...

    def phase(self, name: str, total: int | None = None, unit: str = "") -> None: ...

    def advance(self, done: int) -> None: ...

    def end(self) -> None: ...


class NullPhases:
    """A phase sink that ignores everything (library use, tests)."""

    def attach(self, meter: object) -> None:
        return None

    def phase(self, name: str, total: int | None = None, unit: str = "") -> None:
        return None

    def advance(self, done: int) -> None:
        return None

    def end(self) -> None:
        return None

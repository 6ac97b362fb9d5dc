"""What the optimize loop tells whoever watches it. The workflow emits; the CLI renders the
live table; library users plug in their own sink (or `NullOptimizeSink`)."""

from __future__ import annotations

from typing import Protocol

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord
from agentopt.models.call_progress import TokenMeter


class OptimizeSink(Protocol):
    """Receives the loop's progress."""

    def attach(self, meter: TokenMeter) -> None:
        """The job's call-layer token meter (tokens/s of the phase under way)."""

    def status(self, message: str) -> None:
        """What is being done right now (transient)."""

    def notice(self, message: str) -> None:
        """Something the user should read (kept)."""

    def candidate(self, job: JobRecord, candidate: CandidateRecord) -> None:
        """A candidate finished: fully evaluated, or screened out."""

    def stalled(self, number: int, strategy: str, reason: str) -> None:
        """A proposal slot produced no candidate (nothing new, rejected, duplicate)."""

    def finish(self, job: JobRecord) -> None:
        """The job stopped (for any reason); `job` is final."""


class NullOptimizeSink:
    """Ignores everything (library use, tests)."""

    def attach(self, meter: TokenMeter) -> None:
        return None

    def status(self, message: str) -> None:
        return None

    def notice(self, message: str) -> None:
        return None

    def candidate(self, job: JobRecord, candidate: CandidateRecord) -> None:
        return None

    def stalled(self, number: int, strategy: str, reason: str) -> None:
        return None

    def finish(self, job: JobRecord) -> None:
        return None

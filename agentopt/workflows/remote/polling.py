"""Waiting for a remote evaluation run or optimization job to finish.

Each status read goes through `FoundryProject.call`, so a 429 or a 5xx while polling is
retried with back-off there (azd tolerates 5 in a row; so does `RetrySettings.attempts`).
Between reads the wait grows from `interval_s` to `max_interval_s`. Ctrl-C propagates as
KeyboardInterrupt: the remote work goes on, and the ids saved before the first poll let
`--resume` / `--watch` pick it up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentopt.workflows.remote.errors import RemoteError


@dataclass(frozen=True)
class PollSettings:
    """Cadence of status reads (the one owner of these numbers)."""

    interval_s: float = 5.0
    """First wait between reads (azd: 5 s for eval runs, 10 s for optimization jobs)."""
    max_interval_s: float = 30.0
    growth: float = 1.5
    """The wait is multiplied by this after each read, up to `max_interval_s`."""
    timeout_s: float | None = None
    """Stop waiting after this long (the remote work continues); None = no limit."""
    max_reads: int | None = None
    """Stop waiting after this many status reads (the remote work continues); None = no cap."""

    @classmethod
    def eval_run(cls, interval_s: float | None = None) -> PollSettings:
        """azd's cadence for an evaluation run: every 5 s, at most 360 reads (~30 min)
        (`defaultEvalPollInterval`, `defaultEvalMaxAttempts`, eval_run.go:233-234)."""
        return cls(
            interval_s=EVAL_RUN_INTERVAL_S if interval_s is None else interval_s,
            max_interval_s=EVAL_RUN_INTERVAL_S if interval_s is None else interval_s,
            growth=1.0,
            max_reads=EVAL_RUN_MAX_READS,
        )


EVAL_RUN_INTERVAL_S = 5.0
EVAL_RUN_MAX_READS = 360


def poll_until(
    read: Callable[[], dict[str, Any]],
    finished: Callable[[dict[str, Any]], bool],
    settings: PollSettings,
    *,
    on_status: Callable[[dict[str, Any]], None] | None = None,
    what: str = "the remote run",
    resume_hint: str = "",
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Read the status until `finished(status)`; return that last status."""
    started = clock()
    wait = settings.interval_s
    reads = 0
    while True:
        status = read()
        reads += 1
        if on_status is not None:
            on_status(status)
        if finished(status):
            return status
        if settings.max_reads is not None and reads >= settings.max_reads:
            raise RemoteError(
                f"{what} is still {status.get('status', 'running')} after {reads} status "
                f"reads; it goes on in the project",
                hint=resume_hint or None,
            )
        if settings.timeout_s is not None and clock() - started >= settings.timeout_s:
            raise RemoteError(
                f"{what} is still {status.get('status', 'running')} after "
                f"{settings.timeout_s:g} s; it goes on in the project",
                hint=resume_hint or None,
            )
        sleep(wait)
        wait = min(wait * settings.growth, settings.max_interval_s)

"""What a model call in flight shows of its progress, so the call layer can tell slow from stuck.

A provider that can see its answer being made — the embedded runtime's token callback, a
self-hosted server's stream — ticks the `CallProgress` of the current call for every token.
The attempt watchdog (`models.attempts`) then cuts an attempt only when no token arrived for
the stall window, not because the wall clock ran past a fixed number: a 135M model on one
thread of a busy machine makes 3 tokens a second and still finishes. Time a call spends queued
for the embedded model's one slot is not counted against its deadline.

The same ticks feed the layer's `TokenMeter`, which progress lines read for tokens/s.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Clock = Callable[[], float]


MARK_EVERY_S = 0.05
"""A meter keeps a mark of (time, tokens so far) at most this often, the newest one moving
with each tick: a rate is a slope between two points of that curve, and a mark for every call
of a 100,000-task run was ~22,000 tuples (2.7 MB) for its 30 s window."""


class TokenMeter:
    """Output tokens made by every call of one layer, streamed ones counted as they come.

    `rate()` is tokens per second over the last `window_s` seconds that saw any; it reads
    0 until something was measured. Safe to tick from the embedded runtime's thread."""

    def __init__(self, *, window_s: float = 30.0, clock: Clock = time.monotonic) -> None:
        self.tokens = 0
        self._window_s = window_s
        self._clock = clock
        self._marks: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            self.tokens += n
            now = self._clock()
            marks = self._marks
            if len(marks) >= 2 and now - marks[-2][0] < MARK_EVERY_S:
                marks[-1] = (now, self.tokens)  # the newest mark moves on (see MARK_EVERY_S)
            else:
                marks.append((now, self.tokens))
            while len(marks) > 2 and marks[1][0] < now - self._window_s:
                marks.popleft()

    def rate(self, since: int = 0) -> float:
        """Tokens per second lately (0.0 until two ticks are at least a second apart).

        With `since` (the count when a phase began), only the tokens after it: from the
        phase's first token to its last, so the burst of an earlier phase's calls is not read
        as this phase's speed."""
        with self._lock:
            marks = [m for m in self._marks if m[1] > since] if since else list(self._marks)
        if len(marks) < 2:
            return 0.0
        (t0, n0), (t1, n1) = marks[0], marks[-1]
        span = t1 - t0
        return (n1 - n0) / span if span >= 1.0 else 0.0


class Flag:
    """A flag one thread sets and another reads (a runtime thread stops at the next token):
    `threading.Event`'s `set`/`is_set` without its lock and condition, which nobody waits on
    here. Two Events a call were 2% of an optimize run's samples."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class CallProgress:
    """Progress of one call (all its attempts): written by the provider, read by the watchdog.

    Attributes:
        started_at: when the model began on the current attempt (after any queue).
        first_at: when its first token came (None: not yet, or not streamed).
        streams: True once the provider reports tokens for the current attempt (only then
            does the stall rule apply; otherwise the attempt timeout does).
        last: when the attempt last showed life (its start, then each token).
        tokens: tokens of the current attempt.
        queued_s: time spent waiting for the model's slot, over all attempts.
        cancelled: set when the attempt is abandoned, so a runtime thread can stop.
        plain_s: set by the call layer when the call may be asked without streaming
            (`deadlines.plain_window`): the attempt is then cut after this long. Cleared when
            an attempt fails, so retries stream.
        plain: True when the provider asked the current attempt without streaming.
    """

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        meter: TokenMeter | None = None,
        plain_s: float | None = None,
    ) -> None:
        self._clock = clock
        self._meter = meter
        self.streams = False
        self.last = self.started_at = clock()
        self.first_at: float | None = None
        self.tokens = 0
        self.queued_s = 0.0
        self.queued_since: float | None = None
        self.cancelled = Flag()
        self.plain_s = plain_s
        self.plain = False

    def new_attempt(self) -> None:
        self.streams = False
        self.plain = False
        self.tokens = 0
        self.first_at = None
        self.last = self.started_at = self._clock()
        self.cancelled = Flag()

    @contextlib.contextmanager
    def queued(self) -> Iterator[None]:
        """Around a wait for the model's slot: that time does not count against the call."""
        self.queued_since = self._clock()
        try:
            yield
        finally:
            now = self._clock()
            self.queued_s += now - (self.queued_since or now)
            self.queued_since = None
            self.last = self.started_at = now

    def streaming(self) -> None:
        """The provider will report tokens for this attempt (from now on)."""
        self.streams = True
        self.last = self._clock()

    def asked_plainly(self) -> None:
        """The provider asks this attempt without streaming (it may: `plain_s` is set)."""
        self.plain = True
        self.last = self._clock()

    def tick(self, n: int = 1) -> None:
        """`n` tokens (or any sign of life, n=0) arrived."""
        self.last = self._clock()
        if n and self.first_at is None:
            self.first_at = self.last
        self.tokens += n
        if self._meter is not None:
            self._meter.add(n)

    def waiting_s(self, now: float) -> float:
        """Queue time so far, the current wait included."""
        current = now - self.queued_since if self.queued_since is not None else 0.0
        return self.queued_s + current


CURRENT_PROGRESS: ContextVar[CallProgress | None] = ContextVar(
    "agentopt_call_progress", default=None
)
"""The progress of the call the current task is making (set by the attempt watchdog)."""


def current_progress() -> CallProgress | None:
    return CURRENT_PROGRESS.get()

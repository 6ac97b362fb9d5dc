"""One timer per event loop for every deadline in flight.

A model call's watchdog and an agent turn's deadline each armed a loop timer of their own
(`loop.call_later`, or `asyncio.timeout`) and cancelled it a moment later: nearly every call
ends long before its limit. That was 20 µs of the event loop's CPU per call (a timer handle,
a heap push, the cancelled handle's later cleanup), about 7% of a call through the call layer
against a zero-latency server. Here a watch is a dictionary entry: the loop's one timer is
re-armed only when a new watch falls due before it, and when it fires it asks the watches that
are due, each of which says when it next needs looking at.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
import weakref
from collections.abc import Callable

Check = Callable[[], float | None]
"""Asked when its watch falls due: seconds until it is due again, or None when it is done
(it acted, e.g. cancelled its task)."""
_RESOLUTION = time.get_clock_info("monotonic").resolution
"""How early the loop runs a timer (its clock's resolution, `BaseEventLoop._run_once`)."""


class _Alarms:
    """The watches of one event loop and the one timer that serves them all."""

    def __init__(self) -> None:
        self.watches: dict[int, tuple[float, Check]] = {}
        """Key → (loop time it is due, its check)."""
        self.timer: asyncio.TimerHandle | None = None
        self.at = math.inf
        self.ids = itertools.count()

    def watch(self, loop: asyncio.AbstractEventLoop, check: Check, wait: float) -> int:
        key = next(self.ids)
        at = loop.time() + wait
        self.watches[key] = (at, check)
        if at < self.at:
            self._arm(loop, at)
        return key

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.at = at
        self.timer = loop.call_at(at, self._wake, loop)

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        """Ask the watches that are due (the loop runs a timer up to its clock resolution
        early, as it does its own handles); re-arm for the soonest left."""
        self.timer, self.at = None, math.inf
        now = loop.time() + _RESOLUTION
        for key, (at, check) in list(self.watches.items()):
            if at > now or key not in self.watches:
                continue  # not due, or a check before it ended this watch
            try:
                wait = check()
            except Exception as exc:  # reported as a failed loop callback is; the rest go on
                loop.call_exception_handler(
                    {"message": "a watch's check failed; the watch ends", "exception": exc}
                )
                wait = None
            if wait is None:
                self.watches.pop(key, None)
            else:
                self.watches[key] = (loop.time() + max(0.0, wait), check)
        if self.watches:
            self._arm(loop, min(at for at, _ in self.watches.values()))


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Alarms] = (
    weakref.WeakKeyDictionary()
)


def watch(check: Check, wait: float) -> int:
    """Ask `check` in `wait` seconds (and then as it says) on the running loop, until it
    returns None or `unwatch` ends the watch. Returns the watch's key."""
    loop = asyncio.get_running_loop()
    alarms = _by_loop.get(loop)
    if alarms is None:
        alarms = _by_loop[loop] = _Alarms()
    return alarms.watch(loop, check, max(0.0, wait))


def unwatch(key: int) -> None:
    """End a watch of the running loop (nothing if it already ended)."""
    alarms = _by_loop.get(asyncio.get_running_loop())
    if alarms is not None:
        alarms.watches.pop(key, None)

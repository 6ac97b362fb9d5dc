"""A "still working" line when a long command has printed nothing for a while.

Plain (non-terminal) progress prints a line when something finishes; a hung agent or a slow
judge can then leave a CI log silent for minutes, which reads as a hang. A `Heartbeat` is a
daemon thread that calls `say(seconds_since_last_line)` whenever `quiet_s` passed without a
`beat()`; every line the caller prints should `beat()`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

HEARTBEAT_S = 15.0


class Heartbeat:
    """Calls `say` after `quiet_s` seconds without a `beat()`, then again every `quiet_s`."""

    def __init__(self, say: Callable[[float], None], *, quiet_s: float = HEARTBEAT_S) -> None:
        self._say = say
        self.quiet_s = quiet_s
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._last = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="agentopt-heartbeat", daemon=True)
        self._thread.start()

    def beat(self) -> None:
        """Something was printed: the silence starts again from now."""
        self._last = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)

    def _run(self) -> None:
        tick = min(1.0, self.quiet_s / 4)
        while not self._stop.wait(tick):
            silent = time.monotonic() - self._last
            if silent >= self.quiet_s:
                self._last = time.monotonic()
                try:
                    self._say(silent)
                except Exception:  # a closed stream must not kill the command
                    return

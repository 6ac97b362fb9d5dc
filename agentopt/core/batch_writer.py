"""One writer thread that takes items as they come and writes them in batches.

The run journal and the model-call cache both write something small for every unit or call. A
thread hop per write (`asyncio.to_thread`) costs a task, a future and two context switches each,
and an fsync or a SQLite transaction per item; here the event loop only queues the item and
goes on, and the thread writes everything queued so far at once (one `write` + one fsync, one
transaction), so under load a batch holds many items and an idle moment writes one at once.

Nothing binds it to an event loop, a process or the main thread: the thread starts on the first
item in whichever process uses the writer (a Ray actor holding the cache included) and ends with
`close()`. A writer may linger (`linger`): wait a few milliseconds after a batch's first item
so that items arriving one by one share a write. A failed batch is not lost silently: the
error is raised by the next `submit`, `flush` or `close`.

A submit takes no lock while the thread is busy: the item goes on a deque (appends and pops
are atomic) and only an idle thread is woken. With a lock per submit, the event loop waited on
the writer thread each time that thread held the lock while it waited for the GIL: 11-36 ms
of wall (3.6-5.2 ms of CPU) in 400-700 submits of a 0.5 s optimize run. The one case the
lock used to cover and no longer does: an item submitted by one thread while another closes
the writer may be left unwritten (every writer here is submitted to and closed by its owner).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
MAX_BATCH = 1024
"""Items after which a lingering batch is written at once."""
LINGER_S = 0.02
"""The linger of the run journal and the response cache (see `BatchWriter`)."""


class BatchWriter(Generic[T]):
    """Queue items from any thread; `write(batch)` runs on one daemon thread.

    Args:
        write: writes a batch (the items in submission order); runs on the writer thread.
        name: the thread's name (it shows in stack dumps).
        linger: seconds the thread waits after the first item of a batch for more to come
            (`flush` and `close` cut it short). Answers that trickle in one at a time (200 ms
            latency, 64 at once) made 575 journal batches of 1.7 lines in 3.4 s, each a write
            and an fsync; 20 ms of linger makes ~170 batches. A crash loses at most that
            much of the journal, which --resume plays again.
    """

    def __init__(
        self, write: Callable[[Sequence[T]], None], *, name: str, linger: float = 0.0
    ) -> None:
        self._write = write
        self._name = name
        self._linger = linger
        self._flushing = 0
        self._items: deque[T] = deque()
        self._cond = threading.Condition()
        self._taken = 0
        """Items the thread has taken off the queue (the thread alone counts them)."""
        self._written = 0
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._idle = False
        """The thread is waiting for items (only then does `submit` need to wake it)."""

    def submit(self, item: T) -> None:
        """Queue one item (returns at once)."""
        if self._error is not None or self._closing or self._thread is None:
            with self._cond:
                self._raise_error()
                if self._closing:
                    raise RuntimeError(f"{self._name} is closed")
                if self._thread is None:
                    self._items.append(item)
                    self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                    self._thread.start()
                    return
        self._items.append(item)
        # `_idle` is set under the lock before the thread looks at the queue, so an item
        # appended after that look finds it set and wakes the thread.
        if self._idle or len(self._items) >= MAX_BATCH:
            with self._cond:
                self._cond.notify_all()

    @property
    def pending(self) -> int:
        """Items queued or being written."""
        with self._cond:
            return self._submitted() - self._written

    def _submitted(self) -> int:
        """Items submitted so far (under the lock: the thread is not between taking items
        off the queue and counting them)."""
        return self._taken + len(self._items)

    def flush(self) -> None:
        """Block until every item submitted so far is written (raises a writer error)."""
        with self._cond:
            target = self._submitted()
            self._flushing += 1
            self._cond.notify_all()  # a lingering batch is written now
            try:
                while self._written < target and self._error is None:
                    self._cond.wait()
            finally:
                self._flushing -= 1
            self._raise_error()

    def wait(self) -> None:
        """Block until every item submitted so far is written or has failed, raising
        nothing: an error stays for this writer's own next call (another writer's thread
        waits here for what must reach the disk first)."""
        with self._cond:
            target = self._submitted()
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._written < target:
                    self._cond.wait()
            finally:
                self._flushing -= 1

    def begin_close(self) -> None:
        """Start writing what is queued and stopping, without waiting (`close` waits): the
        last batches of several writers then reach the disk side by side."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def close(self) -> None:
        """Write what is queued, stop the thread (idempotent; raises a writer error)."""
        self.begin_close()
        with self._cond:
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._cond:
            self._thread = None
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._idle = True  # before the look at the queue (see `submit`)
                while not self._items and not self._closing:
                    self._cond.wait()
                self._idle = False
                deadline = time.monotonic() + self._linger
                while (
                    not self._closing
                    and not self._flushing
                    and len(self._items) < MAX_BATCH
                    and (left := deadline - time.monotonic()) > 0
                ):
                    self._cond.wait(left)
                batch = [self._items.popleft() for _ in range(len(self._items))]
                self._taken += len(batch)
                if not batch and self._closing:
                    return
            try:
                self._write(batch)
            except BaseException as exc:  # reported to the next caller, never swallowed
                with self._cond:
                    self._error = exc
                    self._written += len(batch)
                    self._cond.notify_all()
                continue
            with self._cond:
                self._written += len(batch)
                self._cond.notify_all()

"""The run's process pool: the second core for evaluators that burn CPU (evaluators/
code_worker.py decides which; this owns the processes).

Nothing starts until an evaluator is first sent here, so a run without CPU-bound user code
never pays for a worker. Workers are spawned (not forked: the event loop and the writer threads
are not copied), one per CPU. Each leads its own process group, carries agentopt's marker and is
registered with the process guard, so it never outlives agentopt, however agentopt ends; on
Linux it also asks the kernel for SIGKILL when its parent dies. A worker that crashed (a
segfault in user code) breaks only the call it was running: the next call gets a fresh pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from agentopt.agents.process_guard import MARKER, register, unregister
from agentopt.core.errors import ConfigError

PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 2.0
WORKERS_ENV = "AGENTOPT_EVALUATOR_PROCESSES"
"""Worker processes for CPU-bound evaluators (default: one per CPU; 0 keeps them on a thread)."""


def _worker_init() -> None:
    """In each worker: its own process group, and death with its parent (Linux)."""
    with contextlib.suppress(OSError):
        os.setsid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def pool_from_env(environ: dict[str, str] | None = None) -> CpuPool | None:
    """The run's pool as `AGENTOPT_EVALUATOR_PROCESSES` asks (None: `0`, no pool)."""
    raw = (os.environ if environ is None else environ).get(WORKERS_ENV, "").strip()
    if not raw:
        return CpuPool()
    try:
        workers = int(raw)
    except ValueError:
        raise ConfigError(
            f"{WORKERS_ENV} must be a whole number of processes, found {raw!r}",
            hint="unset it (one worker per CPU), or 0 to keep code evaluators on a thread",
        ) from None
    return CpuPool(workers) if workers > 0 else None


class CpuPool:
    """`await pool(fn, *args)` runs `fn(*args)` in a worker process (the `Offload` of
    `evaluators.base.BuildContext`)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._executor: ProcessPoolExecutor | None = None
        self._registered: set[int] = set()

    async def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        executor = self._start()
        future = asyncio.get_running_loop().run_in_executor(executor, fn, *args)
        self._register()
        try:
            return await future
        except BrokenProcessPool:
            self._stop(executor)  # the next call starts a fresh pool
            raise

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # Spawned workers inherit os.environ: the marker tells the process guard's
            # watcher that they are agentopt's (it reads it from /proc).
            os.environ.setdefault(MARKER, str(os.getpid()))
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
            )
        return self._executor

    def _register(self) -> None:
        """Register the workers started so far (each leads its own group) with the guard."""
        if len(self._registered) >= self.workers:
            return
        for child in multiprocessing.active_children():
            if child.pid is not None and child.pid not in self._registered:
                register(child.pid)
                self._registered.add(child.pid)

    def _stop(self, executor: ProcessPoolExecutor) -> None:
        """Stop the workers now: a call still running (user code in a loop) is not waited
        for, its process is terminated, then killed."""
        if self._executor is executor:
            self._executor = None
        executor.shutdown(wait=False, cancel_futures=True)
        workers = [c for c in multiprocessing.active_children() if c.pid in self._registered]
        for child in workers:
            child.terminate()
        for child in workers:
            child.join(STOP_GRACE_S)
            if child.is_alive():
                child.kill()
                child.join(STOP_GRACE_S)
        for pid in self._registered:
            unregister(pid)
        self._registered = set()

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        if self._executor is not None:
            executor = self._executor
            self._stop(executor)

"""Leaving the process without the interpreter's teardown.

After a run of 1,000 tasks the interpreter spends 0.1-0.2 s freeing 600 modules and every
object they hold before the shell gets its prompt back (measured in bench/run_overhead: 5% of
the ideal wall time of a 200 ms x 64 run). Nothing in that teardown is ours to wait for once
the command has returned: results are written atomically and fsynced, the cache writer has
committed, the agents' processes are stopped. So the entry point flushes what is buffered,
runs the `atexit` handlers (the process guard, logging's shutdown) and ends with `os._exit`.

It falls back to the normal exit while a non-daemon thread still runs, since Python would wait
for it (a user's tool, a library's worker), and it is used only by the console entry point,
never when the CLI is called in-process.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def exit_status(code: object) -> int:
    """The status `SystemExit(code)` ends a process with (a message means 1, after printing)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more can be shown
            pass


def _waiting_threads() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def exit_now(code: object) -> NoReturn:
    """End the process with `code` as `SystemExit(code)` would, minus the teardown."""
    if _waiting_threads():
        raise SystemExit(code)
    status = exit_status(code)
    _flush()
    atexit._run_exitfuncs()
    _flush()
    os._exit(status)

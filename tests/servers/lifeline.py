"""`python -m tests.servers.lifeline URL PROGRAM ARGS...`: print `listening URL`, ask the
kernel to kill this process when its parent (pytest) dies, then become PROGRAM.

PR_SET_PDEATHSIG survives exec, so a server that never reads its stdin (LiteLLM's proxy) still
cannot outlive the test session.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main() -> None:
    url, program, *args = sys.argv[1:]
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    print(f"listening {url}", flush=True)
    os.execv(program, [program, *args])


if __name__ == "__main__":
    main()

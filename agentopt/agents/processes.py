"""Starting and stopping the user's agent processes without leaving orphans.

Each process gets its own process group (a new session on POSIX), so stopping it also stops
whatever it spawned (`npm start` → node, `uv run` → python): SIGTERM to the group, a grace
period, then SIGKILL. Every group is registered with `process_guard`, which stops it when
agentopt ends another way (SIGTERM, SIGHUP, SIGKILL, an exit that skipped a stop). Output
goes to a temporary log file rather than a pipe, so a chatty agent can never block on a full
pipe, and the tail of the log explains a failed start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

from agentopt.agents import process_guard

STOP_GRACE_S = 5.0
_POSIX = sys.platform != "win32"


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command line as argv: a string is shell-split, a list is taken as is."""
    if isinstance(command, str):
        return shlex.split(command, posix=_POSIX)
    return [str(part) for part in command]


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    stdin: Any = asyncio.subprocess.DEVNULL,
    stdout: Any = asyncio.subprocess.DEVNULL,
    stderr: Any = asyncio.subprocess.DEVNULL,
) -> asyncio.subprocess.Process:
    """Start `argv` in its own process group. Raises OSError when it cannot be started."""
    extra: dict[str, Any] = {"start_new_session": True} if _POSIX else {}
    if not _POSIX:
        import subprocess

        extra["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=process_guard.child_env(dict(env)),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        **extra,
    )
    process_guard.register(process.pid)
    return process


def signal_group(pid: int, sig: int) -> None:
    """Send `sig` to the process group led by `pid` (ignore it when already gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if _POSIX:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def kill_group_now(pid: int) -> None:
    """Last resort, safe to call from a finalizer: SIGKILL the whole group."""
    signal_group(pid, signal.SIGKILL if _POSIX else signal.SIGTERM)
    process_guard.unregister(pid)


def release(process: asyncio.subprocess.Process) -> None:
    """After the leader exited by itself: kill what it left in its group, stop guarding it."""
    kill_group_now(process.pid)


async def stop(process: asyncio.subprocess.Process, grace_s: float = STOP_GRACE_S) -> None:
    """Terminate the process group, wait up to `grace_s`, then kill it; always reaps.

    SIGTERM is sent before the first await, so even a cancelled stop has asked it to exit.
    """
    if process.returncode is None:
        signal_group(process.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), grace_s)
    # The leader may be gone while its children still hold the group: kill what is left.
    kill_group_now(process.pid)
    if process.returncode is None:
        await process.wait()


async def wait_for_port(
    process: asyncio.subprocess.Process, port: int, timeout_s: float, host: str = "127.0.0.1"
) -> str | None:
    """Poll until something accepts connections on `port`.

    Returns None when ready, else why not (the process exited, or the time ran out).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        if process.returncode is not None:
            return f"it exited with code {process.returncode} before listening on port {port}"
        if await port_open(port, host):
            return None
        if loop.time() >= deadline:
            return f"it did not listen on port {port} within {timeout_s:g} s"
        await asyncio.sleep(0.1)


async def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on host:port right now."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(log: IO[bytes] | None, lines: int = 20) -> str:
    """The last `lines` lines written to a log file opened in binary mode."""
    if log is None:
        return ""
    with contextlib.suppress(OSError, ValueError):
        log.flush()
        log.seek(0)
        text = log.read().decode("utf-8", errors="replace")
        return "\n".join(text.rstrip().splitlines()[-lines:])
    return ""

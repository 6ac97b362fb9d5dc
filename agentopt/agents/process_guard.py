"""Child processes never outlive agentopt, whatever ends it (issue 14).

Every child agentopt starts (hosted agents, command targets, MCP servers) leads its own
process group, so one `killpg` stops it and whatever it spawned. Three guards cover the three
ways agentopt can end:

- **normal exit / Ctrl-C**: the targets stop their processes; `atexit` kills any group a path
  forgot;
- **SIGTERM / SIGHUP** (`timeout`, CI cancellation, `docker stop`, a closed terminal): the CLI's
  handler sends SIGTERM to every group, then lets the signal end agentopt as usual (exit 143);
- **SIGKILL** (nothing runs in agentopt any more): a *lifeline* — a tiny watcher process that
  holds the read end of a pipe whose write end only agentopt holds. The kernel closes that end
  when agentopt dies, however it dies; the watcher then stops the registered groups (SIGTERM,
  a grace period, SIGKILL) and exits.

Children carry `AGENTOPT_PARENT_PID` in their environment. The watcher only signals a group
that still has a process carrying agentopt's pid there (Linux: read from /proc), so a process
group id the system reused for something else is never touched; the same marker lets a port
held by a child of an agentopt that was killed be reported with its PID (`port_owner`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

MARKER = "AGENTOPT_PARENT_PID"
LIFELINE_GRACE_S = 3.0
_POSIX = sys.platform != "win32"

_WATCHER = r"""
import os, select, signal, sys, time
parent, grace = int(sys.argv[1]), float(sys.argv[2])
me = os.getpid()
marker = ("AGENTOPT_PARENT_PID=%d" % parent).encode()
groups, tree = set(), {}
def started(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
def children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out
def snapshot():
    for pid in [p for p, st in tree.items() if started(p) != st]:
        del tree[pid]
    todo, seen = children(parent), set()
    while todo:
        pid = todo.pop()
        if pid == me or pid in seen:
            continue
        seen.add(pid)
        st = started(pid)
        if st is not None:
            tree[pid] = st
        todo += children(pid)
def marked(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as fh:
            return marker in fh.read().split(b"\0")
    except OSError:
        return False
def ours(group):
    if not os.path.isdir("/proc"):
        return True
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getpgid(int(pid)) == group and marked(int(pid)):
                return True
        except OSError:
            continue
    return False
fd, buf = sys.stdin.fileno(), b""
while True:
    ready = select.select([fd], [], [], 0.5 if groups else None)[0]
    if ready:
        data = os.read(fd, 65536)
        if not data:
            break
        *lines, buf = (buf + data).split(b"\n")
        for line in lines:
            line = line.strip()
            if line[:1] == b"+":
                groups.add(int(line[1:]))
            elif line[:1] == b"-":
                groups.discard(int(line[1:]))
    if groups and os.path.isdir("/proc"):
        snapshot()
targets = [g for g in groups if ours(g)]
procs = [p for p, st in tree.items() if started(p) == st]
if os.path.isdir("/proc"):
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    procs += [p for p in pids if p != me and marked(p)]
def running(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False
def alive():
    for g in targets:
        try:
            os.killpg(g, 0)
            return True
        except OSError:
            pass
    return any(running(p) for p in procs)
for sig in (signal.SIGTERM, signal.SIGKILL):
    for g in targets:
        try:
            os.killpg(g, sig)
        except OSError:
            pass
    for p in procs:
        try:
            os.kill(p, sig)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while sig == signal.SIGTERM and time.monotonic() < deadline:
        if not alive():
            break
        time.sleep(0.05)
"""


class _Guard:
    """The groups this process started and the lifeline watching them."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self._lock = threading.Lock()
        self._pipe: IO[bytes] | None = None
        self._watcher: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self.adopting = False
        """Whether this process is a child subreaper (`become_subreaper`)."""

    def _send(self, line: str) -> None:
        if not _POSIX:
            return
        if self._pipe is None or self._owner != os.getpid():
            self._start_watcher()
        with contextlib.suppress(OSError, ValueError):
            assert self._pipe is not None
            self._pipe.write(line.encode() + b"\n")
            self._pipe.flush()

    def _start_watcher(self) -> None:
        self._owner = os.getpid()
        self._watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHER, str(os.getpid()), str(LIFELINE_GRACE_S)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in the terminal must not end the watcher first
            close_fds=True,
        )
        self._pipe = self._watcher.stdin

    def add(self, pid: int) -> None:
        with self._lock:
            self.groups.add(pid)
            self._send(f"+{pid}")

    def discard(self, pid: int) -> None:
        with self._lock:
            if pid in self.groups:
                self.groups.discard(pid)
                self._send(f"-{pid}")

    def close(self) -> None:
        """End the lifeline cleanly (normal exit): the watcher sees EOF with nothing left."""
        pipe, watcher = self._pipe, self._watcher
        self._pipe = self._watcher = None
        with contextlib.suppress(OSError, ValueError):
            if pipe is not None:
                pipe.close()
        if watcher is not None:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                watcher.wait(timeout=LIFELINE_GRACE_S + 2)

    def signal_all(self, sig: int) -> None:
        for pid in list(self.groups):
            with contextlib.suppress(OSError):
                os.killpg(pid, sig)


GUARD = _Guard()


def child_env(env: dict[str, str]) -> dict[str, str]:
    """The environment of a child: `env` plus the marker naming this agentopt process."""
    return {**env, MARKER: str(os.getpid())}


def register(pid: int) -> None:
    """`pid` leads a new process group agentopt must stop before it is gone."""
    if _POSIX:
        GUARD.add(pid)


def unregister(pid: int) -> None:
    """The group was stopped (or its leader exited and the leftovers were killed)."""
    GUARD.discard(pid)


def register_new_children() -> list[int]:
    """Register the session-leader children this process has that are not registered yet
    (MCP servers, which the `mcp` SDK starts itself). Linux only: elsewhere, nothing."""
    found = [pid for pid in session_children() if pid not in GUARD.groups]
    for pid in found:
        register(pid)
    return found


def session_children() -> list[int]:
    """Pids of this process's children that lead their own process group (from /proc)."""
    me = os.getpid()
    out: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            ppid, pgid = int(fields[1]), int(fields[2])
            if ppid == me and pgid == int(entry.name):
                out.append(pgid)
    return out


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (Linux): a helper that
    a hosted agent starts in its own session (`setsid`) escapes the agent's process group,
    and when the agent ends it is re-parented here instead of to init, so it stays among
    this process's descendants and is ended with them (`end_descendants`)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


PR_SET_CHILD_SUBREAPER = 36


def descendants(root: int | None = None) -> list[int]:
    """Every process below `root` (default: this one), from /proc's children lists; the
    lifeline watcher left out (it must outlive us to do its work)."""
    root = os.getpid() if root is None else root
    skip = {GUARD._watcher.pid} if GUARD._watcher is not None else set()
    out: list[int] = []
    todo = _children(root)
    while todo:
        pid = todo.pop()
        if pid in skip or pid in out:
            continue
        out.append(pid)
        todo += _children(pid)
    return out


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(x) for x in (task / "children").read_text().split()]
    return found


def end_descendants(sig: int) -> None:
    """Send `sig` to every descendant: the groups agentopt started and whatever escaped
    them (a `setsid` grandchild, re-parented here when its parent ended)."""
    GUARD.signal_all(sig)
    if not _POSIX:
        return
    for pid in descendants():
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _on_exit() -> None:
    if GUARD._owner != os.getpid():
        return  # a forked child inherited the guard; the parent's exit handles it
    if GUARD.groups or GUARD.adopting:
        end_descendants(signal.SIGKILL if _POSIX else signal.SIGTERM)
    GUARD.close()


atexit.register(_on_exit)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP stop every child group, then end agentopt by that signal (so the
    exit status is the usual 128 + signal). Call from the main thread of the CLI."""
    if not _POSIX or threading.current_thread() is not threading.main_thread():
        return

    GUARD.adopting = become_subreaper()

    def handler(signum: int, frame: Any) -> None:
        end_descendants(signal.SIGTERM)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:  # `nohup` (SIG_IGN) keeps its meaning
            signal.signal(sig, handler)


@dataclass(frozen=True)
class PortOwner:
    """The process listening on a port, as the "port in use" error names it."""

    pid: int
    description: str
    """ "PID 1234 (python agent.py), an agent process started by agentopt PID 987, which is
    no longer running" """


def port_owner(port: int) -> PortOwner | None:
    """Who listens on `port` (Linux only: read from /proc); None when it cannot be told."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return PortOwner(int(entry.name), _describe(int(entry.name)))
    return None


def _listening_inodes(port: int) -> set[str]:
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                cols = row.split()
                if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                    found.add(cols[9])
    return found


def _describe(pid: int) -> str:
    proc = Path("/proc") / str(pid)
    try:
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        command = " ".join(a.decode("utf-8", "replace") for a in argv if a)[:120]
    except OSError:
        command = "?"
    text = f"PID {pid} ({command})"
    try:
        env = (proc / "environ").read_bytes().split(b"\0")
    except OSError:
        return text
    parent = next((e.split(b"=", 1)[1] for e in env if e.startswith(MARKER.encode() + b"=")), None)
    if parent is None:
        return text
    ppid = int(parent)
    alive = ppid == os.getpid() or Path(f"/proc/{ppid}").exists()
    state = "still running" if alive else "no longer running"
    return f"{text}, an agent process started by agentopt PID {ppid}, which is {state}"

"""Run one command in its own wrapper process and report what its process tree cost.

`RUSAGE_CHILDREN` is cumulative over every child a process ever reaped, and its `ru_maxrss` is a
maximum over all of them: measured from the benchmark process, a second tool's peak would hide
behind the first's. So each measurement happens in a fresh `python -c` wrapper whose only child
is the tool; it reports its own `RUSAGE_CHILDREN` (user + sys CPU of the tool and every
descendant it reaped, and the largest single RSS among them) and the wall time around the tool.
The fake model server lives in the benchmark process, so its CPU is never counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Runs inside the wrapper. The tool gets its own session so a timeout kills its whole tree.
# The exit is waited for by a blocking waitpid, the timeout kept by a timer: `wait(timeout=)`
# polls with sleeps of up to 50 ms, which rounded every wall time up by as much.
_WRAPPER = r"""
import json, os, resource, signal, subprocess, sys, threading, time
spec = json.loads(sys.argv[1])
with open(spec["stdout"], "w") as out, open(spec["stderr"], "w") as err:
    started, t0 = time.monotonic(), time.perf_counter()
    proc = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=spec["env"],
                            stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                            start_new_session=True)
    expired = threading.Event()
    def kill():
        expired.set()
        os.killpg(proc.pid, signal.SIGKILL)
    timer = threading.Timer(spec["timeout"], kill)
    timer.daemon = True
    timer.start()
    code = proc.wait()
    wall, ended = time.perf_counter() - t0, time.monotonic()
    timer.cancel()
    timed_out = expired.is_set()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"exit": code, "timed_out": timed_out, "wall": wall,
                  "cpu_user": ru.ru_utime, "cpu_sys": ru.ru_stime, "maxrss_kb": ru.ru_maxrss,
                  "started": started, "ended": ended}))
"""


@dataclass(frozen=True)
class Measurement:
    """What one run of a tool cost."""

    exit_code: int
    timed_out: bool
    wall_s: float
    """Seconds from spawning the tool to its exit (startup and shutdown included)."""
    cpu_s: float
    """User + system CPU seconds of the tool's whole process tree."""
    peak_mb: float
    """Largest resident set of any one process in the tree, in MiB (Linux reports KiB)."""
    stdout: Path
    stderr: Path
    started: float = 0.0
    """`time.monotonic()` when the tool was spawned, and (`ended`) when it had exited: Linux's
    monotonic clock is one for every process, so a fake server in the benchmark process can
    place its own readings (its first and last request) inside the tool's run."""
    ended: float = 0.0

    def tail(self, chars: int = 600) -> str:
        """The end of the tool's output, for a failure message, minus runtime chatter."""
        lines: list[str] = []
        for path in (self.stdout, self.stderr):
            if path.exists():
                text = path.read_text(errors="replace")
                lines += [ln for ln in text.splitlines() if ln.strip() and not _noise(ln)]
        return "\n".join(lines)[-chars:]


_NOISE = ("ExperimentalWarning", "--trace-warnings", "Node.js 20 support")


def _noise(line: str) -> bool:
    """Warnings every promptfoo run prints on Node 20, which say nothing about a failure."""
    return any(marker in line for marker in _NOISE)


def measure(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, logs: Path, label: str
) -> Measurement:
    """Run `argv` to completion (or kill it after `timeout` s) and measure it.

    The tool's stdout and stderr go to `<logs>/<label>.out` / `.err`.
    """
    logs.mkdir(parents=True, exist_ok=True)
    stdout, stderr = logs / f"{label}.out", logs / f"{label}.err"
    spec = {
        "argv": argv,
        "cwd": str(cwd),
        "env": env,
        "timeout": timeout,
        "stdout": str(stdout),
        "stderr": str(stderr),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=timeout + 60,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"measurement wrapper failed for {label}: {proc.stderr[-800:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return Measurement(
        exit_code=int(data["exit"]),
        timed_out=bool(data["timed_out"]),
        wall_s=float(data["wall"]),
        cpu_s=float(data["cpu_user"]) + float(data["cpu_sys"]),
        peak_mb=float(data["maxrss_kb"]) / 1024,
        stdout=stdout,
        stderr=stderr,
        started=float(data["started"]),
        ended=float(data["ended"]),
    )

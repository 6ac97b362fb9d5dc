"""A local Ray instance that never outlives agentopt.

`ray.init()` started in agentopt's own process would leave some of Ray's processes running
when agentopt is killed with SIGKILL (measured with ray 2.60: its dashboard and runtime-env
agents survived their raylet). So agentopt starts Ray in a child, `python -m
agentopt.workflows.cluster.ray_host`, in a session of its own, and connects to it as a driver.
The host ends that whole session — every Ray process and whatever they started (Ray's workers
put themselves in process groups of their own, but stay in the session) — when its lifeline
(standard input, a pipe from agentopt) closes, which happens however agentopt ends, SIGKILL
included; on Linux a parent-death signal is a second trigger.

The instance listens on 127.0.0.1 only (Ray's single-machine mode), with Ray's token
authentication and a token made for this instance alone: a stale token another Ray left in
~/.ray is never used. Ray reads both settings from the environment when it is imported, so the
driver applies `driver_env` before its first `import ray`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import secrets
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from agentopt.core.errors import AgentError

START_TIMEOUT_S = 180.0
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
"""Ray's single-machine mode: every process binds 127.0.0.1 (as it does on macOS/Windows)."""
STOP_TIMEOUT_S = 20.0


class LocalRayHost:
    """The child process hosting a local Ray instance (see the module docstring)."""

    def __init__(
        self, process: subprocess.Popen[bytes], address: str, log: Path | None, token: str
    ) -> None:
        self.process = process
        self.address = address
        self.log = log
        self.driver_env = {**LOOPBACK_ENV, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
        """What a driver's environment needs to connect (read when ray is imported)."""

    @classmethod
    def start(
        cls, *, num_cpus: int | None = None, temp_dir: Path | None = None, log: Path | None = None
    ) -> LocalRayHost:
        """Start the host and wait until Ray is up; raises AgentError naming the log."""
        from agentopt.agents import process_guard  # not in the host itself: it stays light

        argv = [sys.executable, "-m", "agentopt.workflows.cluster.ray_host"]
        if num_cpus:
            argv += ["--num-cpus", str(num_cpus)]
        if temp_dir:
            argv += ["--temp-dir", str(temp_dir)]
        token = secrets.token_hex(32)
        env = {**os.environ, **LOOPBACK_ENV, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
        env = process_guard.child_env(env)
        stderr: IO[bytes] | int = subprocess.DEVNULL
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            stderr = open(log, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                start_new_session=True,
            )
        finally:
            if not isinstance(stderr, int):
                stderr.close()
        process_guard.register(process.pid)  # SIGTERM/SIGHUP of agentopt reach the host too
        assert process.stdout is not None
        address = _read_address(process, process.stdout)
        if address is None:
            cls(process, "", log, token).stop()
            where = f" (see {log})" if log else ""
            raise AgentError(
                f"the local Ray instance did not start within {START_TIMEOUT_S:g} s{where}",
                hint="pass --ray-address to use a running cluster, or --executor local",
            )
        return cls(process, address, log, token)

    def stop(self) -> None:
        """Close the lifeline and wait for the host to end its group; force it if it hangs."""
        from agentopt.agents import process_guard

        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_TIMEOUT_S)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_TIMEOUT_S)
        process_guard.unregister(self.process.pid)
        if self.process.stdout is not None:
            self.process.stdout.close()


def _read_address(process: subprocess.Popen[bytes], stdout: IO[bytes]) -> str | None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stdout], [], [], 0.5)
        if ready:
            line = stdout.readline()
            if not line:
                return None
            with contextlib.suppress(ValueError):
                return str(json.loads(line)["address"])
        elif process.poll() is not None:
            return None
    return None


def _die_with_parent() -> None:
    """Linux: SIGTERM when agentopt dies (the lifeline's second trigger)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def session_members(sid: int) -> list[int]:
    """Live processes of session `sid` (Linux /proc; empty elsewhere)."""
    members = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


def _end_group(*_: object) -> None:
    """Kill this session: every Ray process, whatever they started, and this host last."""
    me = os.getpid()
    for pid in session_members(os.getsid(0)):
        if pid != me:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    os.killpg(os.getpgid(0), signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentopt.workflows.cluster.ray_host")
    parser.add_argument("--num-cpus", type=int, default=None)
    parser.add_argument("--temp-dir", default=None)
    args = parser.parse_args(argv)
    parent = os.getppid()
    _die_with_parent()
    _on_signals()
    if os.getppid() != parent:  # agentopt died before the parent-death signal was set
        _end_group()
    try:
        import ray

        ray.init(
            num_cpus=args.num_cpus,
            include_dashboard=False,
            _temp_dir=args.temp_dir,
            logging_level=logging.WARNING,
            log_to_driver=False,
        )
        # ray.init installs its own SIGTERM handler (exit without ending its agents): ours win.
        _on_signals()
        address = ray.get_runtime_context().gcs_address
        sys.stdout.write(json.dumps({"address": address}) + "\n")
        sys.stdout.flush()
        sys.stdin.buffer.read()  # returns when the lifeline closes, however agentopt ended
        signal.signal(signal.SIGALRM, _end_group)
        signal.alarm(int(STOP_TIMEOUT_S / 2))  # a shutdown that hangs ends the group anyway
        with contextlib.suppress(Exception):
            ray.shutdown()
    finally:
        _end_group()
    return 0


def _on_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _end_group)


if __name__ == "__main__":
    sys.exit(main())

"""No agent process outlives agentopt (issue 14 item 4): a hosted agent and the helper it
started are gone after agentopt ends by SIGTERM (what `timeout`, CI cancellation and
`docker stop` send), SIGHUP, SIGINT and even SIGKILL; and a port still held by a child of a
killed agentopt is reported with its PID."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentopt.agents import process_guard
from tests.signals import default_stop_signals

FIXTURES = Path(__file__).parent / "fixtures"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_until(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def start_run(tmp_path: Path, port: int) -> tuple[subprocess.Popen[bytes], Path]:
    """`agentopt eval run` on a hosted agent busy answering (its handler sleeps 60 s)."""
    pidfile = tmp_path / "pids.txt"
    agent = f"{sys.executable} {FIXTURES / 'spawning_agent.py'}"
    (tmp_path / "eval.yaml").write_text(
        "name: lifetime\n"
        f"agent: {{name: a, kind: hosted, target: hosted, command: '{agent}', port: {port},\n"
        "        instruction: Be brief.}\n"
        "dataset: {local_uri: tasks.jsonl}\n"
        "options: {max_errors: 5}\n"
    )
    (tmp_path / "tasks.jsonl").write_text(
        json.dumps({"name": "t", "query": "sleep", "ground_truth": "x"}) + "\n"
    )
    log = tmp_path / "agentopt.log.txt"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(tmp_path), "eval", "run",
             "--evaluator", "ExactMatch"],
            env={**os.environ, "PIDFILE": str(pidfile)},
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=default_stop_signals,
        )  # fmt: skip
    assert wait_until(lambda: pidfile.exists() and pidfile.read_text().endswith("\n")), (
        log.read_text()
    )
    assert wait_until(lambda: _listening(port))
    time.sleep(0.5)  # the request is in flight
    return proc, pidfile


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "codes"),
    [
        (signal.SIGTERM, {-signal.SIGTERM, 143}),
        (signal.SIGHUP, {-signal.SIGHUP, 129}),
        (signal.SIGINT, {130}),
        (signal.SIGKILL, {-signal.SIGKILL}),
    ],
    ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"],
)
def test_no_agent_process_outlives_agentopt(tmp_path: Path, sig: int, codes: set[int]) -> None:
    port = free_port()
    proc, pidfile = start_run(tmp_path, port)
    agent_pid, helper_pid = (int(p) for p in pidfile.read_text().split())
    try:
        proc.send_signal(sig)
        proc.wait(timeout=60)
        assert proc.returncode in codes
        assert wait_until(lambda: not alive(agent_pid) and not alive(helper_pid), 15), (
            f"left running: agent {alive(agent_pid)}, helper {alive(helper_pid)}"
        )
        assert wait_until(lambda: not _listening(port), 5)
    finally:
        for pid in (agent_pid, helper_pid):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_port_held_by_a_stale_agent_process_is_reported_with_its_pid(tmp_path: Path) -> None:
    port = free_port()
    stale = subprocess.Popen(
        [sys.executable, str(FIXTURES / "hosted_agent.py")],
        env={**os.environ, "PORT": str(port), "OPTIMIZATION_CONFIG": "{}",
             process_guard.MARKER: "999999999"},  # an agentopt that is gone
        start_new_session=True,
    )  # fmt: skip
    try:
        assert wait_until(lambda: _listening(port))
        owner = process_guard.port_owner(port)
        assert owner is not None and owner.pid == stale.pid
        assert "started by agentopt PID 999999999, which is no longer running" in owner.description
    finally:
        stale.kill()
        stale.wait()

"""Item 8 of issue 38: a helper the hosted agent starts in its own session (`setsid`) escapes
the agent's process group, and outlived agentopt in 4 of 4 runs. agentopt is now the child
subreaper of what it starts (such a helper is re-parented to it, not to init) and ends every
descendant on exit and SIGTERM; after a SIGKILL the lifeline watcher ends what it saw below
agentopt and every process carrying agentopt's marker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.test_process_lifetime import _listening, alive, free_port, wait_until
from tests.hardening.conftest import subprocess_env
from tests.signals import default_stop_signals

FIXTURES = Path(__file__).parent / "fixtures"


def _start(tmp_path: Path, port: int, query: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    pidfile = tmp_path / "pids.txt"
    agent = f"{sys.executable} {FIXTURES / 'escaping_agent.py'}"
    (tmp_path / "eval.yaml").write_text(
        "name: escape\n"
        f"agent: {{name: a, kind: hosted, target: hosted, command: '{agent}', port: {port},\n"
        "        instruction: Be brief.}\n"
        "dataset: {local_uri: tasks.jsonl}\n"
        "options: {max_errors: 5}\n"
    )
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"name": "t", "query": query}) + "\n")
    log = tmp_path / "agentopt.log.txt"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(tmp_path), "eval", "run",
             "--evaluator", "ExactMatch"],
            env=subprocess_env(PIDFILE=str(pidfile)),
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=default_stop_signals,
        )  # fmt: skip
    assert wait_until(lambda: pidfile.exists() and pidfile.read_text().endswith("\n")), (
        log.read_text()
    )
    return proc, pidfile, log


def _pids(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


def _reap(pids: list[int]) -> None:
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=["SIGTERM", "SIGKILL", "SIGINT"]
)
def test_a_setsid_grandchild_is_gone_after_agentopt_ends(tmp_path: Path, sig: int) -> None:
    port = free_port()
    proc, pidfile, log = _start(tmp_path, port, "sleep")
    pids = _pids(pidfile)
    try:
        assert wait_until(lambda: _listening(port))
        # The helpers really escaped: their own sessions, not the agent's group.
        assert os.getpgid(pids[1]) != os.getpgid(pids[0]) != os.getpgid(pids[2])
        wait_until(lambda: False, 1.0)  # the watcher has seen the tree, the request is in flight
        proc.send_signal(sig)
        proc.wait(timeout=60)
        left = [p for p in pids if wait_until(lambda p=p: not alive(p), 15) is False]
        assert not left, (
            f"left running: {left} of agent/helper/scrubbed {pids}\n{log.read_text()[-2000:]}"
        )
    finally:
        _reap(pids)


@pytest.mark.slow
def test_a_setsid_grandchild_is_gone_after_a_normal_exit(tmp_path: Path) -> None:
    port = free_port()
    proc, pidfile, log = _start(tmp_path, port, "hello")
    pids = _pids(pidfile)
    try:
        assert proc.wait(timeout=120) == 0, log.read_text()[-2000:]
        left = [p for p in pids if wait_until(lambda p=p: not alive(p), 15) is False]
        assert not left, f"left running: {left} of agent/helper/scrubbed {pids}"
    finally:
        _reap(pids)

"""Faults of the driver on Ray: the local Ray instance agentopt starts never outlives it, even
when agentopt is killed with SIGKILL, and `--resume` then repeats no answered call; Ctrl-C
cancels the units in flight on the cluster. (A resumed interrupted run is tested locally.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentopt.workflows.cluster.ray_host import session_members
from tests.cluster.conftest import Cluster, needs_ray, wait_gone
from tests.cluster.test_ray_eval_run import SUITE, cli, on_ray, results, write_tasks
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply
from tests.signals import default_stop_signals
from tests.workflows.fake_agent_server import last_user

pytestmark = [pytest.mark.slow, needs_ray]


def agentopt(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "eval", "run", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or {**os.environ, "CI": "1"},
        preexec_fn=default_stop_signals,
    )  # fmt: skip


def journal_lines(project: Path) -> int:
    runs = project / ".agentopt" / "runs"
    journal = list(runs.glob("*/journal.jsonl")) if runs.exists() else []
    return journal[0].read_text().count("\n") if journal else 0


def ray_host_of(pid: int, timeout: float = 120.0) -> int | None:
    """The pid of the `ray_host` child agentopt started (its process group id)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status and b"ray_host" in cmdline:
                return int(entry.name)
        time.sleep(0.1)
    return None


def test_a_sigkilled_driver_leaves_no_ray_process_and_resume_repeats_no_answered_call(
    tmp_path: Path, ray_cluster: Cluster
) -> None:
    """agentopt starts its own local Ray instance (no address), is SIGKILLed mid-run with a
    call in flight on a worker: nothing of that instance survives, and `--resume` (here on the
    test cluster) sends none of the calls answered before the kill."""
    project = tmp_path / "p"
    write_tasks(project, SUITE)
    hold = threading.Event()
    answered: list[str] = []
    lock = threading.Lock()
    with FakeOpenAI() as srv:

        def handler(req: RecordedRequest) -> Reply | None:
            query = last_user(req)
            if query == "item 10" and not hold.is_set():
                hold.wait(60)  # in flight on a worker when the driver is killed
                return None
            with lock:
                answered.append(query)
            return None

        srv.handler = handler
        suite = ["--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{srv.base_url}",
                 "--evaluator", "ExactMatch", "--concurrency", "1"]  # fmt: skip
        own_instance = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        proc = agentopt(project, *suite, "--executor", "ray", env={**own_instance, "CI": "1"})
        try:
            host = ray_host_of(proc.pid)
            assert host is not None, "agentopt started no local Ray instance"
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                if journal_lines(project) >= 10 and srv.count() >= 11:
                    break
                time.sleep(0.05)
            names = [_name(pid) for pid in session_members(host)]
            assert any("UnitWorker" in n for n in names), f"no Ray worker in the session: {names}"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            survivors = wait_gone(host, timeout=60)
        finally:
            hold.set()
            if proc.poll() is None:
                proc.kill()
        assert survivors == [], f"Ray processes outlived agentopt: {survivors}"
        before = list(answered)
        assert len(before) == 10, "the driver was not killed mid-run"
        run_id = next((project / ".agentopt" / "runs").iterdir()).name
        code, out = cli(project, "--resume", run_id, *on_ray(ray_cluster))
        assert code == 0, out
    resumed = answered[len(before) :]
    assert not set(resumed) & set(before), "a call answered before the kill was sent again"
    assert sorted(resumed) == sorted(f"item {i}" for i in range(10, SUITE))
    final = results(project)
    assert len(final["tasks"]) == SUITE and final["summary"]["passed"] == SUITE


def test_ctrl_c_stops_the_run_on_the_cluster(tmp_path: Path, ray_cluster: Cluster) -> None:
    project = tmp_path / "p"
    write_tasks(project, 12)
    release = threading.Event()
    with FakeOpenAI() as srv:
        # From the 5th request on, the server holds every call: units stay in flight.
        srv.handler = lambda req: (release.wait(60), None)[1] if srv.count() > 4 else None
        suite = ["--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{srv.base_url}",
                 "--evaluator", "ExactMatch", "--concurrency", "2"]  # fmt: skip
        proc = agentopt(project, *suite, *on_ray(ray_cluster))
        try:
            deadline = time.monotonic() + 120
            while journal_lines(project) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert journal_lines(project) >= 4
            proc.send_signal(signal.SIGINT)
            started = time.monotonic()
            code = proc.wait(timeout=60)
            stopped_in = time.monotonic() - started
        finally:
            release.set()
            if proc.poll() is None:  # a failed wait: no agentopt left for the next test
                proc.kill()
                proc.wait()
        assert code == 130
        assert stopped_in < 30, f"Ctrl-C took {stopped_in:.0f}s: the held units were awaited"
    run = next((project / ".agentopt" / "runs").iterdir())
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""

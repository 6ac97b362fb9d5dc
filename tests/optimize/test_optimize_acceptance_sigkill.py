"""Acceptance (optimizer issue): SIGKILL mid-job, then `--resume`: the job finishes and the
fake server saw no repeated request.

`agentopt optimize` runs as a real child process against a local OpenAI-compatible server
(tests/fake_openai.py) that plays the agent, the judge and the reflection model, told apart by
model name. One agent request of the search phase is held in flight; once the journal holds
the finished work before it, the child is killed with SIGKILL (no handler, no cleanup: a power
cut). `optimize --resume` must then finish the job while sending no request that the server
had answered before the kill — only the one in flight may come again — and end with exactly
the requests, candidates and outcome of the same job run without interruption.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.optimize.conftest import _QUOTED, make_project, phrase_verdicts, task

PHRASES = ("refund window", "tracking link", "order number")
HOLD_AGENT_REQUEST = 15
"""Baseline: 12 agent requests (6 validation + 6 train tasks); the 15th is the third task of
the first candidate's screening — deep enough that proposals and screenings are journaled."""
_INSTRUCTIONS = re.compile(r"<instructions-([0-9a-f]+)>\n(.*?)\n</instructions-\1>", re.S)
_MISSING = re.compile(r"does not mention '([^']+)'")


TRANSPORT = ("stream", "stream_options")
"""How an answer is sent, not what is asked: a command streams until it has seen the server
answer fast, then asks plainly (`models.deadlines.plain_window`), so which requests stream
depends on timing and on where the run restarted."""


def key(req: RecordedRequest) -> str:
    return json.dumps({k: v for k, v in req.body.items() if k not in TRANSPORT}, sort_keys=True)


def answer(req: RecordedRequest) -> Reply:
    """The agent says each quoted phrase of its system prompt; the judge checks phrases; the
    reflection model adds a rule for each phrase a judge found missing."""
    messages = req.body["messages"]
    prompt = "\n".join(m.get("content") or "" for m in messages)
    role = req.body["model"]
    if role == "judge":
        return text(phrase_verdicts(prompt))
    if role == "reflect":
        found = _INSTRUCTIONS.search(prompt)
        current = found.group(2) if found else ""
        missing = sorted(set(_MISSING.findall(prompt)) - set(_QUOTED.findall(current)))
        rules = "".join(f"\nAlways mention '{p}'." for p in missing)
        return text(json.dumps({"instructions": current + rules, "rationale": "add rules"}))
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    return text(f"Answer to {user}." + "".join(f" {p}." for p in _QUOTED.findall(system)))


def project_for(root: Path, base_url: str) -> Path:
    rows = [task(f"t{i:02d}", PHRASES[i % 3]) for i in range(15)]
    return make_project(
        root,
        rows,
        model=f"compat:agent@{base_url}",
        options={
            "eval_model": f"compat:judge@{base_url}",
            "optimization_model": f"compat:reflect@{base_url}",
            "max_concurrent_agent_runs": 1,
        },
    )


ARGS = ["--max-candidates", "3", "--parallel-proposals", "1", "--seed", "3"]


class Server:
    """The fake server's script, holding one agent request until released."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answered: list[str] = []
        """Bodies of the requests answered, in order (the held one is not among them)."""
        self.agent_requests = 0
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, req: RecordedRequest) -> Reply | None:
        if req.body["model"] == "agent":
            with self.lock:
                self.agent_requests += 1
                hold = self.agent_requests == HOLD_AGENT_REQUEST
            if hold:
                self.held.set()
                self.release.wait(60)  # in flight until the client is dead
                return text("too late")
        reply = answer(req)
        with self.lock:
            self.answered.append(key(req))
        return reply


def units_journaled(jobs: Path) -> int:
    journals = list(jobs.glob("*/journal.jsonl")) if jobs.exists() else []
    return journals[0].read_text().count('"kind":"unit"') if journals else 0


@pytest.mark.slow
def test_sigkill_then_resume_finishes_and_repeats_no_answered_request(tmp_path: Path) -> None:
    script = Server()
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = script
        project = project_for(tmp_path / "killed", srv.base_url)
        jobs = project / ".agentopt" / "optimize"
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(project), "optimize",
             *ARGS],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "CI": "1"},
        )  # fmt: skip
        try:
            assert script.held.wait(90), "the job never reached the request to hold"
            deadline = time.monotonic() + 30
            # Everything before the held request is answered and journaled (concurrency 1).
            while time.monotonic() < deadline:
                if units_journaled(jobs) >= HOLD_AGENT_REQUEST - 1 and srv.in_flight == 1:
                    break
                time.sleep(0.02)
            time.sleep(0.3)  # let the client take in the last answers it was sent
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            script.release.set()
        assert proc.returncode == -signal.SIGKILL
        job_dir = next(jobs.iterdir())
        assert json.loads((job_dir / "job.json").read_text())["status"] == "running"
        assert units_journaled(jobs) >= HOLD_AGENT_REQUEST - 1
        before = list(script.answered)

        result = CliRunner().invoke(
            app, ["-C", str(project), "--no-prompt", "optimize", "--resume", job_dir.name]
        )
        assert result.exit_code == 0, result.output
        after = script.answered[len(before) :]
        repeated = set(before) & set(after)
        assert not repeated, f"{len(repeated)} request(s) answered before the kill were sent again"

        # The same job without the kill: the same requests, candidates and outcome.
        fresh_project = project_for(tmp_path / "fresh", srv.base_url)
        mark = len(script.answered)
        fresh = CliRunner().invoke(
            app, ["-C", str(fresh_project), "--no-prompt", "optimize", *ARGS]
        )
        assert fresh.exit_code == 0, fresh.output
        uninterrupted = script.answered[mark:]
    assert Counter(before + after) == Counter(uninterrupted)
    resumed_job = json.loads((job_dir / "job.json").read_text())
    fresh_dir = next((fresh_project / ".agentopt" / "optimize").iterdir())
    fresh_job = json.loads((fresh_dir / "job.json").read_text())
    assert resumed_job["status"] == "completed"
    assert resumed_job["termination_reason"] == fresh_job["termination_reason"]
    assert resumed_job["outcome"] == fresh_job["outcome"] == "improved"

    def candidates(job: dict[str, Any]) -> list[tuple[str, str, float | None]]:
        return [
            (c["id"], c["status"], (c.get("validation") or {}).get("score"))
            for c in job["candidates"]
        ]

    assert candidates(resumed_job) == candidates(fresh_job)
    assert len(candidates(resumed_job)) >= 3  # the kill came after the first candidate

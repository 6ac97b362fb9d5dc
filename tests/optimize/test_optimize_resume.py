"""--resume after a crash or Ctrl-C repeats no paid call (optimizer.md §3, cli.md exit 130).

The agent and the judge are a real OpenAI-compatible HTTP server on loopback
(tests/fake_openai.py) reached through the `compat:` provider, so "a paid call" is a request
the server received.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.optimize_job import CandidateRecord, JobRecord
from agentopt.core.errors import Interrupted
from agentopt.workflows.optimize import NullOptimizeSink
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, slow, text
from tests.optimize.conftest import _QUOTED, make_project, optimize, phrase_verdicts, task
from tests.signals import default_stop_signals

PHRASES = ("refund window", "tracking link", "order number")


def serve(req: RecordedRequest, usage: tuple[int, int] = (10, 5)) -> Reply:
    """Judge requests get phrase verdicts; agent requests a rule-following answer."""
    messages = req.body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if "impartial evaluator" in system:
        verdicts = phrase_verdicts("\n".join(m.get("content") or "" for m in messages))
        return text(verdicts, usage=usage)
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    answer = f"Answer to {user}." + "".join(f" {p}." for p in _QUOTED.findall(system))
    return text(answer, usage=usage)


def request_keys(requests: list[RecordedRequest]) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in requests if r.path.endswith("/completions")]


def project_for(root: Path, model: str) -> Path:
    rows = [task(f"t{i:02d}", PHRASES[i % 3]) for i in range(15)]
    return make_project(
        root,
        rows,
        model=model,
        options={"eval_model": model, "max_concurrent_agent_runs": 1},
    )


class CrashOnFirstCandidate(NullOptimizeSink):
    """Stands for the process dying right after the first candidate was validated."""

    def candidate(self, job: JobRecord, candidate: CandidateRecord) -> None:
        if candidate.id != "baseline":
            raise RuntimeError("power cut")


def summary(job: JobRecord) -> list[tuple[str, str, float | None]]:
    return [(c.id, c.status, c.validation.score if c.validation else None) for c in job.candidates]


def test_resume_after_a_crash_sends_no_request_twice(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"max_candidates": 3, "parallel_proposals": 1, "seed": 11}
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = serve
        model = f"compat:fake@{srv.base_url}"
        project = project_for(tmp_path / "crashed", model)
        with pytest.raises(RuntimeError, match="power cut"):
            optimize(project, sink=CrashOnFirstCandidate(), **settings)
        first = request_keys(srv.requests)
        job_dir = next((project / ".agentopt" / "optimize").iterdir())
        assert json.loads((job_dir / "job.json").read_text())["status"] == "failed"

        resumed = optimize(project, resume=job_dir.name)
        second = request_keys(srv.requests)[len(first) :]
        assert resumed.job.status == "completed" and resumed.job.id == job_dir.name
        # Nothing finished before the crash was asked for again.
        assert not set(first) & set(second)

        fresh_project = project_for(tmp_path / "fresh", model)
        before = len(srv.chat_requests)
        fresh = optimize(fresh_project, **settings)
        fresh_count = len(srv.chat_requests) - before
    # Crash + resume made exactly the calls of one uninterrupted job, and found the same things.
    assert len(first) + len(second) == fresh_count
    assert summary(resumed.job) == summary(fresh.job)
    assert resumed.job.outcome == fresh.job.outcome and resumed.job.best == fresh.job.best


def test_resuming_a_finished_job_is_refused_with_the_status_command(tmp_path: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = serve
        project = project_for(tmp_path, f"compat:fake@{srv.base_url}")
        done = optimize(project, max_candidates=1, parallel_proposals=1)
        result = CliRunner().invoke(
            app, ["-C", str(project), "--no-prompt", "optimize", "--resume", done.job.id]
        )
    assert result.exit_code == 2
    assert "already completed" in result.output and "optimize status" in result.output


@pytest.mark.slow
def test_ctrl_c_saves_the_job_and_resume_finishes_it_without_repeats(tmp_path: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = lambda req: slow(0.05, serve(req))
        project = project_for(tmp_path, f"compat:fake@{srv.base_url}")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "CI": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "optimize",
             "--max-candidates", "2", "--parallel-proposals", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=default_stop_signals,
        )  # fmt: skip
        jobs = project / ".agentopt" / "optimize"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            journals = list(jobs.glob("*/journal.jsonl")) if jobs.exists() else []
            if journals and journals[0].read_text().count('"kind":"unit"') >= 4:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == Interrupted.exit_code, out + err
        job_dir = next(jobs.iterdir())
        assert f"agentopt optimize --resume {job_dir.name}" in out + err
        saved = json.loads((job_dir / "job.json").read_text())
        assert saved["status"] == "interrupted" and saved["termination_reason"] == "interrupted"
        assert (job_dir / "report.html").is_file()

        first = request_keys(srv.requests)
        srv.handler = serve
        result = CliRunner().invoke(
            app, ["-C", str(project), "--no-prompt", "optimize", "--resume", job_dir.name]
        )
        assert result.exit_code == 0, result.output
        second = request_keys(srv.requests)[len(first) :]
    assert not set(first) & set(second)
    assert json.loads((job_dir / "job.json").read_text())["status"] == "completed"


def test_max_cost_stops_the_job_and_costs_come_from_the_price_table(tmp_path: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = lambda req: serve(req, usage=(1000, 500))
        model = f"compat:fake@{srv.base_url}"
        project = project_for(tmp_path, model)
        config = (project / "eval.yaml").read_text()
        prices = "  prices:\n    fake: {input: 10.0, output: 20.0}\n"  # USD per 1M tokens
        (project / "eval.yaml").write_text(config.replace("options:\n", "options:\n" + prices))
        outcome = optimize(project, max_cost=0.5, parallel_proposals=1, seed=2)
    job = outcome.job
    spent = sum(u["cost_usd"] for u in job.usage.values())
    # Each call costs 1000 × $10/1M + 500 × $20/1M = $0.02: the cap stops the job after ~25.
    assert job.termination_reason == "budget_exhausted"
    assert 0.5 <= spent <= 0.5 + 0.02 * 2
    base = job.baseline
    assert base is not None and base.cost is not None
    # The Cost column is the agent's list price on the validation split: 6 tasks × $0.02.
    assert base.cost == pytest.approx(len(job.splits.validation) * 0.02)


def test_every_recorded_option_survives_the_job_file_and_keeps_its_order() -> None:
    """job.json's `options` is what --resume restores: a flag left out of the recorded order
    would silently not be resumed; the keys keep the order job.json has always had."""
    from dataclasses import fields
    from pathlib import Path

    from agentopt.workflows.optimize.options import SNAPSHOT_ORDER, OptimizeOptions

    per_run = {"resume", "dry_run", "executor", "ray_address"}
    names = {f.name for f in fields(OptimizeOptions)}
    assert names - per_run == set(SNAPSHOT_ORDER)
    opts = OptimizeOptions(
        config=Path("eval.yaml"), seed=7, max_candidates=3, eval_model="m", targets=["tools"]
    )
    snap = opts.snapshot()
    assert list(snap) == [
        *("config", "eval_model", "max_candidates", "targets", "seed", "require_improvement")
    ]
    assert OptimizeOptions.from_snapshot(snap) == opts

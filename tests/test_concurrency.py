"""One concurrency limit per pool, owned by the call layer: `--concurrency` (or eval.yaml
`max_concurrent_agent_runs`, else the one default) bounds agent runs in flight in `eval run` and
in `optimize` alike, measured at a real HTTP server as the number of agent requests it is
serving at once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.eval_yaml import Options
from agentopt.models.settings import CallFlags, CallSettings, call_settings
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.optimize.conftest import _QUOTED, make_project, phrase_verdicts, task

runner = CliRunner()


class Peak:
    """Answers like the optimizer tests' agent and judge, holding each agent request 100 ms,
    and records how many agent requests were in flight at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.agent_requests = 0

    def __call__(self, req: RecordedRequest) -> Reply:
        messages = req.body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if "impartial evaluator" in system:
            return text(phrase_verdicts("\n".join(m.get("content") or "" for m in messages)))
        with self.lock:
            self.now += 1
            self.agent_requests += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.1)
        with self.lock:
            self.now -= 1
        user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        return text(f"Answer to {user}." + "".join(f" {p}." for p in _QUOTED.findall(system)))


def test_flags_win_over_eval_yaml_over_the_one_default() -> None:
    options = Options(max_concurrent_agent_runs=5, judge_concurrency=7, max_cost=2.0)
    default = CallSettings().concurrency
    assert call_settings(None).concurrency == default
    from_file = call_settings(options)
    assert (from_file.concurrency["agent"], from_file.concurrency["judge"]) == (5, 7)
    assert from_file.max_cost_usd == 2.0
    flagged = call_settings(options, CallFlags(concurrency=3, max_cost=1.0, dry_run=True))
    assert (flagged.concurrency["agent"], flagged.concurrency["judge"]) == (3, 7)
    assert flagged.max_cost_usd == 1.0 and not flagged.cache_enabled


def test_eval_run_concurrency_bounds_agent_runs(project: Path) -> None:
    rows = [{"name": f"t{i}", "query": f"item {i}"} for i in range(9)]
    (project / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    peak = Peak()
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted server
        srv.handler = peak
        result = runner.invoke(
            app,
            ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl",
             "--agent-model", f"compat:fake@{srv.base_url}", "--evaluator", "ExactMatch",
             "--concurrency", "3", "--max-errors", "100"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert peak.agent_requests == 9
    assert peak.peak == 3


@pytest.mark.parametrize("flag", [None, "2"])
def test_optimize_concurrency_bounds_agent_runs_across_proposals(
    tmp_path: Path, flag: str | None
) -> None:
    peak = Peak()
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted server
        srv.handler = peak
        model = f"compat:fake@{srv.base_url}"
        rows = [task(f"t{i:02d}", ("refund window", "tracking link")[i % 2]) for i in range(8)]
        project = make_project(
            tmp_path, rows, model=model,
            options={"eval_model": model, "max_concurrent_agent_runs": 3},
        )  # fmt: skip
        args = ["-C", str(project), "--no-prompt", "optimize", "--max-candidates", "1"]
        result = runner.invoke(app, [*args, *(["--concurrency", flag] if flag else [])])
    assert result.exit_code == 0, result.output
    assert peak.agent_requests >= 8
    assert peak.peak == (int(flag) if flag else 3)

"""`--resume` and `--retry-errors` redo evaluator errors too (issue 14 item 5): a run that met a
429 storm at its judge can be completed, re-scoring the journaled answers without asking the
agent again. Agent and judge are two real OpenAI-compatible servers on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.paths import cache_path
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, rate_limited, text


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


class Servers:
    def __init__(self) -> None:
        self.agent = FakeOpenAI(schemas="any")
        self.judge = FakeOpenAI(schemas="any")
        self.storm = True

        def judge(req: RecordedRequest) -> Reply:
            if self.storm and "item 2" in json.dumps(req.body):
                return rate_limited(retry_after=0)
            return text(json.dumps({"reason": "on topic", "score": 5}))

        self.judge.handler = judge

    def args(self) -> list[str]:
        return [
            "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:agent@{self.agent.base_url}",
            "--eval-model", f"compat:judge@{self.judge.base_url}",
            "--evaluator", "Relevance", "--concurrency", "1",
        ]  # fmt: skip


@pytest.fixture
def servers(project: Path) -> Iterator[Servers]:
    rows = [{"name": f"t{i}", "query": f"item {i}"} for i in range(4)]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    s = Servers()
    with s.agent, s.judge:
        yield s


def first_run_with_a_judge_storm(project: Path, servers: Servers) -> Path:
    code, out = cli(project, *servers.args())
    assert code == 3, out  # errors beyond --max-errors 0: the verdict is unknown
    run_dir = sorted((project / ".agentopt" / "runs").iterdir())[-1]
    tasks = json.loads((run_dir / "results.json").read_text())["tasks"]
    assert [t["status"] == "pass" for t in tasks] == [True, True, False, True]
    assert tasks[2]["evaluators"][0]["error"]["code"] == "judgeRateLimited"
    return run_dir


def test_resume_rescores_judge_errors_on_the_saved_answers(project: Path, servers: Servers):
    run_dir = first_run_with_a_judge_storm(project, servers)
    agent_calls, judge_calls = servers.agent.count(), servers.judge.count()
    for f in cache_path(project).parent.glob("cache.sqlite*"):
        f.unlink()  # the answers can only come from the journal now
    servers.storm = False
    code, out = cli(project, "--resume", run_dir.name)
    assert code == 0, out
    assert servers.agent.count() == agent_calls  # the agent was not asked again
    assert servers.judge.count() == judge_calls + 1  # only t2 was judged again
    tasks = json.loads((run_dir / "results.json").read_text())["tasks"]
    assert [t["status"] for t in tasks] == ["pass"] * 4
    assert tasks[2]["response"]  # the journaled answer, re-scored


def test_retry_errors_completes_the_latest_run(project: Path, servers: Servers):
    run_dir = first_run_with_a_judge_storm(project, servers)
    servers.storm = False
    code, out = cli(project, "--retry-errors")
    assert code == 0, out
    assert sorted((project / ".agentopt" / "runs").iterdir())[-1] == run_dir  # the same run
    summary = json.loads((run_dir / "results.json").read_text())["summary"]
    assert summary["errors"] == 0 and summary["passed"] == 4

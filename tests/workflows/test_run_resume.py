"""Resume and interruption: a resumed run repeats no paid call (cli.md `--resume`, files.md §7).

The agent is a real OpenAI-compatible HTTP server on loopback (tests/fake_openai.py) reached
through the `compat:` provider, so "paid call" means an HTTP request the server counted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, slow
from tests.signals import default_stop_signals

runner = CliRunner()


def write_tasks(project: Path, n: int) -> None:
    rows = [{"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def last_user(req: RecordedRequest) -> str:
    users = [m for m in req.body["messages"] if m["role"] == "user"]
    return str(users[-1]["content"]) if users else ""


def test_resume_after_errors_reruns_only_unfinished_units(project: Path) -> None:
    write_tasks(project, 6)
    broken = {"on": True}
    with FakeOpenAI(schemas="any") as srv:

        def handler(req: RecordedRequest) -> Reply | None:
            if broken["on"] and last_user(req) == "item 3":
                return error(401, "bad key", code="invalid_api_key")
            return None

        srv.handler = handler
        model = f"compat:fake@{srv.base_url}"
        base = ["--prompts-file", "tasks.jsonl", "--agent-model", model]
        base += ["--evaluator", "ExactMatch", "--concurrency", "1"]
        code, out = cli(project, *base, "--max-errors", "0")
        assert code == 3, out
        run_dir = sorted((project / ".agentopt" / "runs").iterdir())[-1]
        assert json.loads((run_dir / "run.json").read_text())["status"] == "stopped"
        assert "--resume " + run_dir.name in out
        first = srv.count()
        assert first == 4  # items 0-3; the run stopped at the first error

        broken["on"] = False
        code, out = cli(project, "--resume", run_dir.name)
        assert code == 0, out
        # Items 0-2 were finished: not sent again. Item 3 (failed) and 4-5 are sent once each.
        assert srv.count() - first == 3
        results = json.loads((run_dir / "results.json").read_text())
        assert [t["name"] for t in results["tasks"]] == [f"t{i}" for i in range(6)]
        assert all(t["status"] == "pass" for t in results["tasks"])

        # An unchanged suite run again from scratch makes zero provider calls (the cache).
        before = srv.count()
        code, out = cli(project, *base)
        assert code == 0, out
        assert srv.count() == before


def test_ctrl_c_saves_progress_and_prints_the_resume_command(project: Path) -> None:
    write_tasks(project, 8)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = lambda req: slow(0.4)
        model = f"compat:fake@{srv.base_url}"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "CI": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "eval", "run",
             "--prompts-file", "tasks.jsonl", "--agent-model", model,
             "--evaluator", "ExactMatch", "--concurrency", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=default_stop_signals,
        )  # fmt: skip
        runs = project / ".agentopt" / "runs"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            journals = list(runs.glob("*/journal.jsonl")) if runs.exists() else []
            if journals and journals[0].read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err
        run_dir = next(runs.iterdir())
        assert f"--resume {run_dir.name}" in out + err
        info = json.loads((run_dir / "run.json").read_text())
        assert info["status"] == "interrupted"
        partial = json.loads((run_dir / "results.json").read_text())
        assert 2 <= len(partial["tasks"]) < 8

        srv.handler = None
        code, output = cli(project, "--resume", run_dir.name)
        assert code == 0, output
        done = json.loads((run_dir / "results.json").read_text())
        assert len(done["tasks"]) == 8

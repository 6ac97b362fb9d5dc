"""Code evaluators that burn CPU move to the run's process pool; light ones stay on a thread.
Either way the verdicts are the same, and no worker outlives the run."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI

runner = CliRunner()

EVALUATOR = """
import os, time


class {cls}:
    def __init__(self, *, model_config=None, threshold=0.5, options=None):
        self.threshold = threshold

    def __call__(self, *, response="", expected_response="", **_):
        end = time.thread_time() + {burn}
        while time.thread_time() < end:
            pass
        ok = response == expected_response
        return {{"score": 1.0 if ok else 0.0, "reason": str(os.getpid())}}
"""


def _project(project: Path, name: str, burn: float, n: int) -> None:
    folder = project / "custom-evaluators" / name
    folder.mkdir(parents=True)
    (folder / f"{name}.py").write_text(EVALUATOR.format(cls=name.title(), burn=burn))
    rows = [{"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def _run(project: Path, name: str) -> list[dict[str, object]]:
    with FakeOpenAI(schemas="any") as srv:
        args = ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl"]
        args += ["--agent-model", f"compat:fake@{srv.base_url}", "--evaluator", name]
        args += ["--concurrency", "1"]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run_dir = sorted((project / ".agentopt" / "runs").iterdir())[-1]
    return json.loads((run_dir / "results.json").read_text())["tasks"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("burn", "pooled"), [(0.02, True), (0.0, False)])
def test_cpu_bound_code_evaluators_run_in_worker_processes(
    project: Path, burn: float, pooled: bool
) -> None:
    _project(project, "burner", burn, n=8)
    tasks = _run(project, "burner")
    assert [t["status"] for t in tasks] == ["pass"] * 8
    pids = [int(t["evaluators"][0]["reason"]) for t in tasks]
    assert pids[:3] == [os.getpid()] * 3  # measured on the thread first
    if pooled:
        assert all(p != os.getpid() for p in pids[3:])
        for pid in set(pids[3:]):  # the workers are gone with the run
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    else:
        assert pids == [os.getpid()] * 8
    assert multiprocessing.active_children() == []


def test_zero_evaluator_processes_keeps_them_on_a_thread_and_nonsense_is_refused(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(project, "burner", 0.01, n=5)
    monkeypatch.setenv("AGENTOPT_EVALUATOR_PROCESSES", "0")
    tasks = _run(project, "burner")
    assert {int(t["evaluators"][0]["reason"]) for t in tasks} == {os.getpid()}
    monkeypatch.setenv("AGENTOPT_EVALUATOR_PROCESSES", "many")
    runs = len(list((project / ".agentopt" / "runs").iterdir()))
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run",
                                 "--prompts-file", "tasks.jsonl", "--agent-model", "mock:echo",
                                 "--evaluator", "burner"])  # fmt: skip
    assert result.exit_code == 2 and "AGENTOPT_EVALUATOR_PROCESSES" in result.output
    assert len(list((project / ".agentopt" / "runs").iterdir())) == runs  # nothing written

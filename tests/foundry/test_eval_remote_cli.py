"""`agentopt eval run --remote` through the CLI, with the real `DefaultAzureCredential`
(answered by a stand-in `az` on PATH) against the fake Foundry project."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.foundry.azcli import files_containing, install_az
from tests.foundry.conftest import write_azd_project
from tests.foundry.fake_project import FakeFoundry

TOKEN = "cli-token-3f9d2c7b1a"
runner = CliRunner()


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", *args])
    return result.exit_code, result.output


@pytest.fixture
def az(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Outside the project folder, so a token found there can only have been written."""
    return install_az(tmp_path_factory.mktemp("azbin"), TOKEN, monkeypatch)


def run_dirs(project: Path) -> list[Path]:
    return sorted((project / ".agentopt" / "runs").iterdir())


def test_no_wait_then_show_watch_completes(
    project: Path, foundry: FakeFoundry, az: dict[str, str]
) -> None:
    write_azd_project(project, foundry.endpoint)
    code, out = cli(project, "eval", "run", "--remote", "--no-wait")
    assert code == 0, out
    assert "Eval run started" in out and "Report: https://" in out
    (run,) = run_dirs(project)
    assert f"agentopt eval show {run.name} --watch" in out
    assert not (run / "results.json").exists()
    assert not foundry.calls("GET", r"/runs/[^/]+$")  # nothing polled yet

    code, out = cli(project, "--debug", "eval", "show", run.name, "--watch", "--poll-interval", "0")
    assert code == 0, out
    assert (project / ".agentopt" / "agentopt.log").stat().st_size > 0
    results = json.loads((run / "results.json").read_text())
    assert results["run"]["remote"]["status"] == "completed"
    assert len(results["tasks"]) == 5
    assert len(foundry.calls("POST", r"/runs$")) == 1
    code, out = cli(project, "eval", "show", run.name)
    assert code == 0 and "shop-smoke" in out
    assert foundry.tokens and set(foundry.tokens) == {TOKEN}
    assert files_containing(project, TOKEN) == []


def test_gates_reports_and_baseline_work_on_remote_results(
    project: Path, foundry: FakeFoundry, az: dict[str, str]
) -> None:
    write_azd_project(project, foundry.endpoint)
    code, out = cli(
        project, "eval", "run", "--remote", "--poll-interval", "0",
        "--fail-under", "0.95", "--output", "r.xml", "--output", "r.html",
    )  # fmt: skip
    assert code == 1, out
    assert "gate failed" in out
    assert "<testsuite" in (project / "r.xml").read_text()
    assert (project / "r.html").stat().st_size > 1000
    first = run_dirs(project)[-1].name
    code, out = cli(project, "eval", "run", "--remote", "--poll-interval", "0", "--baseline", first)
    assert code == 0, out
    assert f"Baseline {first}" in out and "no regression" in out
    code, out = cli(project, "eval", "show", run_dirs(project)[-1].name, "--compare", first)
    assert code == 0, out
    assert files_containing(project, TOKEN) == []


def test_auth_errors_name_the_credential_that_was_tried(
    project: Path,
    foundry: FakeFoundry,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    write_azd_project(project, foundry.endpoint)
    empty = tmp_path_factory.mktemp("nobin")
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "AzureCliCredential")
    code, out = cli(project, "eval", "run", "--remote", "--poll-interval", "0")
    assert code == 3, out
    assert "DefaultAzureCredential" in out and "AzureCliCredential" in out
    assert "az login" in out
    assert not foundry.calls("POST", r"/openai/v1/evals")


def test_a_refused_token_is_a_clear_error(
    project: Path, az: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeFoundry(accept_token=lambda token: False) as foundry:
        write_azd_project(project, foundry.endpoint)
        code, out = cli(project, "eval", "run", "--remote", "--poll-interval", "0")
    assert code == 3, out
    assert "refused the token from DefaultAzureCredential" in out and "401" in out
    assert TOKEN not in out


def test_multi_turn_tasks_and_a_missing_deployment_are_usage_errors(
    project: Path, foundry: FakeFoundry, az: dict[str, str]
) -> None:
    write_azd_project(project, foundry.endpoint)
    data = project / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"
    with data.open("a") as fh:
        fh.write(json.dumps({"name": "thread", "turns": [{"query": "a"}, {"query": "b"}]}) + "\n")
    code, out = cli(project, "eval", "run", "--remote")
    assert code == 2 and "multi-turn" in out and "thread" in out
    code, out = cli(project, "eval", "run", "--remote", "--filter", "!thread", "--no-wait")
    assert code == 0, out
    assert not foundry.calls("GET", r"/runs/")
    code, out = cli(project, "eval", "run", "--no-wait", "--agent-model", "mock:echo")
    assert code == 2 and "--no-wait" in out


@pytest.mark.slow
def test_a_kill_during_polling_then_resume_makes_no_second_evaluation(
    project: Path, foundry: FakeFoundry, az: dict[str, str]
) -> None:
    write_azd_project(project, foundry.endpoint)
    foundry.polls_per_state = 10_000  # the run stays queued while the first process polls
    env = {**os.environ, **az}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "eval", "run",
         "--remote", "--poll-interval", "0.05"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(foundry.calls("GET", r"/runs/[^/]+$")) < 3:
            assert proc.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "the run never started polling"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    (run,) = run_dirs(project)
    saved = json.loads((run / "run.json").read_text())
    assert saved["remote"]["run_id"] and not (run / "results.json").exists()

    foundry.polls_per_state = 1
    code, out = cli(project, "eval", "run", "--resume", run.name, "--poll-interval", "0")
    assert code == 0, out
    assert len(foundry.calls("POST", r"^/openai/v1/evals$")) == 1
    assert len(foundry.calls("POST", r"/runs$")) == 1
    results = json.loads((run / "results.json").read_text())
    assert results["run"]["remote"]["run_id"] == saved["remote"]["run_id"]
    assert len(results["tasks"]) == 5
    assert files_containing(project, TOKEN) == []


def test_the_azd_environment_picked_with_e_names_the_agent_and_dry_run_sends_nothing(
    project: Path, foundry: FakeFoundry, az: dict[str, str]
) -> None:
    write_azd_project(project, foundry.endpoint)
    prod = project / ".azure" / "prod"
    prod.mkdir()
    dev = (project / ".azure" / "dev" / ".env").read_text()
    (prod / ".env").write_text(
        dev.replace('"support-agent"', '"support-prod"').replace('"3"', '"7"')
    )
    code, out = cli(project, "eval", "run", "--remote", "--dry-run")
    assert code == 0 and "support-agent version 3" in out and "Judged by Foundry" in out
    assert foundry.log == []
    code, out = cli(project, "-e", "prod", "eval", "run", "--remote", "--no-wait")
    assert code == 0, out
    (started,) = foundry.calls("POST", r"/runs$")
    target = started.body["data_source"]["target"]
    assert (target["name"], target["version"]) == ("support-prod", "7")

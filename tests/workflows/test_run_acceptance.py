"""Acceptance of `eval run` against a local OpenAI-compatible server (the issue's list):
200-task statuses, JUnit, self-contained HTML, SIGKILL + resume with no repeated answered
request, unchanged rerun = zero requests, dry run = zero requests, M365 samples end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text
from tests.m365_output_check import validate_output
from tests.workflows.fake_agent_server import judge_reply, last_user

runner = CliRunner()


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def write_tasks(project: Path, n: int) -> None:
    rows = [
        {"name": f"t{i:03d}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)
    ]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def expected_status(i: int) -> str:
    return {3: "error", 5: "fail"}.get(i % 10, "pass")


def scripted(req: RecordedRequest) -> Reply | None:
    i = int(last_user(req).split()[-1])
    if i % 10 == 3:
        return error(400, "the agent refused", code="bad_request")
    if i % 10 == 5:
        return text("something else")
    return None


def test_200_tasks_statuses_junit_and_html(project: Path) -> None:
    write_tasks(project, 200)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = scripted
        code, out = cli(
            project, "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:fake@{srv.base_url}",
            "--evaluator", "ExactMatch", "--max-errors", "1000", "--concurrency", "16",
            "--output", "r.xml", "--output", "r.html",
        )  # fmt: skip
    assert code == 0, out
    results = json.loads(next((project / ".agentopt" / "runs").glob("*/results.json")).read_text())
    assert [t["status"] for t in results["tasks"]] == [expected_status(i) for i in range(200)]
    suite = ET.parse(project / "r.xml").getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) == 200
    assert len([c for c in cases if c.find("error") is not None]) == 20
    assert len([c for c in cases if c.find("failure") is not None]) == 20
    html = (project / "r.html").read_text()
    refs = re.findall(r"""(?:src|href)\s*=\s*["']?(https?://[^"' >]+)""", html)
    assert refs == []
    assert "@import" not in html and "url(http" not in html


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def console_errors(page: Path) -> list[str]:
    """Console errors of a page opened in headless Chromium (read from its log)."""
    binary = chromium()
    assert binary is not None
    profile = page.parent / "chrome-profile"
    proc = subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = proc.stderr.splitlines()
    return [ln for ln in lines if "CONSOLE" in ln and ("Uncaught" in ln or "rror" in ln)]


@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (CI installs it)")
def test_html_report_opens_in_chromium_without_console_errors(project: Path) -> None:
    write_tasks(project, 30)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = scripted
        code, out = cli(
            project, "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:fake@{srv.base_url}",
            "--evaluator", "ExactMatch", "--max-errors", "1000", "--output", "r.html",
        )  # fmt: skip
    assert code == 0, out
    # The detector itself works: a page with a broken script is caught.
    broken = project / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    assert console_errors(broken), "the console-error detector saw nothing on a broken page"
    assert console_errors(project / "r.html") == []


def test_sigkill_then_resume_repeats_no_answered_request(project: Path) -> None:
    write_tasks(project, 20)
    hold = threading.Event()
    answered: list[str] = []
    lock = threading.Lock()
    with FakeOpenAI(schemas="any") as srv:

        def handler(req: RecordedRequest) -> Reply | None:
            query = last_user(req)
            if query == "item 10" and not hold.is_set():
                hold.wait(30)  # the 11th request stays in flight until the client is killed
                return None
            with lock:
                answered.append(query)
            return None

        srv.handler = handler
        model = f"compat:fake@{srv.base_url}"
        env = {**os.environ, "CI": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "eval", "run",
             "--prompts-file", "tasks.jsonl", "--agent-model", model,
             "--evaluator", "ExactMatch", "--concurrency", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        runs = project / ".agentopt" / "runs"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            journal = list(runs.glob("*/journal.jsonl")) if runs.exists() else []
            if journal and journal[0].read_text().count("\n") >= 10 and srv.count() >= 11:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        hold.set()
        run_id = next(runs.iterdir()).name
        before = list(answered)
        assert len(before) == 10
        code, out = cli(project, "--resume", run_id)
        assert code == 0, out
        resumed = answered[len(before) :]
        assert not set(resumed) & set(before), "a request answered before the kill was repeated"
        assert sorted(resumed) == sorted(f"item {i}" for i in range(10, 20))
        results = json.loads((runs / run_id / "results.json").read_text())
        assert len(results["tasks"]) == 20 and results["summary"]["passed"] == 20


def test_dry_run_sends_nothing_and_estimates(project: Path) -> None:
    write_tasks(project, 5)
    with FakeOpenAI(schemas="any") as srv:
        code, out = cli(
            project, "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:fake@{srv.base_url}",
            "--eval-model", f"compat:judge@{srv.base_url}", "--dry-run",
        )  # fmt: skip
        assert srv.count() == 0 and srv.requests == []
    assert code == 0, out
    assert "Dry run" in out and "calls" in out and "input tokens" in out


def test_bad_flag_exits_2_and_unreachable_agent_exits_3(project: Path) -> None:
    write_tasks(project, 2)
    code, _ = cli(project, "--prompts-file", "tasks.jsonl", "--repeat", "0")
    assert code == 2
    # A closed port: connection refused on every attempt.
    code, out = cli(
        project, "--prompts-file", "tasks.jsonl", "--agent-model", "compat:x@http://127.0.0.1:9/v1",
        "--evaluator", "ExactMatch", "--max-errors", "0",
    )  # fmt: skip
    assert code == 3, out


SAMPLES = sorted(
    p.name
    for p in (Path(__file__).resolve().parents[1] / "fixtures" / "m365" / "samples").glob("*.json")
)


@pytest.mark.parametrize("sample", SAMPLES)
def test_m365_samples_run_end_to_end_and_validate(project: Path, m365: Path, sample: str) -> None:
    src = m365 / "samples" / sample
    shutil.copy(src, project / sample)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", sample, "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--max-errors", "100000",
            "--output", "filled.json",
        )  # fmt: skip
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    assert all("response" in item or "turns" in item for item in filled["items"])
    assert filled["metadata"]["cliVersion"]

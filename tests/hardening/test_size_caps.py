"""Item 4 of issue 38: size caps. One 50 MB answer was held whole (1.17 GB of RSS), written
three times (journal, answers, results), cached (315 MB) and sent on to the judges. Now an
answer, a tool result, a command agent's output over `options.max_answer_bytes` (1 MiB by
default) is an error and its text is discarded: the HTTP client stops reading the body, and
nothing of it is written, cached or forwarded."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.hardening.conftest import cli, subprocess_env

BIG = 50 * 1024 * 1024
RSS_CAP_KB = 100 * 1024


def _huge_completion() -> bytes:
    body = {"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "A" * BIG}}]}  # fmt: skip
    return json.dumps(body).encode()


def _rss_run(project: Path, *args: str) -> tuple[int, str, int]:
    """(exit code, output, peak RSS in KiB) of `python -m agentopt ARGS`. The peak is the
    child's own `VmHWM`, read from /proc while it runs (it is reset when the child execs, unlike
    `ru_maxrss`, which counts the forked copy of this test process)."""
    out = project / "out.txt"
    peak = 0
    with open(out, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(project), *args],
            stdout=fh, stderr=subprocess.STDOUT, env=subprocess_env(), stdin=subprocess.DEVNULL,
        )  # fmt: skip
        status = Path(f"/proc/{proc.pid}/status")
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
    return code, out.read_text(errors="replace"), peak


@pytest.mark.slow
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_50_mb_answer_is_an_error_under_100_mb_of_rss(tmp_path: Path, framing: str) -> None:
    rows = [{"name": "big", "query": "say a lot"}, {"name": "small", "query": "hello"}]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    huge = _huge_completion()
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted (compat) server

        def handler(req: RecordedRequest) -> Reply | None:
            last = str(req.body["messages"][-1]["content"]) if isinstance(req.body, dict) else ""
            if "say a lot" in last:
                headers = {"Transfer-Encoding": "chunked"} if framing == "chunked" else {}
                return Reply(body=huge, headers=headers)
            return text(f"answer to {last}")

        srv.handler = handler
        model = f"compat:fake@{srv.base_url}"
        code, output, rss_kb = _rss_run(
            tmp_path, "eval", "run", "--prompts-file", "tasks.jsonl", "--agent-model", model,
            "--evaluator", "ExactMatch", "--output", "r.html", "--output", "r.json",
        )  # fmt: skip
        asked = srv.count()
    assert code == 3, output[-2000:]  # the error is counted (--max-errors 0)
    assert rss_kb < RSS_CAP_KB, f"peak RSS {rss_kb / 1024:.0f} MiB"
    assert asked == 2  # one call each: an answer too large is not asked again
    results = json.loads(next(tmp_path.glob(".agentopt/runs/*/results.json")).read_text())
    big = next(t for t in results["tasks"] if t["name"] == "big")
    assert big["status"] == "error" and "over the 1.0 MiB cap" in json.dumps(big)
    small = next(t for t in results["tasks"] if t["name"] == "small")
    assert small["status"] != "error"
    for path in tmp_path.rglob("*"):  # nothing of it was written anywhere
        if path.is_file():
            assert path.stat().st_size < 2 * 1024 * 1024, path


def test_a_command_agent_that_prints_too_much_is_an_error(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("import sys\nsys.stdin.read()\nsys.stdout.write('B' * (60 * 1024 * 1024))\n")
    (tmp_path / "eval.yaml").write_text(
        "name: loud\n"
        f"agent: {{name: a, target: command, command: ['{sys.executable}', '{script}']}}\n"
        "dataset: {local_uri: tasks.jsonl}\nevaluators: [builtin.exact_match]\n"
    )
    (tmp_path / "tasks.jsonl").write_text('{"name": "t", "query": "q", "ground_truth": "q"}\n')
    ran = cli(tmp_path, "eval", "run")
    assert ran.code == 3, ran.output
    results = json.loads(next(tmp_path.glob(".agentopt/runs/*/results.json")).read_text())
    assert results["tasks"][0]["status"] == "error"
    assert "over the" in json.dumps(results["tasks"][0])
    assert next(tmp_path.glob(".agentopt/runs/*/results.json")).stat().st_size < 100_000


def test_a_tool_result_over_the_cap_is_an_error_not_sent_on(tmp_path: Path) -> None:
    from agentopt.agents.tools.mocks import ToolMocks
    from agentopt.agents.tools.toolbox import Toolbox
    from agentopt.core import limits

    mocks = ToolMocks.parse({"dump": [{"return": "C" * (limits.max_answer_bytes() + 10)}]}, "m")
    record = asyncio_run(Toolbox(skills=[]).call("dump", {}, mocks=mocks, real_tools=None))
    assert record.result is None and "over the" in (record.error or "")


def asyncio_run(coro):  # type: ignore[no-untyped-def]
    import asyncio

    return asyncio.run(coro)


def test_the_cap_is_configurable(tmp_path: Path) -> None:
    from agentopt.core import limits
    from agentopt.core.files.eval_yaml import Options
    from agentopt.models.settings import call_settings

    settings = call_settings(Options(max_answer_bytes=4096))
    assert settings.max_answer_bytes == 4096
    limits.set_max_answer_bytes(4096)
    try:
        assert limits.oversize("x" * 5000) == 5000 and limits.oversize("x" * 4000) is None
    finally:
        limits.set_max_answer_bytes(None)

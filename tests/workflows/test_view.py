"""`agentopt view` serves the runs of .agentopt/ over loopback HTTP, read-only."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.cli.view_cmd import make_server
from agentopt.workflows.run.store import list_run_ids


def make_runs(project: Path, n: int) -> list[str]:
    for i in range(n):
        result = CliRunner().invoke(
            app,
            ["-C", str(project), "--no-prompt", "eval", "run", "--prompts", f"q{i}", "4",
             "--expected", "4", "4", "--evaluator", "ExactMatch", "--agent-model", "mock:echo"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    return list_run_ids(project)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_view_serves_run_list_run_detail_and_comparison(project: Path) -> None:
    a, b = make_runs(project, 2)
    server = make_server(project / ".agentopt", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        status, index = get(base + "/")
        assert status == 200 and a in index and b in index
        status, detail = get(f"{base}/runs/{a}")
        assert status == 200 and "<svg" in detail and "q0" in detail
        status, comp = get(f"{base}/compare?a={a}&b={b}")
        assert status == 200 and "shared tasks" in comp
        assert get(f"{base}/runs/..%2F..%2Fetc")[0] == 404
        assert get(f"{base}/runs/nope")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
    assert server.server_address[0] == "127.0.0.1"


def test_view_without_state_is_a_clear_error(project: Path) -> None:
    result = CliRunner().invoke(app, ["-C", str(project), "view", "--port", "0"])
    assert result.exit_code == 2
    assert "agentopt eval run" in result.output


@pytest.mark.parametrize("path", ["/optimize/none", "/unknown"])
def test_view_unknown_pages_are_404(project: Path, path: str) -> None:
    make_runs(project, 1)
    server = make_server(project / ".agentopt", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert get(f"http://127.0.0.1:{server.server_address[1]}{path}")[0] == 404
    finally:
        server.shutdown()
        server.server_close()

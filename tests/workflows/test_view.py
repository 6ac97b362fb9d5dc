"""`agentopt view` serves the runs of .agentopt/ over loopback HTTP, read-only."""

from __future__ import annotations

import json
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
        assert status == 200 and "Compare 2 runs" in comp and 'id="compare"' in comp
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


def raw_get(port: int, path: str, host: str | None) -> tuple[int, str]:
    """A GET with exactly this Host header (urllib would always send the right one)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


@pytest.fixture
def served(project: Path):
    ids = make_runs(project, 1)
    server = make_server(project / ".agentopt", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], ids
    finally:
        server.shutdown()
        server.server_close()


def test_view_refuses_other_host_names_dns_rebinding(served) -> None:
    port, (run_id,) = served
    for host in ("evil.example.com", f"evil.example.com:{port}", "127.0.0.1:1", None, ""):
        status, body = raw_get(port, f"/runs/{run_id}", host)
        assert status == 403, host
        assert "q0" not in body
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert raw_get(port, f"/runs/{run_id}", host)[0] == 200, host


def test_a_broken_run_is_listed_as_broken_and_the_index_still_renders(
    project: Path, served
) -> None:
    port, (run_id,) = served
    broken = project / ".agentopt" / "runs" / "20990101-000000-bad000"
    broken.mkdir()
    (broken / "results.json").write_text('{"run": {"id": ', encoding="utf-8")
    status, index = raw_get(port, "/", f"127.0.0.1:{port}")
    assert status == 200
    assert run_id in index and "20990101-000000-bad000" in index and "broken" in index
    status, page = raw_get(port, "/runs/20990101-000000-bad000", f"127.0.0.1:{port}")
    assert status == 500 and "not valid JSON" in page


def test_a_run_folder_linked_from_outside_is_not_served(project: Path, tmp_path: Path, served):
    port, (run_id,) = served
    outside = tmp_path / "elsewhere"
    (outside / "secret-run").mkdir(parents=True)
    real = project / ".agentopt" / "runs" / run_id / "results.json"
    (outside / "secret-run" / "results.json").write_bytes(real.read_bytes())
    runs = project / ".agentopt" / "runs"
    (runs / "20990101-000000-link00").symlink_to(outside / "secret-run")
    assert raw_get(port, "/runs/20990101-000000-link00", f"127.0.0.1:{port}")[0] == 404
    status, index = raw_get(port, "/", f"127.0.0.1:{port}")
    assert status == 200 and "refused" in index
    assert 'href="/runs/20990101-000000-link00"' not in index
    # a results.json that is itself a link out of .agentopt/ is not served either
    folder = runs / "20990101-000000-link01"
    folder.mkdir()
    (folder / "results.json").symlink_to(outside / "secret-run" / "results.json")
    assert raw_get(port, "/runs/20990101-000000-link01", f"127.0.0.1:{port}")[0] == 404


def test_pages_and_assets_forbid_anything_from_elsewhere(served) -> None:
    port, (run_id,) = served
    import http.client

    for path in ("/", f"/runs/{run_id}", "/static/view.css", "/static/view.js"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode()
        conn.close()
        assert resp.status == 200, path
        csp = resp.getheader("Content-Security-Policy") or ""
        assert "default-src 'none'" in csp and "script-src 'self'" in csp, path
        assert "connect-src 'self'" in csp
        assert "http://" not in body.replace(f"127.0.0.1:{port}", "") or path == "/", path
    page = raw_get(port, "/", f"127.0.0.1:{port}")[1]
    assert '<script src="/static/view.js"' in page and "<script>" not in page
    assert raw_get(port, "/static/../view_cmd.py", f"127.0.0.1:{port}")[0] == 404
    assert raw_get(port, "/static/other.js", f"127.0.0.1:{port}")[0] == 404
    status, version = raw_get(port, f"/api/version?page=/runs/{run_id}", f"127.0.0.1:{port}")
    assert status == 200 and json.loads(version)["live"] is False

"""`agentopt view`: a read-only local web view of runs and optimization jobs."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlsplit

import typer

from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.core.errors import ConfigError
from agentopt.core.paths import STATE_DIR
from agentopt.evaluators.stats import paired_bootstrap_ci
from agentopt.reports.view_pages import (
    compare_page,
    error_page,
    index_page,
    job_page,
    run_page,
)


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers a page of this server can carry: a page served from another name
    (DNS rebinding: `evil.example.com` resolving to 127.0.0.1) must not read transcripts."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def make_server(state: Path, port: int) -> ThreadingHTTPServer:
    """A loopback-only HTTP server over `state` (.agentopt/); GET only."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, page: str) -> None:
            body = page.encode("utf-8", errors="backslashreplace")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            host = (self.headers.get("Host") or "").strip().lower()
            port = int(self.server.server_address[1])  # type: ignore[index]
            if host not in allowed_hosts(port):
                self._send(403, "<h1>Forbidden</h1><p>agentopt view answers only to "
                           "127.0.0.1 and localhost.</p>")  # fmt: skip
                return
            try:
                status, page = self._page()
            except Exception as exc:  # one broken file must not drop the connection
                status, page = 500, error_page(exc)
            self._send(status, page)

        def _page(self) -> tuple[int, str]:
            url = urlsplit(self.path)
            parts = [p for p in url.path.split("/") if p]
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            page: str | None
            if not parts:
                page = index_page(state)
            elif parts[0] == "runs" and len(parts) == 2:
                page = run_page(state, parts[1])
            elif parts[0] == "compare":
                page = compare_page(
                    state, query.get("a", ""), query.get("b", ""), paired_ci=paired_bootstrap_ci
                )
            elif parts[0] == "optimize" and len(parts) == 2:
                page = job_page(state, parts[1])
            else:
                page = None
            return (200, page) if page is not None else (404, "<h1>Not found</h1>")

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


@handle_errors
def view_command(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 = any free).")] = 8765,
) -> None:
    """Serve .agentopt/ runs and jobs on http://127.0.0.1:PORT (local only, read-only)."""
    state = STATE.cwd / STATE_DIR
    if not state.is_dir():
        raise ConfigError(
            f"nothing to show: no {STATE_DIR}/ in {STATE.cwd}", hint="run `agentopt eval run` first"
        )
    try:
        server = make_server(state, port)
    except OSError as exc:
        raise ConfigError.at("", "--port", f"cannot listen on 127.0.0.1:{port}: {exc}") from None
    STATE.say(f"Serving {state} on http://127.0.0.1:{server.server_address[1]}  (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

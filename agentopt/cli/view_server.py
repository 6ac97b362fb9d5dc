"""The HTTP side of `agentopt view`: a loopback-only, read-only server over `.agentopt/`.

The standard library's `ThreadingHTTPServer` is enough, so no server library is added: the
app is a handful of GET routes for one person on one machine, pages are built in a few
milliseconds, and live updates are short polls of `/api/version` (a stat of the files behind a
page), which need no long-lived connections. What a framework would add (routing, templating,
an event loop) is fifty lines here, and one less dependency to audit and keep.

Every response forbids loading anything from anywhere but this origin (Content-Security-Policy),
so no data leaves the machine; a request whose Host is not 127.0.0.1/localhost on this port
is refused (DNS rebinding); names from the URL are only ever looked up as real entries of the
folders agentopt writes (`reports.view.state.real_child`).
"""

from __future__ import annotations

import json
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentopt.core.errors import AgentoptError
from agentopt.reports.compare_many import compare_many
from agentopt.reports.html_assets import CSS
from agentopt.reports.matrix import build_matrix_report
from agentopt.reports.optimize_diff import texts_diff
from agentopt.reports.optimize_html import EXTRA_CSS as OPTIMIZE_CSS
from agentopt.reports.view import (
    ViewState,
    compare_page,
    job_page,
    live_run_page,
    matrix_page,
    page,
    pick_page,
    run_page,
    runs_page,
)
from agentopt.reports.view.layout import text

__all__ = ["CSP", "allowed_hosts", "make_server"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
STATIC = {"view.css": "text/css; charset=utf-8", "view.js": "text/javascript; charset=utf-8"}
MAX_COMPARE = 12
FORBIDDEN = b"<h1>Forbidden</h1><p>agentopt view answers only to 127.0.0.1 and localhost.</p>"


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers a page of this server can carry: a page served from another name
    (DNS rebinding: `evil.example.com` resolving to 127.0.0.1) must not read transcripts."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


@cache
def static_file(name: str) -> bytes:
    """A file of `reports/view/static/` (in the wheel); the stylesheet starts with the
    report's own, so a run looks the same here as in report.html."""
    body = resources.files("agentopt.reports.view").joinpath("static", name).read_bytes()
    if name == "view.css":
        body = (CSS + OPTIMIZE_CSS).encode("utf-8") + body
    return body


def error_page(exc: BaseException) -> str:
    """What a page that cannot be built shows instead of a dropped connection."""
    reason = str(exc) if isinstance(exc, AgentoptError) else f"{type(exc).__name__}: {exc}"
    return page("error", f"<h1>Cannot show this page</h1><pre>{text(reason)}</pre>")


class Pages:
    """Route → page, over one `.agentopt/` folder."""

    def __init__(self, root: Path, paired_ci: Any = None) -> None:
        self.state = ViewState(root)
        self.paired_ci = paired_ci

    def get(self, path: str, query: dict[str, list[str]]) -> tuple[int, str, str]:
        """(status, content type, body)."""
        parts = [p for p in path.split("/") if p]
        html = "text/html; charset=utf-8"
        if not parts:
            return 200, html, runs_page(self.state)
        head, rest = parts[0], parts[1:]
        found: str | None = None
        if head == "runs" and len(rest) == 1:
            found = self._run(rest[0])
        elif head == "compare" and not rest:
            found = self._compare(query)
        elif head == "optimize" and len(rest) == 1:
            found = self._job(rest[0])
        elif head == "matrices" and len(rest) == 1:
            found = self._matrix(rest[0])
        elif head == "api" and rest == ["version"]:
            return 200, "application/json", self._version(query)
        if found is None:
            return 404, html, page("not found", "<h1>Not found</h1>")
        return 200, html, found

    def _live(self, kind: str, ident: str) -> str | None:
        _, going = self.state.version(kind, ident)
        return f"/api/version?page=/{kind}/{ident}" if going else None

    def _run(self, run_id: str) -> str | None:
        entry = self.state.run(run_id)
        if entry is None:
            return None
        if entry.results is not None:
            return run_page(entry.results)
        if entry.record is not None:
            live = self._live("runs", run_id)
            return live_run_page(entry.record, self.state.journal(run_id), live)
        raise AgentoptError(entry.problem or "this run cannot be shown")

    def _compare(self, query: dict[str, list[str]]) -> str:
        ids = list(dict.fromkeys([*query.get("run", []), *query.get("a", []), *query.get("b", [])]))
        ids = [i for i in ids if i][:MAX_COMPARE]
        runs, missing = [], []
        for run_id in ids:
            try:
                res = self.state.results(run_id)
            except (AgentoptError, OSError, ValueError, RecursionError):
                res = None
            if res is not None:
                runs.append(res)
            else:
                missing.append(run_id)
        if len(runs) < 2:
            note = f"No finished run named {', '.join(missing)}. " if missing else ""
            return pick_page(self.state.runs(), note + "Pick two or more runs to compare.")
        return compare_page(compare_many(runs, paired_ci=self.paired_ci))

    def _job(self, job_id: str) -> str | None:
        job = self.state.job(job_id)
        if job is None:
            return None

        def diff(old: str, new: str) -> list[str]:
            a = self.state.candidate_texts(job_id, old)
            b = self.state.candidate_texts(job_id, new)
            if a is None or b is None:
                return []
            return texts_diff(a, b, old, new)

        return job_page(job, diff, live=self._live("optimize", job_id))

    def _matrix(self, matrix_id: str) -> str | None:
        record = self.state.matrix(matrix_id)
        if record is None:
            return None
        results = [self.state.results(r.run_id) for r in record.runs]
        by_label = {r.label: res for r, res in zip(record.runs, results, strict=True)}
        report = build_matrix_report(record, [by_label.get(v.label) for v in record.variants])
        return matrix_page(report, live=self._live("matrices", matrix_id))

    def _version(self, query: dict[str, list[str]]) -> str:
        target = (query.get("page") or ["/"])[0]
        parts = [p for p in target.split("/") if p]
        if len(parts) == 2:
            version, going = self.state.version(parts[0], parts[1])
        else:  # the runs page: any run folder added, or a running one moving
            entries = self.state.runs()
            sigs = [self.state.version("runs", e.id)[0] for e in entries if e.running]
            version = "|".join([*(e.id for e in entries), *sigs])
            going = any(e.running for e in entries)
        return json.dumps({"version": version, "live": going})


def make_server(state: Path, port: int, *, paired_ci: Any = None) -> ThreadingHTTPServer:
    """A loopback-only HTTP server over `state` (.agentopt/); GET and HEAD only."""
    pages = Pages(state, paired_ci)

    class Handler(BaseHTTPRequestHandler):
        server_version = "agentopt-view"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, ctype: str, body: bytes, *, head: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self.do_GET(head=True)

        def do_GET(self, head: bool = False) -> None:
            host = (self.headers.get("Host") or "").strip().lower()
            port = int(self.server.server_address[1])  # type: ignore[index]
            if host not in allowed_hosts(port):
                body = FORBIDDEN
                self._send(403, "text/html; charset=utf-8", body, head=head)
                return
            url = urlsplit(self.path)
            if url.path.startswith("/static/"):
                name = url.path.removeprefix("/static/")
                if name in STATIC:
                    self._send(200, STATIC[name], static_file(name), head=head)
                else:
                    self._send(404, "text/plain; charset=utf-8", b"not found", head=head)
                return
            try:
                status, ctype, page_text = pages.get(url.path, parse_qs(url.query))
            except Exception as exc:  # one broken file must not drop the connection
                status, ctype, page_text = 500, "text/html; charset=utf-8", error_page(exc)
            body = page_text.encode("utf-8", errors="backslashreplace")
            self._send(status, ctype, body, head=head)

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)

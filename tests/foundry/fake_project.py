"""A Foundry project on 127.0.0.1, built from the published contract (docs/foundry-remote.md),
not from agentopt's client: real sockets, real status codes, the shapes of the TypeSpec.

Routes (paths below `/api/projects/<project>`; each module's docstring cites its spec file):
- `fake_evals`    — `/openai/v1/evals…` (evaluations, runs, paginated output items)
- `fake_optimize` — `/agent_optimization_jobs…` (V2Preview jobs, candidates, promote)
- `fake_assets`   — `/datasets…` + the blob store, `/evaluators…`, `/agents…`

Cross-cutting behaviour, as the service has it:
- every project route needs `Authorization: Bearer <token>` (scope https://ai.azure.com/.default;
  401 `{"error": …}` otherwise); the tokens seen are kept so tests can prove none reached a file;
- datasets and evaluators answer only `?api-version=2025-11-15-preview`, agents and
  optimization jobs only `v1`, each refused otherwise with the service's 400
  `UnsupportedApiVersion` (the versions azd sends; see `api_version_of`);
- project routes outside `/openai/v1` need `?api-version=` (servicepatterns.tsp
  `FoundryDataPlaneApiVersionParameter`); errors are `{"error": {"code", "message"}}` (`ApiError`);
- `fail(...)` injects scripted failures (e.g. a 429 with `Retry-After` during polling) ahead of
  the normal answer, and every request is logged (`log`, `calls(...)`) for assertions.

    with FakeFoundry() as foundry:
        foundry.add_agent("support-agent", {"kind": "prompt", "model": "gpt-4.1-mini"})
        foundry.fail("GET", r"/runs/[^/]+$", 429, retry_after="0")
        ... agentopt against foundry.endpoint ...
        assert foundry.calls("POST", r"/openai/v1/evals$")
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.foundry.fake_assets import AssetRoutes
from tests.foundry.fake_evals import Answer, EvalRoutes, Grader, default_grader
from tests.foundry.fake_optimize import OptimizeRoutes

__all__ = ["Answer", "FakeFoundry", "Logged", "Reply", "default_grader"]


@dataclass
class Logged:
    """One request as the server saw it (path relative to the project, no query)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    """Parsed JSON when the body is JSON, else the raw bytes."""


@dataclass
class Reply:
    status: int
    body: Any = None
    """dict/list → JSON; str → text/plain; bytes as they are; None → no body."""
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, code: str, message: str) -> Reply:
    return Reply(status, {"error": {"code": code, "message": message}})


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    reply: Reply
    times: int


Handler = Callable[[Logged, re.Match[str]], Reply]


class FakeFoundry(ThreadingHTTPServer):
    """The fake project server. Use as a context manager (it serves on a thread)."""

    daemon_threads = True

    def __init__(
        self,
        *,
        project: str = "proj",
        agent: Callable[[dict[str, Any], str], Answer] | None = None,
        grader: Grader | None = None,
        polls_per_state: int = 1,
        accept_token: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _RequestHandler)
        self.project = project
        self.prefix = f"/api/projects/{project}"
        self.polls_per_state = polls_per_state
        """How many GETs a run / job / agent version stays in each non-terminal state."""
        self.accept_token = accept_token or (lambda token: True)
        """Tokens the project honours; any other bearer token gets 401."""
        self.log: list[Logged] = []
        self.tokens: list[str] = []
        """Every bearer token received (tests check none of them reached a file)."""
        self.lock = threading.RLock()
        self._faults: list[_Fault] = []
        self.assets = AssetRoutes(self)
        self.evals = EvalRoutes(self, agent=agent, grader=grader)
        self.optimize = OptimizeRoutes(self)
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = [
            *self.assets.routes(),
            *self.evals.routes(),
            *self.optimize.routes(),
        ]
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> FakeFoundry:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def endpoint(self) -> str:
        """The project endpoint, as FOUNDRY_PROJECT_ENDPOINT would hold it."""
        return self.base + self.prefix

    # -- test helpers ------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        body: Any = None,
        retry_after: str | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` matching requests with `status` instead of the real reply."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        reply = Reply(status, body or {"error": {"code": str(status), "message": "injected"}})
        reply.headers.update(headers)
        with self.lock:
            self._faults.append(_Fault(method, re.compile(path_pattern), reply, times))

    def calls(self, method: str, path_pattern: str) -> list[Logged]:
        """Logged requests with this method whose path matches (re.search)."""
        pattern = re.compile(path_pattern)
        with self.lock:
            return [r for r in self.log if r.method == method and pattern.search(r.path)]

    def add_agent(self, name: str, definition: dict[str, Any], version: str = "1") -> None:
        self.assets.add_agent(name, definition, version)

    # -- dispatch ----------------------------------------------------------------------------
    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        split = urlsplit(raw_path)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        path = split.path
        in_project = path.startswith(self.prefix)
        if in_project:
            path = path[len(self.prefix) :] or "/"
        parsed: Any = body
        if body and "json" in headers.get("content-type", ""):
            try:
                parsed = json.loads(body)
            except ValueError:
                return error(400, "InvalidJson", "the request body is not valid JSON")
        request = Logged(method, path, query, headers, parsed)
        with self.lock:
            self.log.append(request)
        if in_project:
            auth = headers.get("authorization", "")
            if not auth.startswith("Bearer ") or not auth[7:].strip():
                return error(401, "Unauthorized", "missing or malformed bearer token")
            with self.lock:
                self.tokens.append(auth[7:].strip())
            if not self.accept_token(auth[7:].strip()):
                return error(401, "PermissionDenied", "the principal lacks access to the project")
            if not path.startswith("/openai/") and "api-version" not in query:
                return error(
                    400, "MissingApiVersion", "the api-version query parameter is required"
                )
            wanted = api_version_of(path)
            if wanted is not None and query.get("api-version") != wanted:
                return error(
                    400,
                    "UnsupportedApiVersion",
                    f"The HTTP resource that matches the request URI '{path}' does not support "
                    f"the API version '{query.get('api-version')}'.",
                )
        elif not path.startswith("/blobs/"):
            return error(404, "NotFound", f"no route {path}")
        with self.lock:
            for fault in self._faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                    fault.times -= 1
                    return fault.reply
        for verb, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if verb == method and match:
                with self.lock:
                    return handler(request, match)
        return error(404, "NotFound", f"no route {method} {path}")


ASSETS_API_VERSION = "2025-11-15-preview"
"""What azd sends to datasets and evaluators (`ProjectEndpointAPIVersion`,
internal/cmd/eval_helpers.go:31 at ae35809f); agents and optimization jobs take `v1`
(`optimize_api.APIVersion`, `agent_api.AgentEndpointAPIVersion`)."""


def api_version_of(path: str) -> str | None:
    """The api-version this fake accepts on `path` (None: the OpenAI-compatible routes)."""
    if path.startswith("/openai/"):
        return None
    if path.startswith(("/datasets", "/evaluators")):
        return ASSETS_API_VERSION
    return "v1"


class _RequestHandler(BaseHTTPRequestHandler):
    server: FakeFoundry
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return None

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            reply = self.server.handle(self.command, self.path, headers, body)
        except Exception as exc:  # a bug in the fake: answer 500 rather than hang the client
            reply = error(500, "FakeServerBug", f"{type(exc).__name__}: {exc}")
        if reply.body is None:
            raw, ctype = b"", None
        elif isinstance(reply.body, bytes):
            raw, ctype = reply.body, "application/octet-stream"
        elif isinstance(reply.body, str):
            raw, ctype = reply.body.encode(), "text/plain; charset=utf-8"
        else:
            raw, ctype = json.dumps(reply.body).encode(), "application/json"
        self.send_response(reply.status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("x-ms-request-id", f"req-{len(self.server.log)}")
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

"""Fixtures for the agent-target tests: scripted `mock:` models, a local HTTP server that
records requests and answers like an OpenAI-compatible agent, and the fixture programs."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentopt.models.providers.mock import MockFn, register_mock, unregister_mock

FIXTURES = Path(__file__).parent / "fixtures"
PYTHON = sys.executable


@pytest.fixture
def python() -> str:
    """The interpreter running the tests (it has the mcp SDK installed)."""
    return PYTHON


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def script() -> Iterator[Callable[[str, MockFn], str]]:
    """Register a scripted model for one test: `model = script("name", fn)`."""
    names: list[str] = []

    def add(name: str, fn: MockFn) -> str:
        register_mock(name, fn)
        names.append(name)
        return f"mock:{name}"

    yield add
    for name in names:
        unregister_mock(name)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[Recorded], tuple[int, Any]]


@dataclass
class RecordingServer:
    """A real HTTP server on 127.0.0.1 that records every request."""

    responder: Responder
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def recording_server() -> Iterator[Callable[[Responder], RecordingServer]]:
    servers: list[ThreadingHTTPServer] = []

    def start(responder: Responder) -> RecordingServer:
        state = RecordingServer(responder)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Recorded("POST", self.path, headers, body)
                state.requests.append(request)
                status, payload = state.responder(request)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        return state

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _responses_body(text: str, response_id: str = "resp_1", annotations: Any = None) -> dict:
    """A minimal Responses API answer."""
    return {
        "id": response_id,
        "object": "response",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": text, "annotations": annotations or []}
                ],
            }
        ],
        "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    }


def _chat_body(text: str, annotations: Any = None) -> dict:
    """A minimal chat-completions answer."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if annotations is not None:
        message["annotations"] = annotations
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "agent",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 4, "completion_tokens": 6, "total_tokens": 10},
    }


@pytest.fixture
def responses_body() -> Callable[..., dict]:
    return _responses_body


@pytest.fixture
def chat_body() -> Callable[..., dict]:
    return _chat_body

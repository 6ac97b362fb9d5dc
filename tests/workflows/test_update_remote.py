"""`--remote`: the dataset upload speaks the Foundry datasets protocol to a local recording
server (Foundry itself cannot be reached from tests). The real azure-ai-projects client runs;
only its endpoint and auth policy point at the local server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentopt.models.call import CallLayer, CallSettings
from agentopt.registry import Registry
from agentopt.workflows.generate.remote import RemoteUploadError, upload_dataset
from agentopt.workflows.generate.suite import SuiteRequest, generate_suite
from agentopt.workflows.update import update_suite
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401


class FoundryDatasets(ThreadingHTTPServer):
    """startPendingUpload → a SAS URL on this server; blob PUT; dataset version PATCH."""

    def __init__(self, fail: str = "") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, str, bytes]] = []
        self.fail = fail
        """"" = answer everything; "pending" = refuse the upload; "blob" = refuse the blob."""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FoundryDatasets

    def log_message(self, *args: Any) -> None:
        return None

    def _record(self) -> bytes:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests.append((self.command, self.path, body))
        return body

    def _json(self, code: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self) -> None:
        self._record()
        if self.server.fail == "pending":
            self._json(403, {"error": {"code": "Forbidden", "message": "no access"}})
            return
        sas = f"{self.server.base}/blobs/c1?sig=secret"
        self._json(
            200,
            {
                "blobReference": {
                    "blobUri": f"{self.server.base}/blobs/c1",
                    "storageAccountArmId": "arm",
                    "credential": {"sasUri": sas, "type": "SAS"},
                },
                "pendingUploadId": "p1",
                "pendingUploadType": "BlobReference",
            },
        )

    def do_PUT(self) -> None:
        self._record()
        if self.server.fail == "blob":
            message = f"Server failed to authenticate the request {self.path}"
            self._json(403, {"error": {"code": "AuthenticationFailed", "message": message}})
            return
        self.send_response(201)
        self.send_header("ETag", '"0x1"')
        self.send_header("Last-Modified", "Sun, 29 Nov 2026 20:00:00 GMT")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PATCH(self) -> None:
        body = json.loads(self._record())
        name, version = self.path.split("/datasets/")[1].split("?")[0].split("/versions/")
        self._json(201, {**body, "name": name, "version": version, "id": f"azureai://{name}"})


@pytest.fixture
def foundry() -> Iterator[FoundryDatasets]:
    server = FoundryDatasets()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _client(endpoint: str) -> Any:
    from azure.ai.projects import AIProjectClient
    from azure.core.credentials import AccessToken
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class NoCredential:
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            return AccessToken("unused", 2**31)

    # The bearer policy refuses plain http; the local server needs no token.
    return AIProjectClient(
        endpoint=endpoint, credential=NoCredential(), authentication_policy=SansIOHTTPPolicy()
    )


def _request(project: Path, gen: ScriptedGenerator, endpoint: str) -> SuiteRequest:
    return SuiteRequest(
        project_dir=project,
        config_path=project / "eval.yaml",
        suite_name="shop",
        agent_name="shop",
        instruction="A store support agent.",
        eval_model=gen.model,
        max_samples=3,
        dataset_name="shop-eval-seed",
        evaluator_name="shop-quality",
        remote=True,
        project_endpoint=endpoint,
    )


def test_generate_and_update_upload_the_dataset_and_record_the_remote_version(
    project: Path, foundry: FoundryDatasets, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    endpoint = f"{foundry.base}/api/projects/shop"

    async def main() -> Any:
        async with CallLayer(project, CallSettings(cache_enabled=False)) as layer:
            return await generate_suite(
                _request(project, gen, endpoint), layer, client_factory=_client
            )

    result = asyncio.run(main())
    copy = project / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"
    methods = [(m, p.split("?")[0]) for m, p, _ in foundry.requests]
    assert methods == [
        ("POST", "/api/projects/shop/datasets/shop-eval-seed/versions/1/startPendingUpload"),
        ("PUT", "/blobs/c1/shop-eval-seed.v1.jsonl"),
        ("PATCH", "/api/projects/shop/datasets/shop-eval-seed/versions/1"),
    ]
    assert foundry.requests[1][2] == copy.read_bytes()
    expected = {"endpoint": endpoint, "name": "shop-eval-seed", "version": "1"}
    assert result.dataset.remote == {**expected, "id": "azureai://shop-eval-seed"}
    entry = Registry(project).entry("datasets", "shop-eval-seed", "1")
    assert entry.remote == result.dataset.remote
    assert any("stays local" in n for n in result.notes)

    with copy.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "more", "query": "Do you ship to Canada?"}) + "\n")
    updated = update_suite(
        project / "eval.yaml", remote=True, project_endpoint=endpoint, client_factory=_client
    )
    assert updated.changes[0].remote is not None and updated.changes[0].remote["version"] == "2"
    assert foundry.requests[-1][1].startswith(
        "/api/projects/shop/datasets/shop-eval-seed/versions/2"
    )
    assert Registry(project).entry("datasets", "shop-eval-seed", "2").remote is not None


@pytest.mark.parametrize("fail", ["pending", "blob"])
def test_a_refused_upload_is_a_clear_error_and_records_nothing(project: Path, fail: str) -> None:
    server = FoundryDatasets(fail=fail)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        registry = Registry(project)
        registry.register_dataset("ds", b'{"query": "hi there"}\n')
        endpoint = f"{server.base}/api/projects/p"
        with pytest.raises(RemoteUploadError) as info:
            upload_dataset(registry, "ds", "1", endpoint, client_factory=_client)
        message = info.value.message
        assert info.value.exit_code == 3 and "uploading dataset ds version 1" in message
        assert "sig=secret" not in message
        assert registry.entry("datasets", "ds", "1").remote is None
    finally:
        server.shutdown()
        server.server_close()

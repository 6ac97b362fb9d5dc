"""The one Foundry client of `--remote`: its retry policy (429 / 5xx / dropped connections,
back-off honouring Retry-After), and failures turned into clear, masked errors."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from agentopt.workflows.remote.client import FoundryProject, RetrySettings
from agentopt.workflows.remote.errors import RemoteAuthError, RemoteError
from tests.foundry.conftest import TOKEN, FakeCredential
from tests.foundry.fake_project import FakeFoundry

JOBS = r"^/agent_optimization_jobs$"


def project(endpoint: str, sleeps: list[float], credential: Any = None) -> FoundryProject:
    return FoundryProject(
        endpoint,
        credential or FakeCredential(),
        retry=RetrySettings(attempts=4, base_delay_s=0.5, max_delay_s=5.0),
        sleep=sleeps.append,
    )


def list_jobs(client: FoundryProject) -> Any:
    return client.request("listing jobs", "GET", "/agent_optimization_jobs", preview=True)


def test_5xx_and_429_are_retried_with_back_off_and_retry_after(foundry: FakeFoundry) -> None:
    sleeps: list[float] = []
    foundry.fail("GET", JOBS, 503, times=2)
    foundry.fail("GET", JOBS, 429, retry_after="3")
    with project(foundry.endpoint, sleeps) as client:
        assert list_jobs(client)["data"] == []
    assert sleeps == [0.5, 1.0, 3.0]
    assert len(foundry.calls("GET", JOBS)) == 4


def test_retry_after_is_capped_and_retries_give_up(foundry: FakeFoundry) -> None:
    sleeps: list[float] = []
    foundry.fail("GET", JOBS, 429, retry_after="3600", times=10)
    with project(foundry.endpoint, sleeps) as client, pytest.raises(RemoteError) as info:
        list_jobs(client)
    assert sleeps == [5.0, 5.0, 5.0]
    assert info.value.exit_code == 3 and info.value.status == 429
    assert "gave up after 4 attempts" in info.value.message


def test_client_errors_are_not_retried_and_carry_the_service_message(
    foundry: FakeFoundry,
) -> None:
    sleeps: list[float] = []
    with project(foundry.endpoint, sleeps) as client, pytest.raises(RemoteError) as info:
        client.request("reading a job", "GET", "/agent_optimization_jobs/nope", preview=True)
    assert sleeps == [] and info.value.status == 404
    assert "reading a job failed: HTTP 404" in info.value.message
    assert "job nope not found" in info.value.message


def test_a_dropped_connection_is_transient_and_named(unused_port: int) -> None:
    sleeps: list[float] = []
    endpoint = f"http://127.0.0.1:{unused_port}/api/projects/p"
    with project(endpoint, sleeps) as client, pytest.raises(RemoteError) as info:
        list_jobs(client)
    assert len(sleeps) == 3 and "cannot reach" in info.value.message


def test_a_refused_token_names_the_credential_and_masks_echoed_secrets(
    foundry: FakeFoundry,
) -> None:
    sleeps: list[float] = []
    foundry.fail(
        "GET", JOBS, 401,
        body={"error": {"code": "Unauthorized", "message": f"token Bearer {TOKEN} expired"}},
    )  # fmt: skip
    with project(foundry.endpoint, sleeps) as client, pytest.raises(RemoteAuthError) as info:
        list_jobs(client)
    assert "refused the token from FakeCredential" in info.value.message
    assert TOKEN not in info.value.message and "az login" in (info.value.hint or "")


def test_the_token_is_asked_for_the_foundry_scope_and_never_sent_over_plain_http(
    foundry: FakeFoundry,
) -> None:
    credential = FakeCredential()
    with project(foundry.endpoint, [], credential) as client:
        list_jobs(client)
    assert credential.scopes[0] == ("https://ai.azure.com/.default",)
    assert foundry.log[-1].headers["authorization"] == f"Bearer {TOKEN}"
    plain = project("http://foundry.example.com/api/projects/p", [], credential)
    with plain as client, pytest.raises(RemoteError) as info:
        list_jobs(client)
    assert "plain http" in info.value.message


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

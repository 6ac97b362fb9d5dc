"""One connection to a Foundry project for `--remote` (docs/foundry-remote.md).

`FoundryProject` holds one `azure-ai-projects` client: its operations for what the SDK covers
(datasets, evaluators, agents, and the OpenAI-compatible evals API through
`get_openai_client()`), and its own pipeline (`send_request`: same credential, same user
agent) for the V2Preview optimization routes the SDK does not model. Every call goes through
`call`, the one place that retries (429, 5xx, dropped connections: exponential back-off that
honours `Retry-After`) and turns failures into `RemoteError`s that name the credential and
never carry a token. The SDKs' own retries are off so nothing retries twice.

The Azure SDKs are imported only when a remote command runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from agentopt.core.errors import AgentoptError
from agentopt.core.redaction import redact
from agentopt.workflows.remote.errors import SCOPE, classify

API_VERSION = "v1"
"""Agents and optimization jobs (azd `optimize_api.APIVersion`, `AgentEndpointAPIVersion`)."""
ASSETS_API_VERSION = "2025-11-15-preview"
"""Datasets and evaluators, as azd calls them (`ProjectEndpointAPIVersion`, eval_helpers.go)."""
OPTIMIZATION_FEATURE = "AgentsOptimization=V2Preview"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
log = logging.getLogger("agentopt.remote")

T = TypeVar("T")


@dataclass(frozen=True)
class RetrySettings:
    """How transient failures of one call are retried (the only retry policy of --remote)."""

    attempts: int = 5
    """Tries per call, the first included."""
    base_delay_s: float = 1.0
    """First back-off; doubled after every failure."""
    max_delay_s: float = 30.0
    """Cap on one wait, `Retry-After` included."""


def _bearer_policy(credential: Any, endpoint: str) -> Any:
    """The SDK's bearer-token policy; plain http is allowed only to a loopback host (a local
    emulator or test server), where the token never crosses a network."""
    from azure.core.pipeline.policies import BearerTokenCredentialPolicy

    loopback = urlsplit(endpoint).hostname in LOOPBACK

    class _Policy(BearerTokenCredentialPolicy):  # type: ignore[misc]
        def on_request(self, request: Any) -> None:
            if loopback:
                request.context.options["enforce_https"] = False
            super().on_request(request)

    return _Policy(credential, SCOPE)


def default_credential() -> Any:
    """`DefaultAzureCredential()` (environment, workload identity, managed identity, Azure CLI,
    azd, PowerShell… in that order), like the rest of agentopt's Azure access."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


class FoundryProject:
    """The project client. Build with `FoundryProject(endpoint)`; close when done."""

    def __init__(
        self,
        endpoint: str,
        credential: Any = None,
        *,
        retry: RetrySettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.retry = retry or RetrySettings()
        self._sleep = sleep
        self._credential = credential
        self._sdk: Any = None
        self._assets: Any = None
        self._openai: Any = None

    @property
    def credential(self) -> Any:
        if self._credential is None:
            self._credential = default_credential()
        return self._credential

    @property
    def sdk(self) -> Any:
        """The `azure.ai.projects.AIProjectClient` (no SDK-level retries)."""
        if self._sdk is None:
            self._sdk = self._project_client()
        return self._sdk

    @property
    def assets(self) -> Any:
        """The same client at azd's datasets/evaluators api-version (`ASSETS_API_VERSION`)."""
        if self._assets is None:
            self._assets = self._project_client(api_version=ASSETS_API_VERSION)
        return self._assets

    def _project_client(self, **extra: Any) -> Any:
        """A new `AIProjectClient` on this endpoint and credential, SDK retries off (this
        class retries)."""
        from azure.ai.projects import AIProjectClient

        return AIProjectClient(
            endpoint=self.endpoint,
            credential=self.credential,
            authentication_policy=_bearer_policy(self.credential, self.endpoint),
            retry_total=0,
            **extra,
        )

    @property
    def openai(self) -> Any:
        """The project's OpenAI client (`{endpoint}/openai/v1`, bearer-token auth)."""
        if self._openai is None:
            self._openai = self.sdk.get_openai_client(max_retries=0)
        return self._openai

    def call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one service call; retry it while it fails transiently.

        `what` says what was attempted ("creating the evaluation"); it starts every error.
        """
        attempt = 0
        while True:
            attempt += 1
            log.debug("%s (attempt %d) on %s", what, attempt, self.endpoint)
            try:
                return fn()
            except AgentoptError:
                raise
            except Exception as exc:
                failure = classify(exc, what, self.endpoint, self._credential)
                if not failure.transient or attempt >= self.retry.attempts:
                    if failure.transient:
                        failure.message += f" (gave up after {attempt} attempts)"
                    log.debug("%s: %s", what, failure.message)
                    raise failure from None
                delay = self._delay(attempt, failure.retry_after)
                log.info("%s; retrying in %.1f s", failure.message, delay)
                self._sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry.max_delay_s)
        return min(self.retry.base_delay_s * 2 ** (attempt - 1), self.retry.max_delay_s)

    def request(
        self,
        what: str,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
        preview: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """A raw call on the project's pipeline: JSON in, parsed JSON (or text) out.

        `preview` adds `Foundry-Features: AgentsOptimization=V2Preview`.
        """
        from azure.core.exceptions import HttpResponseError
        from azure.core.rest import HttpRequest

        sent = dict(headers or {})
        if preview:
            sent["Foundry-Features"] = OPTIMIZATION_FEATURE
        query = {"api-version": API_VERSION, **(params or {})}

        def send() -> Any:
            request = HttpRequest(method, path, params=query, json=body, headers=sent)
            response = self.sdk.send_request(request)
            log.debug("%s %s → HTTP %d", method, path, response.status_code)
            if response.status_code >= 400:
                raise HttpResponseError(response=response)
            text = response.text()
            if not text:
                return None
            if "json" in (response.headers.get("Content-Type") or ""):
                return json.loads(text)
            return text

        return self.call(what, send)

    def close(self) -> None:
        for client in (self._openai, self._sdk, self._assets):
            if client is not None:
                with contextlib.suppress(Exception):  # closing is best effort
                    client.close()
        self._openai = self._sdk = self._assets = None

    def __enter__(self) -> FoundryProject:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


ProjectFactory = Callable[[str], FoundryProject]
"""endpoint → a project client (tests pass one with a fake credential)."""


def plain(obj: Any) -> dict[str, Any]:
    """An SDK answer as plain JSON data: openai models (keeping the service's extra keys, such
    as `report_url`), azure-ai-projects models (nested ones too), or dicts."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", warnings=False)
    else:
        as_dict = getattr(obj, "as_dict", None)
        data = as_dict() if callable(as_dict) else obj
    result = json.loads(json.dumps(data, default=str))
    return result if isinstance(result, dict) else {}


def describe(value: Any) -> str:
    """A short, masked rendering of a service payload for messages."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = redact(text)
    return text if len(text) <= 300 else text[:297] + "..."

"""What can go wrong talking to a Foundry project, as agentopt errors (exit 3 unless noted).

    RemoteError            the service refused or failed a call (status, code, message)
    ├── RemoteAuthError    no token could be obtained, or the service refused it (401/403)
    └── RemoteRunFailed    an evaluation run or optimization job ended failed / canceled

`classify` maps the exceptions of azure-core, azure-identity and the openai SDK onto these,
deciding what is transient (429, 5xx, dropped connections) and reading `Retry-After`. Every
message is masked (`redact`): a token or SAS signature never reaches the terminal or a file.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentopt.core.errors import AgentoptError
from agentopt.core.redaction import redact

SCOPE = "https://ai.azure.com/.default"
"""The token scope of Foundry data-plane calls (azd and the SDK use the same)."""
_SAS_SIGNATURE = re.compile(r"(?i)\b(sig=)[^&\s\"']+")


class RemoteError(AgentoptError):
    """A call to the Foundry project failed."""

    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        code: str | None = None,
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(mask(message), hint=hint)
        self.status = status
        self.code = code
        self.transient = transient
        self.retry_after = retry_after


class RemoteAuthError(RemoteError):
    """No token, or a token the project refused."""


class RemoteRunFailed(RemoteError):
    """A remote evaluation run or optimization job ended without results."""


def mask(text: str) -> str:
    return redact(_SAS_SIGNATURE.sub(r"\1***", text))


def credential_name(credential: Any) -> str:
    """`DefaultAzureCredential` and, once it found one, the link of the chain that answered."""
    if credential is None:
        return "DefaultAzureCredential"
    name = type(credential).__name__
    inner = getattr(credential, "_successful_credential", None)
    if inner is not None:
        name += f" (via {type(inner).__name__})"
    return name


LOGIN_HINT = (
    "sign in with `az login` or `azd auth login` (or set AZURE_TENANT_ID, AZURE_CLIENT_ID and "
    "AZURE_CLIENT_SECRET for a service principal), and check that the identity has the "
    "Azure AI User role on the project"
)


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for key in ("retry-after-ms", "Retry-After-Ms", "x-ms-retry-after-ms"):
        value = headers.get(key)
        if value:
            try:
                return float(value) / 1000.0
            except ValueError:
                pass
    value = headers.get("Retry-After") or headers.get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _service_error(body: Any) -> tuple[str | None, str]:
    """(code, message) from `{"error": {"code", "message"}}`, a bare string, or raw text."""
    data = body
    if isinstance(body, (bytes, str)):
        try:
            data = json.loads(body)
        except (ValueError, TypeError):
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            return None, text.strip()[:300]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, str):
            return None, err
        if isinstance(err, dict):
            code = err.get("code")
            return (str(code) if code else None), str(err.get("message") or "").strip()[:500]
    return None, ""


def _body_of(response: Any) -> Any:
    text = getattr(response, "text", None)
    if callable(text):  # azure-core responses: text() reads the (already loaded) body
        try:
            return text()
        except Exception:
            return None
    return text


def _from_status(
    what: str, endpoint: str, status: int, body: Any, headers: Any, credential: Any
) -> RemoteError:
    code, message = _service_error(body)
    detail = f"{code}: {message}" if code and message else (message or code or "no details")
    text = f"{what} failed: HTTP {status} from {endpoint}: {detail}"
    if status in (401, 403):
        return RemoteAuthError(
            f"{what} failed: the project refused the token from {credential_name(credential)} "
            f"(HTTP {status}: {detail})",
            hint=LOGIN_HINT,
            status=status,
            code=code,
        )
    transient = status == 429 or status >= 500
    return RemoteError(
        text,
        status=status,
        code=code,
        transient=transient,
        retry_after=_retry_after(headers) if transient else None,
        hint="the service is busy; try again later" if transient else None,
    )


def classify(exc: BaseException, what: str, endpoint: str, credential: Any) -> RemoteError:
    """Any SDK / transport exception → a RemoteError (with `transient` and `retry_after`)."""
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ServiceRequestError,
        ServiceResponseError,
    )

    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None) if response is not None else None
    if isinstance(exc, ClientAuthenticationError) and status is None:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return RemoteAuthError(
            f"{what} failed: no token for {SCOPE} from {credential_name(credential)}: "
            + " | ".join(lines[:12]),
            hint=LOGIN_HINT,
        )
    if isinstance(exc, HttpResponseError) and isinstance(status, int) and response is not None:
        return _from_status(
            what, endpoint, status, _body_of(response), response.headers, credential
        )
    if isinstance(exc, ServiceRequestError) and "non-TLS" in str(exc):
        return RemoteError(
            f"{what} failed: {endpoint} is plain http; a token is only sent over https "
            "(or to a loopback test server)",
            hint="use the project's https endpoint (FOUNDRY_PROJECT_ENDPOINT)",
        )
    if isinstance(exc, (ServiceRequestError, ServiceResponseError)):
        return RemoteError(
            f"{what} failed: cannot reach {endpoint}: {exc}",
            transient=True,
            hint="check the project endpoint and the network",
        )
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        openai = None  # type: ignore[assignment]
    if openai is not None:
        if isinstance(exc, openai.APIStatusError):
            return _from_status(
                what, endpoint, exc.status_code, exc.response.text, exc.response.headers, credential
            )
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return RemoteError(
                f"{what} failed: cannot reach {endpoint}: {exc}",
                transient=True,
                hint="check the project endpoint and the network",
            )
    return RemoteError(f"{what} failed: {type(exc).__name__}: {exc}")

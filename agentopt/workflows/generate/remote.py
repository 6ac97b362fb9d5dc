"""`--remote`: upload a registered dataset version to the Foundry project (files.md §6).

Uses the datasets API of `azure-ai-projects` (`AIProjectClient.datasets.upload_file`: a
pending-upload request, a blob upload to the SAS URL it returns, then the dataset version)
and records where the version went in registry.json. The Azure SDK is imported only here and
only when `--remote` is given, so the CLI stays fast. Evaluators have no datasets-API
equivalent: they stay local and the summary says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentopt.core.errors import AgentoptError, ConfigError, Problem
from agentopt.core.redaction import redact
from agentopt.registry import Registry

_SAS_SIGNATURE = re.compile(r"(?i)\b(sig=)[^&\s\"']+")
"""The signature of a blob SAS URL: a credential, never shown."""

ClientFactory = Callable[[str], Any]
"""endpoint → an object with `.datasets.upload_file(name=, version=, file_path=)`."""


class RemoteUploadError(AgentoptError):
    """The Foundry project refused or could not be reached (exit 3)."""

    exit_code = 3


def require_endpoint(endpoint: str | None) -> str:
    """The project endpoint `--remote` needs, or a ConfigError naming how to set it."""
    if not endpoint:
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "--remote",
                    "uploading needs a Foundry project endpoint, and none is configured",
                )
            ],
            hint="pass --project-endpoint URL or set FOUNDRY_PROJECT_ENDPOINT "
            "(e.g. https://<resource>.services.ai.azure.com/api/projects/<project>)",
        )
    return endpoint


def default_client(endpoint: str) -> Any:
    """`AIProjectClient(endpoint, DefaultAzureCredential())` at azd's datasets api-version
    (`2025-11-15-preview`, azd `ProjectEndpointAPIVersion`; lazy imports)."""
    from azure.ai.projects import AIProjectClient
    from azure.identity import DefaultAzureCredential

    return AIProjectClient(
        endpoint=endpoint, credential=DefaultAzureCredential(), api_version="2025-11-15-preview"
    )


def upload_dataset(
    registry: Registry,
    name: str,
    version: str,
    endpoint: str,
    *,
    client_factory: ClientFactory | None = None,
    client: Any = None,
) -> dict[str, Any]:
    """Upload the registered file of `name` `version`; record and return `{endpoint, name,
    version, id?}` in registry.json.

    `client`: an open project client to use (and leave open); else one is built and closed.
    """
    path = registry.lookup("datasets", name, version)
    owned = client is None
    if client is None:
        client = (client_factory or default_client)(endpoint)
    try:
        result = client.datasets.upload_file(name=name, version=version, file_path=str(path))
    except Exception as exc:  # the SDK raises HttpResponseError, ValueError, auth errors
        text = f"uploading dataset {name} version {version} to {endpoint} failed: {exc}"
        raise RemoteUploadError(
            redact(_SAS_SIGNATURE.sub(r"\1***", text)),
            hint="check `az login` and the project endpoint; the local version is registered",
        ) from None
    finally:
        close = getattr(client, "close", None) if owned else None
        if close is not None:
            close()
    remote = {"endpoint": endpoint, "name": name, "version": str(getattr(result, "version", ""))}
    remote_id = getattr(result, "id", None)
    if remote_id:
        remote["id"] = str(remote_id)
    registry.set_remote("datasets", name, version, remote)
    return remote

"""Project assets of the fake Foundry project: datasets (and the blob store their upload goes
to), evaluators, agents and agent versions.

Spec sources (Azure/azure-rest-api-specs, specification/ai-foundry/data-plane/Foundry/src/):
- datasets: `datasets/routes.tsp` + `common/servicepatterns.tsp` `VersionedOperations`
  (`PATCH /datasets/{name}/versions/{version}` createOrUpdateVersion,
  `POST …/startPendingUpload` → `{blobReference: {blobUri, storageAccountArmId,
  credential: {sasUri, type: "SAS"}}, pendingUploadId, pendingUploadType: "BlobReference"}`,
  `GET …/versions/{version}`); the blob `PUT` is Azure Blob Storage's Put Blob.
- evaluators: `evaluators/routes.tsp` (`POST /evaluators/{name}/versions` → 201, the version
  auto-incremented; `GET /evaluators/{name}/versions/{version}`); the rubric definition is
  `RubricBasedEvaluatorDefinition` `{type: "rubric", dimensions: [{id, description, weight,
  always_applicable?}], pass_threshold?}`.
- agents: `agents/routes.tsp` (`GET /agents/{name}` → `{object: "agent", id, name, versions:
  {latest: AgentVersion}}`, `POST /agents/{name}/versions` `{definition, metadata?,
  description?}`, `GET /agents/{name}/versions/{version}` with `status` creating → active).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.foundry.fake_project import FakeFoundry, Logged, Reply

Route = tuple[str, re.Pattern[str], Callable[["Logged", re.Match[str]], "Reply"]]
_ids = itertools.count(1)


def _reply(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
    from tests.foundry.fake_project import Reply

    return Reply(status, body, headers or {})


def _error(status: int, code: str, message: str) -> Reply:
    return _reply(status, {"error": {"code": code, "message": message}})


class AssetRoutes:
    """Datasets, blobs, evaluators and agents."""

    def __init__(self, server: FakeFoundry) -> None:
        self.server = server
        self.blobs: dict[str, bytes] = {}
        self.datasets: dict[tuple[str, str], dict[str, Any]] = {}
        self.evaluators: dict[str, dict[str, dict[str, Any]]] = {}
        self.agents: dict[str, dict[str, dict[str, Any]]] = {}
        self._version_gets: dict[tuple[str, str], int] = {}

    def routes(self) -> list[Route]:
        c = re.compile
        return [
            ("POST", c(r"/datasets/([^/]+)/versions/([^/]+)/startPendingUpload"), self.pending),
            ("PUT", c(r"/blobs/(.+)"), self.put_blob),
            ("PATCH", c(r"/datasets/([^/]+)/versions/([^/]+)"), self.dataset_version),
            ("GET", c(r"/datasets/([^/]+)/versions/([^/]+)"), self.get_dataset),
            ("POST", c(r"/evaluators/([^/]+)/versions"), self.create_evaluator),
            ("GET", c(r"/evaluators/([^/]+)/versions/([^/]+)"), self.get_evaluator),
            ("GET", c(r"/agents/([^/:]+)"), self.get_agent),
            ("POST", c(r"/agents/([^/:]+)/versions"), self.create_agent_version),
            ("GET", c(r"/agents/([^/:]+)/versions/([^/]+)"), self.get_agent_version),
        ]

    # -- datasets ----------------------------------------------------------------------------
    def pending(self, req: Logged, m: re.Match[str]) -> Reply:
        container = f"{self.server.base}/blobs/c{next(_ids)}"
        return _reply(
            200,
            {
                "blobReference": {
                    "blobUri": container,
                    "storageAccountArmId": "/subscriptions/0/storage/fake",
                    "credential": {
                        "sasUri": f"{container}?sv=2024&sig=fake-sas-signature",
                        "type": "SAS",
                    },
                },
                "pendingUploadId": f"pending-{m.group(1)}-{m.group(2)}",
                "pendingUploadType": "BlobReference",
            },
        )

    def put_blob(self, req: Logged, m: re.Match[str]) -> Reply:
        data = req.body if isinstance(req.body, bytes) else str(req.body).encode()
        self.blobs[f"{self.server.base}/blobs/{m.group(1)}"] = data
        return _reply(
            201, None, {"ETag": '"0x1"', "Last-Modified": "Sun, 29 Nov 2026 20:00:00 GMT"}
        )

    def dataset_version(self, req: Logged, m: re.Match[str]) -> Reply:
        name, version = m.group(1), m.group(2)
        body = req.body if isinstance(req.body, dict) else {}
        uri = body.get("dataUri")
        if not isinstance(uri, str) or uri not in self.blobs:
            return _error(400, "InvalidDataUri", f"dataUri {uri!r} names no uploaded blob")
        record = {
            **body,
            "name": name,
            "version": version,
            "id": f"azureai://accounts/127/projects/{self.server.project}/data/{name}/versions/{version}",
        }
        self.datasets[(name, version)] = record
        return _reply(201, record)

    def get_dataset(self, req: Logged, m: re.Match[str]) -> Reply:
        record = self.datasets.get((m.group(1), m.group(2)))
        if record is None:
            return _error(404, "NotFound", f"dataset {m.group(1)} version {m.group(2)} not found")
        return _reply(200, record)

    def dataset_rows(self, file_id: str) -> list[dict[str, Any]] | None:
        """The rows of `azureai://…/data/<name>/versions/<v>` (None when unknown)."""
        import json

        found = re.search(r"/data/([^/]+)/versions/([^/]+)$", file_id)
        record = self.datasets.get((found.group(1), found.group(2))) if found else None
        if record is None:
            return None
        text = self.blobs[record["dataUri"]].decode("utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- evaluators --------------------------------------------------------------------------
    def create_evaluator(self, req: Logged, m: re.Match[str]) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        definition = body.get("definition")
        missing = [k for k in ("evaluator_type", "categories", "definition") if k not in body]
        if missing:
            return _error(400, "ValidationError", f"missing required fields: {', '.join(missing)}")
        if not isinstance(definition, dict) or definition.get("type") not in (
            "prompt",
            "code",
            "rubric",
            "prompt_and_code",
            "service",
            "openai_graders",
            "endpoint",
        ):
            return _error(400, "ValidationError", "definition.type is not a known definition type")
        if definition["type"] == "rubric":
            dims = definition.get("dimensions")
            if not isinstance(dims, list) or not dims:
                return _error(400, "ValidationError", "a rubric definition needs dimensions")
            for dim in dims:
                if not {"id", "description", "weight"} <= set(dim):
                    return _error(
                        400, "ValidationError", "a dimension needs id, description, weight"
                    )
        versions = self.evaluators.setdefault(m.group(1), {})
        version = str(len(versions) + 1)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = {
            **body,
            "name": m.group(1),
            "version": version,
            "id": f"azureai://evaluators/{m.group(1)}/versions/{version}",
            "created_by": "fake-user",
            "created_at": now,
            "modified_at": now,
        }
        versions[version] = record
        return _reply(201, record)

    def get_evaluator(self, req: Logged, m: re.Match[str]) -> Reply:
        record = self.evaluators.get(m.group(1), {}).get(m.group(2))
        if record is None:
            return _error(404, "NotFound", f"evaluator {m.group(1)} version {m.group(2)} not found")
        return _reply(200, record)

    def evaluator_known(self, name: str, version: str | None) -> bool:
        versions = self.evaluators.get(name, {})
        return bool(versions) and (version is None or version in versions)

    # -- agents ------------------------------------------------------------------------------
    def add_agent(self, name: str, definition: dict[str, Any], version: str = "1") -> None:
        self.agents.setdefault(name, {})[version] = self._version(name, version, definition, {})
        self._version_gets[(name, version)] = self.server.polls_per_state  # already active

    def _version(
        self, name: str, version: str, definition: dict[str, Any], body: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "object": "agent.version",
            "id": f"{name}:{version}",
            "name": name,
            "version": version,
            "description": body.get("description"),
            "metadata": body.get("metadata") or {},
            "created_at": int(time.time()),
            "definition": definition,
            "status": "creating",
        }

    def _status(self, name: str, version: str) -> str:
        seen = self._version_gets.get((name, version), 0)
        return "active" if seen >= self.server.polls_per_state else "creating"

    def get_agent(self, req: Logged, m: re.Match[str]) -> Reply:
        versions = self.agents.get(m.group(1))
        if not versions:
            return _error(404, "NotFound", f"agent {m.group(1)} not found")
        latest = versions[max(versions, key=int)]
        latest = {**latest, "status": self._status(m.group(1), latest["version"])}
        return _reply(
            200,
            {
                "object": "agent",
                "id": m.group(1),
                "name": m.group(1),
                "versions": {"latest": latest},
            },
        )

    def create_agent_version(self, req: Logged, m: re.Match[str]) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        definition = body.get("definition")
        if not isinstance(definition, dict) or "kind" not in definition:
            return _error(400, "ValidationError", "definition with a kind is required")
        env = definition.get("environment_variables") or {}
        reserved = [k for k in env if k.startswith(("AGENT_", "FOUNDRY_"))]
        if reserved:
            return _error(
                400,
                "ValidationError",
                f"AGENT_* variables are reserved for platform use: {reserved}",
            )
        versions = self.agents.setdefault(m.group(1), {})
        version = str(max((int(v) for v in versions), default=0) + 1)
        versions[version] = self._version(m.group(1), version, definition, body)
        self._version_gets[(m.group(1), version)] = 0
        return _reply(200, versions[version])

    def get_agent_version(self, req: Logged, m: re.Match[str]) -> Reply:
        name, version = m.group(1), m.group(2)
        record = self.agents.get(name, {}).get(version)
        if record is None:
            return _error(404, "NotFound", f"agent {name} version {version} not found")
        self._version_gets[(name, version)] = self._version_gets.get((name, version), 0) + 1
        return _reply(200, {**record, "status": self._status(name, version)})

    def agent_exists(self, name: str, version: str | None) -> bool:
        versions = self.agents.get(name, {})
        return bool(versions) and (version is None or version in versions)

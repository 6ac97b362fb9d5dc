"""Creating a remote evaluation run: rubrics and the dataset registered (or reused by content
hash), the evaluation created (or reused), the run started against the deployed agent."""

from __future__ import annotations

import base64
import re
import uuid
from pathlib import Path
from typing import Any

from agentopt.registry import Registry
from agentopt.workflows.generate.remote import upload_dataset
from agentopt.workflows.remote.azd_state import project_id
from agentopt.workflows.remote.client import FoundryProject
from agentopt.workflows.remote.eval_request import (
    RemoteCriterion,
    body_hash,
    dataset_file_id,
    eval_body,
    inline_source,
    rubric_version_body,
    run_body,
)
from agentopt.workflows.remote.eval_setup import RemoteSetup
from agentopt.workflows.remote.index import RemoteIndex

_ARM = re.compile(
    r"/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/"
    r"Microsoft\.CognitiveServices/accounts/(?P<account>[^/]+)/projects/(?P<project>[^/]+)",
    re.IGNORECASE,
)


def portal_prefix(project_id: str | None) -> str | None:
    """azd `NewPortalPrefix`: the portal address of a project, from its ARM resource id
    (`AZURE_AI_PROJECT_ID`); the subscription GUID's bytes, base64url without padding."""
    found = _ARM.search(project_id or "")
    if not found:
        return None
    try:
        sub = base64.urlsafe_b64encode(uuid.UUID(found["sub"]).bytes).decode().rstrip("=")
    except ValueError:
        return None
    return (
        f"https://ai.azure.com/nextgen/r/{sub},{found['rg']},,{found['account']},{found['project']}"
    )


def portal_run_url(project_id: str | None, eval_id: str, run_id: str) -> str | None:
    """azd `PortalPrefix.EvalRunURL`."""
    prefix = portal_prefix(project_id)
    return f"{prefix}/build/evaluations/{eval_id}/run/{run_id}" if prefix else None


def register_rubrics(
    project: FoundryProject, criteria: list[RemoteCriterion], folder: Path
) -> None:
    """Each rubric once per content: its version in the project is remembered."""
    index = RemoteIndex(folder)
    for crit in criteria:
        if crit.rubric is None:
            continue
        body = rubric_version_body(crit)
        key = f"{project.endpoint}|{crit.foundry_name}|{body_hash(body)}"
        version = index.get("evaluators", key)
        if version is None:

            def create(name: str = crit.foundry_name, request: dict[str, Any] = body) -> Any:
                return project.assets.evaluators.create_version(name, request)

            created = project.call(f"registering evaluator {crit.foundry_name}", create)
            version = str(created["version"])
            index.put("evaluators", key, version)
        crit.version = version


def _source(project: FoundryProject, setup: RemoteSetup) -> tuple[dict[str, Any], dict[str, Any]]:
    """A registered dataset used whole → `file_id` (azd `SetFileID`; uploaded once when only
    agentopt's registry has it); else the rows inline."""
    ds = setup.inputs.dataset
    name, version = ds.name or "", ds.version or ""
    if ds.format != "jsonl" or not (name and version) or len(setup.tasks) != len(ds.tasks):
        return inline_source(setup.tasks), {}
    uploaded = uploaded_version(project, setup.spec.project_dir, name, version)
    registry = Registry(setup.spec.project_dir)
    known = version in registry.versions("datasets", name)
    remote = (registry.entry("datasets", name, version).remote if known else None) or {}
    file_id = str(remote.get("id") or dataset_file_id(project.endpoint, name, uploaded))
    return {"type": "file_id", "id": file_id}, {"name": name, "version": uploaded}


def uploaded_version(project: FoundryProject, folder: Path, name: str, version: str) -> str:
    """The project's version of dataset `name` `version`: agentopt's registered copy, uploaded
    once per endpoint; a version agentopt never registered is taken to be the project's own
    (registered by azd or the portal), as azd takes it."""
    registry = Registry(folder)
    if version not in registry.versions("datasets", name):
        return version
    remote = registry.entry("datasets", name, version).remote
    if not remote or remote.get("endpoint") != project.endpoint:

        def upload() -> dict[str, Any]:
            return upload_dataset(registry, name, version, project.endpoint, client=project.assets)

        remote = project.call(f"uploading dataset {name} version {version}", upload)
    return str(remote.get("version") or version)


def submit(project: FoundryProject, setup: RemoteSetup, run_id: str) -> dict[str, Any]:
    """Everything up to the created run; returns the `remote` section of run.json."""
    register_rubrics(project, setup.criteria, setup.spec.project_dir)
    source, dataset = _source(project, setup)
    suite = setup.inputs.eval_config.name if setup.inputs.eval_config else None
    body = eval_body(
        suite=suite or setup.agent_name,
        agent=setup.agent_name,
        version=setup.agent_version,
        criteria=setup.criteria,
        eval_model=setup.inputs.judge_model,
        ground_truth=any(t.ground_truth for t in setup.tasks),
    )
    index = RemoteIndex(setup.spec.project_dir)
    key = f"{project.endpoint}|{body_hash(body)}"
    eval_id = index.get("evals", key)
    if eval_id is None:
        created = project.call(
            "creating the evaluation", lambda: project.openai.evals.create(**body)
        )
        eval_id = str(created.id)
        index.put("evals", key, eval_id)
    request = run_body(
        name=setup.opts.name or suite or setup.agent_name,
        agent=setup.agent_name,
        version=setup.agent_version,
        source=source,
        run_id=run_id,
    )
    run = project.call(
        "starting the evaluation run",
        lambda: project.openai.evals.runs.create(eval_id, **request),
    )
    report = getattr(run, "report_url", None) or (getattr(run, "model_extra", None) or {}).get(
        "report_url"
    )
    return {
        "endpoint": project.endpoint,
        "eval_id": eval_id,
        "run_id": str(run.id),
        "status": str(getattr(run, "status", "queued")),
        "report_url": report
        or portal_run_url(
            project_id(setup.spec.project_dir, setup.opts.environment), eval_id, str(run.id)
        ),
        "agent": setup.agent_name,
        "agent_version": setup.agent_version,
        "source": source["type"],
        "dataset": dataset or None,
        "criteria": {c.name: c.evaluator for c in setup.criteria},
    }

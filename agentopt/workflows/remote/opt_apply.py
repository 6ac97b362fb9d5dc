"""`optimize apply` and `optimize deploy` for a Foundry optimization job, as azd has them.

apply (azd `OptimizeApplyAction`): the candidate's configuration (`GET …/candidates/{id}/config`),
its file list (`GET …/candidates/{id}`) and skill files (`GET …/files?path=`) become
`.agent_configs/<id>/` (metadata.yaml, instructions.md, skills/<name>/SKILL.md, tools.json —
through the same job-folder copy a local apply makes), then the agent definition gets
`OPTIMIZATION_LOCAL_DIR` / `OPTIMIZATION_CANDIDATE_ID` and the azd environment
`AGENT_<SVC>_OPTIMIZATION_CANDIDATE_ID`.

deploy (azd `OptimizeDeployAction.runDirect`): the candidate's configuration, the deployed
agent's latest definition (`GET /agents/{name}`), a new version (`POST /agents/{name}/versions`)
carrying `OPTIMIZATION_CONFIG=<candidate JSON>` (a hosted agent reads it; a prompt agent's
definition takes the candidate's instructions and model directly), wait until it is active
(`GET /agents/{name}/versions/{v}`), then record it (`POST …/candidates/{id}:promote`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from agentopt.contracts.optimize_job import JobRecord
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.core.files.azd_env import service_env_prefix
from agentopt.core.files.problems import Collector
from agentopt.core.files.skills import parse_skill
from agentopt.core.paths import AGENT_CONFIGS_DIR
from agentopt.workflows.optimize.apply import ApplyResult, apply_candidate
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.remote.azd_state import service_for, set_agent_environment, set_azd_values
from agentopt.workflows.remote.client import FoundryProject, describe, plain
from agentopt.workflows.remote.errors import RemoteError
from agentopt.workflows.remote.opt_job import accepted, remote_candidate_id
from agentopt.workflows.remote.opt_run import JOBS
from agentopt.workflows.remote.polling import PollSettings, poll_until

INSTRUCTION_KEYS = ("system_prompt", "systemPrompt", "instructions")
"""Where a candidate config holds its instructions (azd `extractInstructions`)."""


def _remote(job: JobRecord) -> dict[str, Any]:
    return accepted(job)


def _known(job: JobRecord, cand: str) -> None:
    if job.candidate(cand) is None:
        known = ", ".join(c.id for c in job.candidates) or "none yet"
        raise ConfigError.at(
            "", "--candidate", f"no candidate '{cand}' in job {job.id} (candidates: {known})"
        )


def candidate_config(project: FoundryProject, job: JobRecord, cand: str) -> dict[str, Any]:
    remote = _remote(job)
    path = f"{JOBS}/{remote['job_id']}/candidates/{remote_candidate_id(job, cand)}/config"
    config = project.request("fetching the candidate configuration", "GET", path, preview=True)
    if not isinstance(config, dict):
        raise RemoteError(f"the configuration of candidate {cand} is not a JSON object")
    return config


def _instructions(config: dict[str, Any]) -> str:
    return next((str(config[k]) for k in INSTRUCTION_KEYS if isinstance(config.get(k), str)), "")


def _files(project: FoundryProject, job: JobRecord, cand: str) -> dict[str, str]:
    """The candidate's skill files, by relative path (paths leaving the folder are refused)."""
    remote = _remote(job)
    base = f"{JOBS}/{remote['job_id']}/candidates/{remote_candidate_id(job, cand)}"
    manifest = project.request("fetching the candidate file list", "GET", base, preview=True)
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    files: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        path = str(entry.get("path") or "")
        if entry.get("type") != "skill" and not path.startswith("skills/"):
            continue
        pure = PurePosixPath(path)
        if not path or pure.is_absolute() or ".." in pure.parts:
            continue  # azd `SafePath`: never write outside the candidate folder
        text = project.request(
            f"downloading {path}", "GET", f"{base}/files", params={"path": path}, preview=True
        )
        files[path] = text if isinstance(text, str) else json.dumps(text)
    return files


def _definition(job: JobRecord, config: dict[str, Any], files: dict[str, str]) -> AgentDefinition:
    skills: dict[str, Skill] = {}
    for raw in config.get("skills") or []:
        if isinstance(raw, dict) and raw.get("name"):
            skills[str(raw["name"])] = Skill(
                name=str(raw["name"]),
                description=str(raw.get("description") or ""),
                body=str(raw.get("body") or ""),
            )
    for path, text in files.items():
        skill = parse_skill(text, Path(path), Collector(path))
        if skill is not None:
            skills[skill.name] = skill.model_copy(update={"path": None})
    tools = [t for t in config.get("tools") or [] if isinstance(t, dict)]
    agent = job.config.get("agent") or {}
    name = config.get("agent_name") or config.get("name") or agent.get("name") or "agent"
    return AgentDefinition(
        name=str(name),
        model=str(config["model"]) if isinstance(config.get("model"), str) else agent.get("model"),
        instructions=_instructions(config),
        tools=tools,
        skills=list(skills.values()),
    )


def fetch_candidate(store: JobStore, project: FoundryProject, cand: str) -> Path:
    """The candidate's configuration in the job folder (`candidates/<id>/`), from Foundry."""
    job = store.read_job()
    _known(job, cand)
    config = candidate_config(project, job, cand)
    files = _files(project, job, cand)
    folder = store.candidate_dir(cand)
    staging = Path(tempfile.mkdtemp(prefix=f".{cand}.", dir=store.dir))
    try:
        write_agent_config(staging / cand, _definition(job, config, files))
        if folder.exists():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        (staging / cand).rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


@dataclass
class RemoteApply:
    """What `optimize apply` did for a remote job."""

    result: ApplyResult
    definition_file: Path | None = None
    env_file: Path | None = None
    notes: list[str] = field(default_factory=list)


def apply_remote(
    project_dir: Path,
    job_id: str | None,
    cand: str,
    project: FoundryProject,
    *,
    promote: bool,
    environment: str | None = None,
) -> RemoteApply:
    """azd `optimize apply`: fetch, write `.agent_configs/<id>/`, point the agent at it."""
    from agentopt.workflows.optimize.journal import resolve_job

    store = resolve_job(project_dir, job_id)
    job = store.read_job()
    remote = _remote(job)
    fetch_candidate(store, project, cand)
    if cand != "baseline" and not store.candidate_dir("baseline").is_dir():
        fetch_candidate(store, project, "baseline")  # the diff is against it
    # The Foundry job chose this candidate; its promotion is confirmed by the service's own
    # flow (`force`), the local diff and tool names are still printed by the CLI.
    result = apply_candidate(project_dir, cand, store.job_id, promote=promote, force=True)
    out = RemoteApply(result=result)
    environment = environment or remote.get("environment")
    service = service_for(
        project_dir, remote.get("agent"), str(remote.get("service") or ""), environment
    )
    if service is None:
        out.notes.append("no azd agent service found: only .agent_configs/ was written")
        return out
    candidate_id = remote_candidate_id(job, cand)
    out.definition_file = set_agent_environment(
        project_dir,
        service,
        {"OPTIMIZATION_LOCAL_DIR": AGENT_CONFIGS_DIR, "OPTIMIZATION_CANDIDATE_ID": cand},
    )
    out.env_file = set_azd_values(
        project_dir,
        {service_env_prefix(service) + "OPTIMIZATION_CANDIDATE_ID": candidate_id},
        environment,
    )
    out.notes.append(f"deploy it with `azd deploy --service {service}`")
    return out


@dataclass
class Deployed:
    agent: str
    version: str
    candidate: str
    promoted: bool = True
    notes: list[str] = field(default_factory=list)


def _new_definition(latest: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The latest definition, with the candidate applied (azd `buildDeployDefinition`)."""
    definition = {k: v for k, v in latest.items() if k != "environment_variables"}
    if definition.get("kind") == "prompt":
        if _instructions(config):
            definition["instructions"] = _instructions(config)
        if isinstance(config.get("model"), str):
            definition["model"] = config["model"]
        return definition
    env = dict(latest.get("environment_variables") or {})
    env["OPTIMIZATION_CONFIG"] = json.dumps(config, separators=(",", ":"))
    definition["environment_variables"] = env
    for key in ("protocol_versions", "container_protocol_versions"):
        for entry in definition.get(key) or []:
            if isinstance(entry, dict) and entry.get("version") == "v1":
                entry["version"] = "1.0.0"
    return definition


def deploy_remote(
    project_dir: Path,
    job_id: str | None,
    cand: str,
    project: FoundryProject,
    poll: PollSettings,
    agent_name: str | None = None,
) -> Deployed:
    """azd `optimize deploy`: a new agent version with the candidate, then `:promote`.
    `agent_name` (azd `deploy [agent-name]` / `--agent`) overrides the job's agent."""
    from agentopt.workflows.optimize.journal import resolve_job

    store = resolve_job(project_dir, job_id)
    job = store.read_job()
    remote = _remote(job)
    _known(job, cand)
    name = agent_name or str(remote["agent"])
    config = candidate_config(project, job, cand)
    agent = plain(project.call(f"reading agent {name}", lambda: project.sdk.agents.get(name)))
    latest = dict(((agent.get("versions") or {}).get("latest") or {}).get("definition") or {})
    body = {
        "description": f"Optimized: candidate {cand}",
        "metadata": {"optimized_from": remote_candidate_id(job, cand)},
        "definition": _new_definition(latest, config),
    }
    created = project.call(
        f"creating a version of agent {name}", lambda: project.sdk.agents.create_version(name, body)
    )
    version = str(created["version"])

    def read() -> dict[str, Any]:
        got = project.call(
            f"reading agent {name} version {version}",
            lambda: project.sdk.agents.get_version(name, version),
        )
        return plain(got)

    final = poll_until(
        read,
        lambda v: v.get("status") in ("active", "failed"),
        PollSettings(poll.interval_s, poll.max_interval_s, poll.growth, poll.timeout_s or 300.0),
        what=f"agent {name} version {version}",
    )
    if final.get("status") == "failed":
        raise RemoteError(
            f"agent {name} version {version} failed to activate: "
            + describe(final.get("error") or "no error details")
        )
    out = Deployed(agent=name, version=version, candidate=cand)
    path = f"{JOBS}/{remote['job_id']}/candidates/{remote_candidate_id(job, cand)}:promote"
    try:
        project.request(
            "recording the deployment",
            "POST",
            path,
            body={"agent_name": name, "agent_version": version},
            preview=True,
        )
    except RemoteError as err:  # azd: non-fatal, the version exists
        out.promoted = False
        out.notes.append(f"the deployment could not be recorded in the job: {err.message}")
    return out

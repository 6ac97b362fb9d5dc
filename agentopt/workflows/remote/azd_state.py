"""The azd files `optimize --remote` and `optimize apply` write, as the azd extension does:

- the azd environment `.azure/<env>/.env`: `AGENT_<SVC>_OPTIMIZATION_JOB_ID` and
  `OPTIMIZE_LAST_OPERATION_ID` on submit (azd `saveLastOptimizeJobID`),
  `AGENT_<SVC>_OPTIMIZATION_CANDIDATE_ID` on apply;
- the agent definition's environment on apply: `OPTIMIZATION_LOCAL_DIR=.agent_configs` and
  `OPTIMIZATION_CANDIDATE_ID=<id>` — the service's `env` in azure.yaml for an inline definition
  (azd `persistInlineAgentEnvironment`), else agent.yaml `environment_variables`
  (azd `upsertAgentYamlEnvVar`).

Every rewrite keeps a backup and the file's comments (ruamel round-trip for YAML); without an
azd project or environment nothing is written (azd's best-effort too).
"""

from __future__ import annotations

import re
from pathlib import Path

from agentopt.core.atomic import backup, write_text_atomic
from agentopt.core.files.azd_env import azd_env_name, load_azd_environment, service_env_prefix
from agentopt.core.files.azure_yaml import load_azure_yaml
from agentopt.core.files.eval_yaml_write import load_round_trip, save_round_trip
from agentopt.workflows.detect import find_azure_yaml


def azd_root(project_dir: Path) -> Path:
    """The folder of azure.yaml above `project_dir` (else `project_dir`)."""
    found = find_azure_yaml(Path(project_dir))
    return found.parent if found else Path(project_dir)


def project_id(project_dir: Path, environment: str | None = None) -> str | None:
    """`AZURE_AI_PROJECT_ID` (the project's ARM id) from the process or the azd environment."""
    root = azd_root(project_dir)
    return load_azd_environment(root, name=environment).get("AZURE_AI_PROJECT_ID")


def set_azd_values(
    project_dir: Path, values: dict[str, str], environment: str | None = None
) -> Path | None:
    """Upsert `KEY="value"` lines in `.azure/<env>/.env` (`environment`: `-e`, else azd's
    default); the path written, or None without an azd environment."""
    root = azd_root(project_dir)
    name = azd_env_name(root, explicit=environment)
    if name is None:
        return None
    path = root / ".azure" / name / ".env"
    if not path.parent.is_dir():
        return None
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for key, value in values.items():
        text = f'{key}="{value}"'
        pattern = re.compile(rf"^\s*(?:export\s+)?{re.escape(key)}\s*=")
        for i, line in enumerate(lines):
            if pattern.match(line):
                lines[i] = text
                break
        else:
            lines.append(text)
    if path.exists():
        backup(path)
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def service_for(
    project_dir: Path, deployed_name: str | None, fallback: str, environment: str | None = None
) -> str | None:
    """The azure.yaml agent service whose AGENT_<SVC>_NAME is `deployed_name` (else the one
    named `fallback`, else the only one)."""
    found = find_azure_yaml(Path(project_dir))
    if found is None:
        return None
    azure = load_azure_yaml(found)
    env = load_azd_environment(found.parent, name=environment)
    names = azure.agent_services
    for name in names:
        if deployed_name and env.get(service_env_prefix(name) + "NAME") == deployed_name:
            return name
    if fallback in names:
        return fallback
    return names[0] if len(names) == 1 else None


def set_agent_environment(project_dir: Path, service: str, values: dict[str, str]) -> Path | None:
    """Write `values` into the service's agent definition environment; the file, or None."""
    found = find_azure_yaml(Path(project_dir))
    if found is None:
        return None
    doc, rt = load_round_trip(found)
    svc = (doc.get("services") or {}).get(service)
    if svc is None:
        return None
    if "kind" in svc or "config" in svc:
        env = svc.get("env")
        if env is None:
            svc["env"] = env = {}
        legacy_holder = svc.get("config") if "kind" not in svc else svc
        legacy = legacy_holder.get("environmentVariables") if legacy_holder else None
        if isinstance(legacy, dict):  # azd folds the deprecated map into `env`
            for key, value in legacy.items():
                env.setdefault(key, value)
            del legacy_holder["environmentVariables"]
        for key, value in values.items():
            env[key] = value
        save_round_trip(found, doc, rt)
        return found
    folder = load_azure_yaml(found).project_dir(service)
    agent_yaml = next(
        (p for p in (folder / "agent.yaml", folder / "agent.yml") if p.is_file()), None
    )
    if agent_yaml is None:
        return None
    doc, rt = load_round_trip(agent_yaml)
    agent = doc.get("template") if isinstance(doc.get("template"), dict) else doc
    entries = agent.get("environment_variables")
    if entries is None:
        agent["environment_variables"] = entries = []
    for key, value in values.items():
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == key:
                entry["value"] = value
                break
        else:
            entries.append({"name": key, "value": value})
    save_round_trip(agent_yaml, doc, rt)
    return agent_yaml

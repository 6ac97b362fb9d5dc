"""The azd environment: `.azure/<env>/.env`, deployed agent identity and the Foundry project
endpoint (files.md §1).

Values come from the process environment first, then from the azd environment file, so that
a CI job can override what `azd provision` wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files.yaml_source import load_json, read_text

ENDPOINT_VARS = ("FOUNDRY_PROJECT_ENDPOINT", "AZURE_AI_PROJECT_ENDPOINT")
DEPRECATED_ENDPOINT_VAR = "AZURE_AI_PROJECT_ENDPOINT"
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse dotenv text the way azd writes it: `KEY="value"`, `KEY='v'`, `KEY=v # note`."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            continue
        key, rest = match.group(1), match.group(2).strip()
        if rest[:1] in ('"', "'"):
            quote = rest[0]
            body = rest[1:]
            # A quoted value may span lines until the closing quote.
            while _closing(body, quote) < 0 and i < len(lines):
                body += "\n" + lines[i]
                i += 1
            end = _closing(body, quote)
            raw = body[:end] if end >= 0 else body
            out[key] = _unescape(raw) if quote == '"' else raw
        else:
            out[key] = re.split(r"\s+#", rest, maxsplit=1)[0].strip()
    return out


def _closing(body: str, quote: str) -> int:
    j = 0
    while j < len(body):
        if body[j] == "\\" and quote == '"':
            j += 2
            continue
        if body[j] == quote:
            return j
        j += 1
    return -1


def _unescape(raw: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), raw)


def azd_env_name(
    root: Path, environ: Mapping[str, str] | None = None, explicit: str | None = None
) -> str | None:
    """`-e/--environment` (`explicit`), else `AZURE_ENV_NAME`, else `.azure/config.json`
    `defaultEnvironment`, else None — azd's order."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    if env.get("AZURE_ENV_NAME"):
        return env["AZURE_ENV_NAME"]
    config = Path(root) / ".azure" / "config.json"
    try:
        data = load_json(config)
    except InputError:
        return None  # no or no usable config.json: no default environment
    name = data.get("defaultEnvironment") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


@dataclass
class AzdEnvironment:
    """The process environment layered over one azd environment file."""

    name: str | None = None
    path: Path | None = None
    file_values: dict[str, str] = field(default_factory=dict)
    process: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        """Process environment first, then `.azure/<env>/.env`; empty counts as unset."""
        return self.process.get(key) or self.file_values.get(key) or None


def environment_names(root: Path) -> list[str]:
    """The azd environments of the project at `root` (folders of `.azure/` with a `.env`)."""
    folder = Path(root) / ".azure"
    try:
        return sorted(p.parent.name for p in folder.glob("*/.env") if p.is_file())
    except OSError:
        return []


def load_azd_environment(
    root: Path, environ: Mapping[str, str] | None = None, *, name: str | None = None
) -> AzdEnvironment:
    """The azd environment of the project at `root` (no environment is fine).

    Raises:
        ConfigError: `name` (from `-e/--environment`) names no environment of the project;
            the message lists the ones there are.
    """
    env = dict(os.environ if environ is None else environ)
    if name is not None and not (Path(root) / ".azure" / name / ".env").is_file():
        known = environment_names(root)
        listed = ", ".join(known) if known else "none"
        raise ConfigError(
            f'no azd environment named "{name}" in {Path(root) / ".azure"} '
            f"(environments: {listed})",
            hint="pass -e with one of them, or create it with `azd env new " + name + "`",
        )
    name = azd_env_name(root, env, name)
    if name is None:
        return AzdEnvironment(process=env)
    path = Path(root) / ".azure" / name / ".env"
    try:
        values = parse_dotenv(read_text(path, kind="text")) if path.is_file() else {}
    except OSError:
        values = {}
    return AzdEnvironment(
        name=name, path=path if path.exists() else None, file_values=values, process=env
    )


def service_env_prefix(service: str) -> str:
    """`AGENT_<SVC>_`: the service name upper-cased, `-` and spaces turned into `_`."""
    return "AGENT_" + re.sub(r"[-\s]", "_", service.upper()) + "_"


def deployed_identity(service: str, env: AzdEnvironment) -> tuple[str | None, str | None]:
    """`(AGENT_<SVC>_NAME, AGENT_<SVC>_VERSION)` of a deployed agent, when known."""
    prefix = service_env_prefix(service)
    return env.get(prefix + "NAME"), env.get(prefix + "VERSION")


PROJECT_ID_VAR = "AZURE_AI_PROJECT_ID"
_PROJECT_ID = re.compile(
    r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/"
    r"Microsoft\.CognitiveServices/accounts/([^/]+)/projects/([^/]+)$"
)


@dataclass(frozen=True)
class Sourced:
    """A resolved value and where it came from, as azd's "Detected eval target" shows it:
    a flag (`--project-endpoint`), a variable (`AGENT_SUPPORT_NAME`), `eval.yaml`, …"""

    value: str | None = None
    source: str = "unresolved"


def endpoint_from_project_id(project_id: str) -> str:
    """`https://<account>.services.ai.azure.com/api/projects/<project>` from a Foundry
    project's ARM id (`AZURE_AI_PROJECT_ID`), as azd builds it.

    Raises:
        ConfigError: the id is not a `Microsoft.CognitiveServices/accounts/…/projects/…` id.
    """
    match = _PROJECT_ID.match(project_id.strip())
    if match is None:
        raise ConfigError.at(
            "",
            PROJECT_ID_VAR,
            "expected /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft."
            f"CognitiveServices/accounts/<account>/projects/<project>, found {project_id!r}",
        )
    return f"https://{match.group(3)}.services.ai.azure.com/api/projects/{match.group(4)}"


def project_endpoint_sourced(
    flag: str | None, env: AzdEnvironment
) -> tuple[Sourced, list[Problem]]:
    """azd's order: `--project-endpoint` → `FOUNDRY_PROJECT_ENDPOINT` →
    `AZURE_AI_PROJECT_ENDPOINT` (deprecated, with a warning) → built from
    `AZURE_AI_PROJECT_ID`."""
    if flag:
        return Sourced(flag, "--project-endpoint"), []
    for var in ENDPOINT_VARS:
        value = env.get(var)
        if value:
            if var != DEPRECATED_ENDPOINT_VAR:
                return Sourced(value, var), []
            warning = Problem(
                "", var, "is deprecated; set FOUNDRY_PROJECT_ENDPOINT instead", "warning"
            )
            return Sourced(value, f"{var} (deprecated)"), [warning]
    project_id = env.get(PROJECT_ID_VAR)
    if project_id:
        return Sourced(endpoint_from_project_id(project_id), PROJECT_ID_VAR), []
    return Sourced(), []


def resolve_project_endpoint(
    flag: str | None, env: AzdEnvironment
) -> tuple[str | None, list[Problem]]:
    """The project endpoint by `project_endpoint_sourced`, without its source."""
    found, warnings = project_endpoint_sourced(flag, env)
    return found.value, warnings

"""`azure.yaml` — finding the agent in an azd project (files.md §1).

Agent services are `services:` entries with `host: azure.ai.agent`. Their definition is read,
first match wins, from: inline keys (when `kind` is set), a deprecated `config:` block, or
`agent.yaml`/`agent.yml` in the service folder (top-level or under `template:`). `$ref`
includes are resolved lazily, per service, so a broken include in one service never stops
another from loading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.core.files.problems import Collector, describe
from agentopt.core.files.tools_json import check_tools
from agentopt.core.files.yaml_refs import BASE_KEY, resolve_refs
from agentopt.core.files.yaml_source import load_yaml

AGENT_HOST = "azure.ai.agent"
SKILL_HOST = "azure.ai.skill"
PROMPT_KINDS = ("prompt",)
HOSTED_KINDS = ("hosted", "workflow", "prompt-voice")
AGENT_YAML_NAMES = ("agent.yaml", "agent.yml")
_TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass
class AzureYaml:
    """A parsed azure.yaml: the raw services, `$ref`s not yet resolved."""

    path: Path
    name: str | None
    services: dict[str, dict[str, Any]]
    warnings: list[Problem] = field(default_factory=list)

    @property
    def root(self) -> Path:
        """The azd project root (the folder of azure.yaml)."""
        return self.path.parent

    @property
    def agent_services(self) -> list[str]:
        """Names of the `host: azure.ai.agent` services, in file order."""
        return [n for n, s in self.services.items() if self._host(n, s) == AGENT_HOST]

    def service(self, name: str) -> dict[str, Any]:
        """One service with its `$ref` includes resolved."""
        raw = self.services[name]
        return resolve_refs(raw, self.path, ("services", name))

    def project_dir(self, name: str) -> Path:
        """The service folder (`project:`, relative to azure.yaml; default: its folder)."""
        project = self.services[name].get("project")
        if isinstance(project, str) and project.strip():
            return (self.root / project).resolve()
        return self.root.resolve()

    def _host(self, name: str, raw: dict[str, Any]) -> Any:
        if "host" not in raw and "$ref" in raw:
            try:
                return self.service(name).get("host")
            except ConfigError:
                return None
        return raw.get("host")


def load_azure_yaml(path: Path | str) -> AzureYaml:
    """Parse azure.yaml and check the shape of `services:`."""
    path = Path(path)
    data, lines = load_yaml(path, shown=str(path))
    c = Collector(str(path), lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        c.error((), f"expected a mapping with name and services, found {describe(data)}")
        c.raise_if_errors(config=True)
    services = data.get("services") or {}
    if not isinstance(services, dict):
        c.error(
            ("services",),
            f"expected a mapping of service name → service, found {describe(services)}",
        )
        services = {}
    clean: dict[str, dict[str, Any]] = {}
    for name, svc in services.items():
        if not isinstance(svc, dict):
            c.error(
                ("services", name),
                f"expected a mapping with host, project, ...; found {describe(svc)}",
            )
            continue
        clean[str(name)] = svc
    c.raise_if_errors(config=True)
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return AzureYaml(path=path, name=name, services=clean, warnings=c.warnings)


def read_service_agent(azure: AzureYaml, service: str) -> tuple[AgentDefinition, list[Problem]]:
    """The agent definition of one agent service, and the warnings met on the way.

    Returns a definition with only a name when the service defines nothing agentopt can read
    (a warning says so); `.agent_configs/baseline/` may still supply the rest.
    """
    svc = azure.service(service)
    folder = azure.project_dir(service)
    c = Collector(str(azure.path))
    where = ("services", service)
    kind = svc.get("kind")
    if isinstance(kind, str) and kind.strip():
        defn = _from_keys(c, azure, service, svc, where, folder, "azure.yaml (inline)")
    elif isinstance(svc.get("config"), dict):
        c.warn(
            (*where, "config"), "the config: block is deprecated; move its keys into the service"
        )
        block = {**svc["config"], BASE_KEY: svc.get(BASE_KEY)}
        defn = _from_keys(
            c, azure, service, block, (*where, "config"), folder, "azure.yaml config:"
        )
    else:
        defn = _from_agent_yaml(c, azure, service, svc, folder)
    c.raise_if_errors(config=True)
    return defn, c.warnings


def _from_agent_yaml(
    c: Collector, azure: AzureYaml, service: str, svc: dict[str, Any], folder: Path
) -> AgentDefinition:
    found = next((folder / n for n in AGENT_YAML_NAMES if (folder / n).is_file()), None)
    if found is None:
        c.warn(
            ("services", service),
            f"no agent definition: no kind, no config:, no agent.yaml in {folder}",
        )
        return AgentDefinition(name=_agent_name(svc, service), folder=folder, source="azure.yaml")
    data, _lines = load_yaml(found, shown=str(found))
    data = resolve_refs(data, found)
    if not isinstance(data, dict):
        raise ConfigError.at(str(found), "", f"expected a mapping, found {describe(data)}")
    template = data.get("template")
    agent: dict[str, Any] = template if isinstance(template, dict) else data
    c.warn(
        ("services", service), f"agent definition read from {found.name} (azd now keeps it inline)"
    )
    sub = Collector(str(found))
    prefix = ("template",) if agent is not data else ()
    defn = _from_keys(sub, azure, service, agent, prefix, folder, str(found), fallback=data)
    c.problems.extend(sub.problems)
    return defn


def _from_keys(
    c: Collector,
    azure: AzureYaml,
    service: str,
    keys: dict[str, Any],
    where: tuple[str | int, ...],
    folder: Path,
    source: str,
    *,
    fallback: dict[str, Any] | None = None,
) -> AgentDefinition:
    kind_raw = keys.get("kind") or "prompt"
    if kind_raw in PROMPT_KINDS:
        kind = "prompt"
    elif kind_raw in HOSTED_KINDS:
        kind = "hosted"
    else:
        c.error(
            (*where, "kind"),
            f"expected prompt, hosted, workflow or prompt-voice, found {describe(kind_raw)}",
        )
        kind = "prompt"
    bases = [Path(b) for b in (keys.get(BASE_KEY),) if b] + [azure.root, folder]
    model = _model(keys) or _model(fallback or {})
    instructions = _instructions(c, keys.get("instructions"), (*where, "instructions"), bases)
    tools = check_tools(c, (*where, "tools"), keys.get("tools"))
    temperature = keys.get("temperature")
    if temperature is None and isinstance(keys.get("model"), dict):
        temperature = (keys["model"].get("options") or {}).get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
    ):
        c.error((*where, "temperature"), f"expected a number 0–2, found {describe(temperature)}")
        temperature = None
    startup = keys.get("startupCommand", keys.get("startup_command"))
    port = keys.get("port")
    return AgentDefinition(
        name=_agent_name(keys, service),
        kind=kind,  # type: ignore[arg-type]
        folder=folder,
        model=model,
        instructions=instructions,
        temperature=temperature,
        tools=tools,
        skills=_skills(c, azure, keys, where),
        startup_command=startup if isinstance(startup, str | list) else None,
        port=port if isinstance(port, int) and not isinstance(port, bool) else 8088,
        source=f"{source} services.{service}" if source.startswith("azure.yaml") else source,
    )


def _agent_name(keys: dict[str, Any], service: str) -> str:
    name = keys.get("name")
    return name if isinstance(name, str) and name.strip() else service


def _model(keys: dict[str, Any]) -> str | None:
    model = keys.get("model")
    if isinstance(model, str) and model.strip():
        return model
    if isinstance(model, dict):
        for key in ("id", "name", "deployment"):
            if isinstance(model.get(key), str):
                return model[key]
    for res in keys.get("resources") or []:
        if isinstance(res, dict) and res.get("kind") == "model" and isinstance(res.get("id"), str):
            return res["id"]
    return None


def _instructions(c: Collector, raw: Any, where: tuple, bases: list[Path]) -> str | None:
    """Inline text, or a path (one line ending in .md/.txt) to read."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        c.error(where, f"expected text or a path to a .md file, found {describe(raw)}")
        return None
    text = raw.strip()
    if "\n" in text or not text.lower().endswith(_TEXT_SUFFIXES):
        return raw.rstrip()
    for base in bases:
        candidate = base / text
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").rstrip()
    c.error(where, f'expected the instructions file "{text}", found nothing (looked in {bases[0]})')
    return None


def _skills(c: Collector, azure: AzureYaml, keys: dict[str, Any], where: tuple) -> list[Skill]:
    """Skills named by `skill:` / `skills:` that are `azure.ai.skill` services."""
    names = keys.get("skills", keys.get("skill"))
    if names is None:
        return []
    if isinstance(names, str):
        names = [names]
    out: list[Skill] = []
    for name in names if isinstance(names, list) else []:
        if not isinstance(name, str) or name not in azure.services:
            c.warn(where, f"skill {describe(name)} is not a service of azure.yaml; skipped")
            continue
        try:
            svc = azure.service(name)
        except InputError as exc:
            c.problems.extend(
                Problem(p.file, p.location, p.message, "warning") for p in exc.problems
            )
            continue
        if svc.get("host") != SKILL_HOST:
            c.warn(where, f'service "{name}" is not an {SKILL_HOST} service; skipped')
            continue
        bases = [Path(b) for b in (svc.get(BASE_KEY),) if b] + [azure.root]
        sc = Collector(str(azure.path))
        body = _instructions(sc, svc.get("instructions"), ("services", name, "instructions"), bases)
        c.problems.extend(Problem(p.file, p.location, p.message, "warning") for p in sc.problems)
        if body:
            desc = svc.get("description")
            out.append(
                Skill(name=name, description=desc if isinstance(desc, str) else "", body=body)
            )
    return out

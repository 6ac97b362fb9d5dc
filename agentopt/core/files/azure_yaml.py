"""`azure.yaml` — finding the agent in an azd project (files.md §1).

Agent services are `services:` entries with `host: azure.ai.agent`. The definition is resolved
as the azure.ai.agents extension does (`internal/project/agent_definition.go`): from the inline
service keys when they carry a `kind`, else from a `config:` block that carries a `kind`
(deprecated), else from `agent.yaml`/`agent.yml` in the service folder (top level or under
`template:`, deprecated too). A `config:` block without `kind` — the pre-split shape of the
Foundry samples (`promptAgent: {}`, `deployments:`) — only gives deployment settings and never
hides the agent.yaml beside it. Sources are layered: what the chosen source lacks is filled
from the others, and a warning is printed only where two of them disagree. A sibling
`instructions.md` and a `skills/` folder fill a definition that has none. `$ref` includes are
resolved lazily, per service, so a broken include in one service never stops another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.core.files.agent_keys import (
    HOSTED_KINDS,
    PROMPT_KINDS,
    KeyLayer,
    deployment_model,
    has_kind,
    instructions,
    read_layer,
)
from agentopt.core.files.problems import Collector, KeyPath, describe, format_path
from agentopt.core.files.skills import load_skills
from agentopt.core.files.yaml_refs import BASE_KEY, REF_KEY, resolve_refs
from agentopt.core.files.yaml_source import load_yaml, load_yaml_mapping, read_text

AGENT_HOST = "azure.ai.agent"
SKILL_HOST = "azure.ai.skill"
PROJECT_HOST = "azure.ai.project"
AGENT_YAML_NAMES = ("agent.yaml", "agent.yml")
SIBLING_INSTRUCTIONS = ("instructions.md",)
SKILLS_FOLDER = "skills"
_LABELS = {"startup_command": "start command", "code_runtime": "code runtime"}
__all__ = [
    "AGENT_HOST",
    "HOSTED_KINDS",
    "PROMPT_KINDS",
    "AzureYaml",
    "ServiceAgent",
    "load_azure_yaml",
    "read_agent_folder",
    "read_service_agent",
    "resolve_service_agent",
]


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
        resolved = resolve_refs(raw, self.path, ("services", name))
        if not isinstance(resolved, dict):  # a `$ref` to a text file, or a YAML list
            raise ConfigError.at(
                str(self.path),
                format_path(("services", name, REF_KEY)),
                "expected a file holding a mapping with host, project, ...; "
                f"found {describe(resolved)}",
            )
        return resolved

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
    data, c = load_yaml_mapping(path, "expected a mapping with name and services, found")
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


@dataclass
class ServiceAgent:
    """One agent definition with where each of its fields came from (for the target block)."""

    definition: AgentDefinition
    sources: dict[str, str] = field(default_factory=dict)
    """Field name (`kind`, `name`, `model`, `instructions`, `startup_command`, …) → the source
    that set it: `azure.yaml (inline)`, `azure.yaml (config)`, `agent.yaml`, `instructions.md`."""
    warnings: list[Problem] = field(default_factory=list)


def read_service_agent(azure: AzureYaml, service: str) -> tuple[AgentDefinition, list[Problem]]:
    """The agent definition of one agent service, and the warnings met on the way.

    Returns a definition with only a name when the service defines nothing agentopt can read
    (a warning says so); `.agent_configs/baseline/` may still supply the rest.
    """
    found = resolve_service_agent(azure, service)
    return found.definition, found.warnings


def resolve_service_agent(azure: AzureYaml, service: str) -> ServiceAgent:
    """`read_service_agent` with the source of every field."""
    svc = azure.service(service)
    folder = azure.project_dir(service)
    c = Collector(str(azure.path))
    where: KeyPath = ("services", service)
    skills = _skill_lookup(azure)
    bases = [Path(b) for b in (svc.get(BASE_KEY),) if b] + [azure.root, folder]
    inline = has_kind(svc)
    layers = [
        read_layer(
            c, svc, where, "azure.yaml (inline)", bases=bases, definition=inline, skills=skills
        )
    ]
    config = svc.get("config")
    if isinstance(config, dict):
        cbases = [Path(b) for b in (config.get(BASE_KEY),) if b] + bases
        is_def = has_kind(config) and not inline
        if is_def:
            c.warn(
                (*where, "config"),
                "the config: block is deprecated; move its keys into the service",
            )
        layers.append(
            read_layer(
                c,
                config,
                (*where, "config"),
                "azure.yaml (config)",
                bases=cbases,
                definition=has_kind(config),
                skills=skills,
            )
        )
    agent_file = next((folder / n for n in AGENT_YAML_NAMES if bounded.is_file(folder / n)), None)
    chosen = inline or (isinstance(config, dict) and has_kind(config))
    if agent_file is not None:
        layers.append(
            _agent_yaml_layer(
                c, agent_file, skills, note=not chosen, where=where, primary=not chosen
            )
        )
    elif not chosen:
        c.warn(where, f"no agent definition: no kind, no config: kind, no agent.yaml in {folder}")
    model = deployment_model(config if isinstance(config, dict) else {}) or _project_model(
        azure, svc
    )
    if model:
        layers.append(KeyLayer("azure.yaml deployments", {"model": model}))
    found = merge_layers(c, layers, folder, default_name=service, where=where)
    c.raise_if_errors(config=True)
    found.warnings = c.warnings
    return found


def read_agent_folder(folder: Path) -> ServiceAgent | None:
    """The agent of a folder that has an agent.yaml but no azure.yaml (a Foundry sample copied
    on its own), or None when there is none."""
    agent_file = next((folder / n for n in AGENT_YAML_NAMES if bounded.is_file(folder / n)), None)
    if agent_file is None:
        return None
    c = Collector(str(agent_file))
    layer = _agent_yaml_layer(c, agent_file, None, note=False, where=())
    found = merge_layers(c, [layer], folder, default_name=folder.resolve().name)
    c.raise_if_errors(config=True)
    found.warnings = c.warnings
    return found


def merge_layers(
    c: Collector,
    layers: list[KeyLayer],
    folder: Path,
    *,
    default_name: str,
    where: KeyPath = (),
) -> ServiceAgent:
    """Layer the sources, first wins; warn where a later one sets a different value."""
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.fields.items():
            if key not in fields:
                fields[key] = value
                sources[key] = layer.source
            elif _differs(fields[key], value):
                label = _LABELS.get(key, key.replace("_", " "))
                c.warn(
                    where,
                    f"{layer.source} and {sources[key]} disagree on the {label}; "
                    f"using {sources[key]}'s",
                )
    if "instructions" not in fields:
        sibling = next(
            (folder / n for n in SIBLING_INSTRUCTIONS if bounded.is_file(folder / n)), None
        )
        if sibling is not None:
            text = read_text(sibling, kind="text").strip()
            if text:
                fields["instructions"], sources["instructions"] = text, sibling.name
    if "skills" not in fields and bounded.is_dir(folder / SKILLS_FOLDER):
        found, sc = load_skills(folder / SKILLS_FOLDER, str(folder / SKILLS_FOLDER))
        c.problems.extend(Problem(p.file, p.location, p.message, "warning") for p in sc.problems)
        if found:
            fields["skills"], sources["skills"] = found, f"{SKILLS_FOLDER}/"
    fields.setdefault("name", default_name)
    sources.setdefault("name", sources.get("kind", "service name"))
    defn = AgentDefinition(
        folder=folder,
        source=" + ".join(dict.fromkeys(sources.values())),
        **{k: v for k, v in fields.items() if k in AgentDefinition.model_fields},
    )
    return ServiceAgent(definition=defn, sources=sources)


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return " ".join(a.split()) != " ".join(b.split())
    return bool(a != b)


def _agent_yaml_layer(
    c: Collector, path: Path, skills: Any, *, note: bool, where: KeyPath, primary: bool = True
) -> KeyLayer:
    data, lines = load_yaml(path, shown=str(path))
    data = resolve_refs(data, path)
    if not isinstance(data, dict):
        raise ConfigError.at(str(path), "", f"expected a mapping, found {describe(data)}")
    template = data.get("template")
    agent: dict[str, Any] = template if isinstance(template, dict) else data
    if note:
        c.warn(where, f"agent definition read from {path.name} (azd now keeps it inline)")
    sub = Collector(str(path), lines)
    prefix = ("template",) if agent is not data else ()
    layer = read_layer(
        sub,
        agent,
        prefix,
        path.name,
        bases=[path.parent],
        definition=True,
        skills=skills,
        fallback=data if agent is not data else None,
    )
    if primary:
        c.problems.extend(sub.problems)
    else:  # azd does not read it at all: only what would break it is worth a word
        c.problems.extend(Problem(p.file, p.location, p.message, "warning") for p in sub.errors)
    return layer


def _project_model(azure: AzureYaml, svc: dict[str, Any]) -> str | None:
    """The first deployment of the `azure.ai.project` service the agent `uses:`."""
    for name in svc.get("uses") or []:
        raw = azure.services.get(name) if isinstance(name, str) else None
        if isinstance(raw, dict) and raw.get("host") == PROJECT_HOST:
            return deployment_model(raw)
    return None


def _skill_lookup(azure: AzureYaml) -> Any:
    def lookup(c: Collector, names: Any, where: KeyPath) -> list[Skill]:
        return _skills(c, azure, names, where)

    return lookup


def _skills(c: Collector, azure: AzureYaml, names: Any, where: KeyPath) -> list[Skill]:
    """Skills named by `skill:` / `skills:` that are `azure.ai.skill` services."""
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
        body = instructions(sc, svc.get("instructions"), ("services", name), bases)
        c.problems.extend(Problem(p.file, p.location, p.message, "warning") for p in sc.problems)
        if body:
            desc = svc.get("description")
            out.append(
                Skill(name=name, description=desc if isinstance(desc, str) else "", body=body)
            )
    return out

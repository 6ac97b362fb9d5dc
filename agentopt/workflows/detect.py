"""Find the agent under test in the current project (files.md §1, agents.md target rule).

One entry point, `detect_target`, used by `eval init` (which prints the result), `eval run` and
`optimize`. It never prompts by itself: with several agent services it asks the `choose`
callback the CLI passes in, or fails with a message naming `--agent` when told not to prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.agents.base import default_target
from agentopt.agents.start_command import derive_start_command, missing_start_hint
from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.agent_config import METADATA_FILE, load_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.azure_yaml import (
    AzureYaml,
    ServiceAgent,
    load_azure_yaml,
    read_agent_folder,
    resolve_service_agent,
)
from agentopt.core.files.eval_yaml import AgentSection, EvalConfig, InstructionFile
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.foundry_context import FoundryContext, resolve_foundry_context
from agentopt.core.paths import AGENT_CONFIGS_DIR

AZURE_YAML_NAMES = ("azure.yaml", "azure.yml")
EVAL_YAML = "eval.yaml"


@dataclass(kw_only=True)
class DetectedTarget:
    """What `detect_target` found; a field is None when it was not found.

    A dataclass: nothing validates or saves it, and as a pydantic model its first use built
    the schema of everything it holds (the whole eval.yaml tree): 16 ms of every command."""

    service: str | None = None
    """The azure.yaml service name."""
    agent_name: str | None = None
    """The agent's own name (service `name:`, agent.yaml, eval.yaml or the flag)."""
    kind: str | None = None
    """prompt | hosted."""
    endpoint: str | None = None
    """Where a running agent answers (eval.yaml `agent.endpoint`), if configured."""
    project_endpoint: str | None = None
    """Foundry project endpoint: flag → FOUNDRY_PROJECT_ENDPOINT → AZURE_AI_PROJECT_ENDPOINT."""
    project_dir: Path
    """The agent project folder: relative paths and `.azure/.foundry/` live here."""
    eval_yaml: Path
    """Where eval.yaml is (or will be written)."""
    azure_yaml: Path | None = None
    """The azure.yaml the agent came from."""
    baseline_dir: Path | None = None
    """`.agent_configs/baseline/` when it exists."""
    definition: AgentDefinition | None = None
    """The resolved agent definition (None when nothing defines one)."""
    deployed_name: str | None = None
    """AGENT_<SVC>_NAME."""
    deployed_version: str | None = None
    """AGENT_<SVC>_VERSION (else eval.yaml `agent.version`)."""
    foundry: FoundryContext | None = None
    """The azd environment's view of the agent: endpoint, deployed name/version/endpoint and
    model deployment, each with its source (see `core.files.foundry_context`)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Where each shown value came from: `service`, `agent_name`, `kind`, `model`,
    `instructions`, `startup_command`, … → `azure.yaml (inline)`, `agent.yaml`, `--agent`, …"""
    target: str | None = None
    """local | hosted | endpoint | command | foundry, by the default rule unless set."""
    eval_config: EvalConfig | None = None
    """The eval.yaml used (the one passed in, or the one found in the project folder)."""
    services: list[str] = field(default_factory=list)
    """Every agent service of azure.yaml, for messages."""
    warnings: list[Problem] = field(default_factory=list)
    """Deprecations and oddities met on the way, to print once."""


def detect_target(
    cwd: Path | str,
    *,
    agent: str | None = None,
    project_endpoint: str | None = None,
    no_prompt: bool = False,
    choose: Callable[[list[str]], str] | None = None,
    eval_config: EvalConfig | None = None,
    environ: Mapping[str, str] | None = None,
    environment: str | None = None,
) -> DetectedTarget:
    """Detect the agent under test from `cwd`.

    Args:
        cwd: where the command runs; azure.yaml is looked for here and in parent folders.
        agent: `--agent NAME` (an azure.yaml service name).
        project_endpoint: `--project-endpoint`.
        no_prompt: never ask; fail with a message naming `--agent` instead.
        choose: asked to pick one of several agent services.
        eval_config: an already loaded eval.yaml; its `agent:` section refines the result,
            and its `agent.name` picks the service when `agent` is not given.
        environ: the environment to read (default: the process environment).
        environment: `-e/--environment`, the azd environment to read.

    Raises:
        ConfigError: unknown `--agent` or `-e`, or several agent services and no way to
            choose.
    """
    cwd = Path(cwd).resolve()
    warnings: list[Problem] = []
    azure_path = find_azure_yaml(cwd)
    azure = load_azure_yaml(azure_path) if azure_path else None
    if azure is not None:
        warnings.extend(azure.warnings)
        if not azure.agent_services:
            if agent:
                raise ConfigError.at(
                    str(azure.path),
                    "services",
                    f'no agent service named "{agent}": it has no azure.ai.agent service',
                )
            warnings.append(
                Problem(
                    str(azure.path),
                    "services",
                    "no azure.ai.agent service; using eval.yaml and .agent_configs/",
                    "warning",
                )
            )
            azure = None
    if azure is not None:
        hint = _eval_agent_name(eval_config, cwd) if not agent else None
        found = _from_azure(azure, agent, hint, cwd, no_prompt, choose, warnings)
    else:
        found = _from_folder(cwd, agent, warnings)
    if eval_config is None and bounded.is_file(found.eval_yaml):
        eval_config, eval_warnings = load_eval_config(found.eval_yaml)
        warnings.extend(eval_warnings)
    found.eval_config = eval_config
    section = eval_config.agent if eval_config is not None else None
    foundry = resolve_foundry_context(
        azure.root if azure else cwd,
        service=found.service,
        environment=environment,
        project_endpoint=project_endpoint,
        eval_version=section.version if section else None,
        environ=environ,
    )
    warnings.extend(foundry.warnings)
    found.foundry = foundry
    found.deployed_name = foundry.deployed_name.value
    found.deployed_version = foundry.deployed_version.value
    found.project_endpoint = foundry.project_endpoint.value
    _apply_baseline(found, eval_config, warnings)
    if section is not None:
        _apply_eval_agent(found, section)
    if found.definition is not None:
        defn = found.definition
        defn.deployed_name = found.deployed_name
        defn.deployed_version = defn.deployed_version or found.deployed_version
        defn.project_endpoint = found.project_endpoint
        derived = derive_start_command(defn) if not defn.command else None
        if derived is not None:
            defn.startup_command = derived.argv
            found.sources["startup_command"] = derived.source
        elif defn.kind == "hosted" and not (defn.startup_command or defn.command):
            found.sources["startup_command"] = missing_start_hint(defn)
        found.kind = defn.kind
        found.agent_name = found.agent_name or defn.name
        found.endpoint = defn.endpoint
        found.target = pick_target(defn)
    found.warnings = warnings
    return found


def find_azure_yaml(start: Path) -> Path | None:
    """azure.yaml in `start` or a parent, stopping at the repository root (a `.git` folder)."""
    for folder in (start, *start.parents):
        for name in AZURE_YAML_NAMES:
            if bounded.is_file(folder / name):
                return folder / name
        if bounded.exists(folder / ".git"):
            return None
    return None


def pick_target(defn: AgentDefinition) -> str | None:
    """The target by the agents.md default rule (`agents.base.default_target`), or None when
    nothing says how to run the agent. A hosted agent without a start command still shows as
    `hosted`: that is what it is, and running it will say what is missing."""
    try:
        return default_target(defn)
    except ConfigError:
        return "hosted" if defn.kind == "hosted" else None


def _from_azure(
    azure: AzureYaml,
    agent: str | None,
    hint: str | None,
    cwd: Path,
    no_prompt: bool,
    choose: Callable[[list[str]], str] | None,
    warnings: list[Problem],
) -> DetectedTarget:
    """Pick the service: `--agent`, else eval.yaml's `agent.name`, else the one whose folder
    we are in, else the only one, else ask (or fail listing them)."""
    names = azure.agent_services
    listed = ", ".join(names)
    source = "--agent"
    if agent:
        if agent not in names:
            raise ConfigError.at(
                str(azure.path),
                "services",
                f'no agent service named "{agent}"; agent services: {listed}',
            )
        service = agent
    elif hint is not None and (picked := _service_named(azure, hint)) is not None:
        service, source = picked, "eval.yaml agent.name"
    elif (inside := _service_of_folder(azure, cwd)) is not None:
        service, source = inside, "the service folder"
    elif len(names) == 1:
        service, source = names[0], "azure.yaml"
    elif no_prompt or choose is None:
        raise ConfigError.at(
            str(azure.path),
            "services",
            f"{len(names)} agent services ({listed}); pass --agent NAME to pick one",
        )
    else:
        service, source = choose(names), "chosen"
        if service not in names:
            raise ConfigError.at(
                str(azure.path),
                "services",
                f'no agent service named "{service}"; agent services: {listed}',
            )
    found: ServiceAgent = resolve_service_agent(azure, service)
    warnings.extend(found.warnings)
    project_dir = azure.project_dir(service)
    sources = {f"definition.{k}": v for k, v in found.sources.items()}
    sources.update(service=source, agent_name=found.sources.get("name", "azure.yaml"))
    sources["kind"] = found.sources.get("kind", "default")
    return DetectedTarget(
        service=service,
        agent_name=found.definition.name,
        kind=found.definition.kind,
        project_dir=project_dir,
        eval_yaml=project_dir / EVAL_YAML,
        azure_yaml=azure.path,
        definition=found.definition,
        services=names,
        sources=sources,
    )


def _from_folder(cwd: Path, agent: str | None, warnings: list[Problem]) -> DetectedTarget:
    """No azure.yaml: the agent.yaml of the working folder, if any (a Foundry sample copied on
    its own), else nothing but the folder (eval.yaml and `.agent_configs/` may define it)."""
    found = DetectedTarget(project_dir=cwd, eval_yaml=cwd / EVAL_YAML, agent_name=agent)
    agent_yaml = read_agent_folder(cwd)
    if agent_yaml is None:
        if agent:
            found.sources["agent_name"] = "--agent"
        return found
    warnings.extend(agent_yaml.warnings)
    defn = agent_yaml.definition
    found.definition = defn
    found.agent_name = agent or defn.name
    found.kind = defn.kind
    found.sources = {f"definition.{k}": v for k, v in agent_yaml.sources.items()}
    found.sources["agent_name"] = "--agent" if agent else agent_yaml.sources.get("name", "")
    found.sources["kind"] = agent_yaml.sources.get("kind", "default")
    return found


def _eval_agent_name(config: EvalConfig | None, cwd: Path) -> str | None:
    """eval.yaml's `agent.name`: of the config given, else of `./eval.yaml` (read quietly —
    the caller loads it again, warnings and all, once the service is known)."""
    if config is None and (cwd / EVAL_YAML).is_file():
        try:
            config = load_eval_config(cwd / EVAL_YAML)[0]
        except InputError:
            return None
    if config is None or config.agent is None:
        return None
    return config.agent.name


def _service_named(azure: AzureYaml, name: str) -> str | None:
    """The agent service called `name`, or whose agent (its `name:`) is called `name`."""
    if name in azure.agent_services:
        return name
    for service in azure.agent_services:
        raw = azure.services[service]
        if raw.get("name") == name or (raw.get("config") or {}).get("name") == name:
            return service
    return None


def _service_of_folder(azure: AzureYaml, cwd: Path) -> str | None:
    """The one agent service whose project folder is `cwd` (not the azd root itself)."""
    if cwd == azure.root.resolve():
        return None
    matches = [s for s in azure.agent_services if azure.project_dir(s) == cwd]
    return matches[0] if len(matches) == 1 else None


def _apply_baseline(
    found: DetectedTarget, config: EvalConfig | None, warnings: list[Problem]
) -> None:
    """Fill instructions/model/tools/skills from `.agent_configs/baseline/` (or agent.config)."""
    meta = config.agent.config if config and config.agent and config.agent.config else None
    baseline = found.project_dir / AGENT_CONFIGS_DIR / "baseline"
    if bounded.is_file(baseline / METADATA_FILE):
        found.baseline_dir = baseline
    meta = meta or (found.baseline_dir / METADATA_FILE if found.baseline_dir else None)
    if meta is None:
        return
    loaded, baseline_warnings = load_agent_config(meta, project=found.project_dir)
    warnings.extend(baseline_warnings)
    current = found.definition
    name = found.agent_name or (config.agent.name if config and config.agent else None)
    if current is None:
        loaded.name = name or loaded.name
        loaded.source = str(meta)
        found.definition = loaded
        return
    # The azure.yaml service says who the agent is and how it is hosted; the baseline holds
    # the optimizable configuration, which wins for the fields it sets.
    updates = {
        k: getattr(loaded, k)
        for k in (
            "model",
            "instructions",
            "temperature",
            "max_tokens",
            "tools_module",
            "tool_mocks",
            "config_id",
            "tool_choice",
        )
        if getattr(loaded, k) is not None
    }
    for k in ("tools", "skills", "mcp_servers"):
        if getattr(loaded, k):
            updates[k] = getattr(loaded, k)
    updates["max_tool_rounds"] = loaded.max_tool_rounds
    updates["source"] = f"{current.source} + {meta}"
    found.definition = current.model_copy(update=updates)


def _apply_eval_agent(found: DetectedTarget, section: AgentSection) -> None:
    """eval.yaml `agent:` keys refine (or, with no other source, make) the definition."""
    defn = found.definition or AgentDefinition(
        name=section.name or found.agent_name or found.project_dir.name,
        folder=found.project_dir,
        source="eval.yaml agent:",
    )
    updates: dict[str, object] = {}
    for key in ("kind", "model", "target", "endpoint", "protocol", "command", "port"):
        value = getattr(section, key)
        if value is not None:
            updates[key] = value
    if section.version is not None:
        updates["deployed_version"] = section.version
    if section.headers:
        updates["headers_from_env"] = dict(section.headers)
    if section.instruction is not None:
        if isinstance(section.instruction, InstructionFile) and not bounded.is_file(
            section.instruction.file
        ):
            raise ConfigError.at(
                str(found.eval_yaml),
                "agent.instruction.file",
                f"expected a file, found nothing at {section.instruction.file}",
            )
        updates["instructions"] = section.instruction_text()
    if not found.agent_name and section.name:
        found.agent_name = section.name
    found.definition = defn.model_copy(update=updates)

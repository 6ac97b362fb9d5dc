"""Where an azd project's agent lives in Foundry, as the azd environment says: the project
endpoint, the deployed agent's name, version and endpoint, and the model deployment — each with
its source, the way `azd ai agent eval` resolves them (`internal/cmd/eval.go`,
`resolveEvalContext`).

One resolver for every command: `eval init` / `generate` print it in the target block,
`eval run` and `optimize` use it for defaults, and remote runs (`--remote`) address the
deployed agent with it. The environment is `-e/--environment`, else `AZURE_ENV_NAME`, else
`.azure/config.json` `defaultEnvironment`; values come from the process environment first, then
from `.azure/<env>/.env`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.core.errors import Problem
from agentopt.core.files.azd_env import (
    AzdEnvironment,
    Sourced,
    load_azd_environment,
    project_endpoint_sourced,
    service_env_prefix,
)

MODEL_DEPLOYMENT_VAR = "AZURE_AI_MODEL_DEPLOYMENT_NAME"
"""azd's default eval model (`eval generate` uses it when `--eval-model` is not given)."""


@dataclass
class FoundryContext:
    """The resolved azd environment of one agent service."""

    environment: AzdEnvironment
    project_endpoint: Sourced = field(default_factory=Sourced)
    deployed_name: Sourced = field(default_factory=Sourced)
    """`AGENT_<SVC>_NAME`."""
    deployed_version: Sourced = field(default_factory=Sourced)
    """`AGENT_<SVC>_VERSION`, else eval.yaml `agent.version`."""
    agent_endpoint: Sourced = field(default_factory=Sourced)
    """`AGENT_<SVC>_ENDPOINT`: the deployed agent's own URL."""
    model_deployment: Sourced = field(default_factory=Sourced)
    """`AZURE_AI_MODEL_DEPLOYMENT_NAME`."""
    warnings: list[Problem] = field(default_factory=list)

    @property
    def environment_label(self) -> str | None:
        """`dev (.azure/dev/.env)`, or None when no azd environment is selected."""
        env = self.environment
        if env.name is None:
            return None
        return f"{env.name} (.azure/{env.name}/.env)" if env.path else f"{env.name} (no .env)"


def resolve_foundry_context(
    root: Path,
    *,
    service: str | None = None,
    environment: str | None = None,
    project_endpoint: str | None = None,
    eval_version: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> FoundryContext:
    """Resolve the Foundry side of the agent service `service` of the azd project at `root`.

    Args:
        root: the azd project root (the folder of azure.yaml), or the working folder.
        service: the azure.yaml service name (`AGENT_<SVC>_*` variables); None = none.
        environment: `-e/--environment`.
        project_endpoint: `--project-endpoint`.
        eval_version: eval.yaml `agent.version`, the fallback for the deployed version.
        environ: the environment to read (default: the process environment).

    Raises:
        ConfigError: `environment` names no environment of the project, or
            `AZURE_AI_PROJECT_ID` is not a Foundry project id.
    """
    env = load_azd_environment(root, environ, name=environment)
    endpoint, warnings = project_endpoint_sourced(project_endpoint, env)
    ctx = FoundryContext(environment=env, project_endpoint=endpoint, warnings=warnings)
    ctx.model_deployment = _var(env, MODEL_DEPLOYMENT_VAR)
    if service:
        prefix = service_env_prefix(service)
        ctx.deployed_name = _var(env, prefix + "NAME")
        ctx.deployed_version = _var(env, prefix + "VERSION")
        ctx.agent_endpoint = _var(env, prefix + "ENDPOINT")
    if ctx.deployed_version.value is None and eval_version:
        ctx.deployed_version = Sourced(eval_version, "eval.yaml")
    return ctx


def _var(env: AzdEnvironment, name: str) -> Sourced:
    value = env.get(name)
    return Sourced(value, name) if value else Sourced()

"""Where a run's model calls go, with the place each address came from.

The provenance table (`workflows.resolve_suite`) shows them beside the other settings, so
"the judge went to the wrong server" is answered by `--dry-run`: the Foundry project of the
agent and of remote runs (`project_endpoint`: `--project-endpoint`, then the azd environment),
the project `foundry:` model calls use (`calls_project_endpoint`: the flag, then the process
environment — the call layer does not read `.azure/<env>/.env`, and a project it knows also
takes bare model names), `OPENAI_BASE_URL`, `AZURE_OPENAI_ENDPOINT`, and each provider
eval.yaml declares (`options.providers.<name>`). The flag reaches the call layer through
`resolve_suite.call_flags`; the variables and keys are read by the call layer and its
providers, and this module reports the same ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agentopt.contracts.resolved_suite import (
    AZD_ENV_FILE,
    DEFAULT,
    ENVIRONMENT,
    FLAG,
    ResolvedSuite,
)
from agentopt.core.files.azd_env import ENDPOINT_VARS
from agentopt.models.providers.openai import DEFAULT_BASE_URL

if TYPE_CHECKING:
    from agentopt.core.files.azd_env import AzdEnvironment
    from agentopt.core.files.eval_yaml import EvalConfig
    from agentopt.core.files.foundry_context import FoundryContext

OPENAI_BASE_URL = "OPENAI_BASE_URL"
AZURE_OPENAI_ENDPOINT = "AZURE_OPENAI_ENDPOINT"
_PROVIDER_VARS = {"openai": OPENAI_BASE_URL, "azure": AZURE_OPENAI_ENDPOINT}
"""The variable a declared provider without an address of its own falls back to."""

Place = Callable[[str], tuple[str, str]]
"""A suite-file key → (kind, where), with its line (`resolve_suite._SuiteFile.place`)."""


def env_source(env: AzdEnvironment | None, var: str) -> tuple[str, str]:
    """(kind, where) of a variable read through the azd environment: the process environment
    wins over `.azure/<env>/.env`, as `AzdEnvironment.get` reads it."""
    if env is None or env.process.get(var):
        return ENVIRONMENT, f"environment variable {var}"
    return AZD_ENV_FILE, f".azure/{env.name}/.env {var}"


def endpoint_settings(
    suite: ResolvedSuite,
    opts: object,
    config: EvalConfig | None,
    foundry: FoundryContext | None,
    place: Place,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Add `project_endpoint`, `calls_project_endpoint`, `openai_base_url`,
    `azure_openai_endpoint` and one `providers.<name>` row per declared provider to `suite`."""
    env = os.environ if environ is None else environ
    flag = getattr(opts, "project_endpoint", None)
    _project_endpoint(suite, flag, foundry, env)
    _calls_project_endpoint(suite, flag, env)
    _from_env(suite, "openai_base_url", OPENAI_BASE_URL, env, DEFAULT_BASE_URL)
    _from_env(suite, "azure_openai_endpoint", AZURE_OPENAI_ENDPOINT, env, None)
    providers = config.options.providers if config is not None else {}
    for name, provider in providers.items():
        key = f"options.providers.{name}"
        if provider.base_url:
            suite.put(f"providers.{name}", provider.base_url, *place(f"{key}.base_url"))
        elif provider.endpoint:
            suite.put(f"providers.{name}", provider.endpoint, *place(f"{key}.endpoint"))
        elif provider.type == "foundry":
            found = suite.settings["calls_project_endpoint"]
            suite.put(f"providers.{name}", found.value, found.kind, found.where)
        elif provider.type in _PROVIDER_VARS:
            var = _PROVIDER_VARS[provider.type]
            default = DEFAULT_BASE_URL if provider.type == "openai" else None
            _from_env(suite, f"providers.{name}", var, env, default)
        else:
            suite.put(f"providers.{name}", None, DEFAULT, "default")


def _from_env(
    suite: ResolvedSuite, name: str, var: str, env: Mapping[str, str], default: str | None
) -> None:
    value = env.get(var)
    if value:
        suite.put(name, value, ENVIRONMENT, f"environment variable {var}")
    else:
        suite.put(name, default, DEFAULT, "default")


def _project_endpoint(
    suite: ResolvedSuite,
    flag: str | None,
    foundry: FoundryContext | None,
    env: Mapping[str, str],
) -> None:
    """`--project-endpoint` → the azd environment (process first, then `.azure/<env>/.env`,
    as `core.files.azd_env.project_endpoint_sourced` orders it) → the process environment
    when no azd project was detected."""
    if flag:
        suite.put("project_endpoint", flag, FLAG, "--project-endpoint")
        return
    found = foundry.project_endpoint if foundry is not None else None
    if foundry is not None and found is not None and found.value:
        var = found.source.split(" ")[0]
        suite.put("project_endpoint", found.value, *env_source(foundry.environment, var))
        return
    for var in ENDPOINT_VARS:
        if env.get(var):
            suite.put("project_endpoint", env[var], ENVIRONMENT, f"environment variable {var}")
            return
    suite.put("project_endpoint", None, DEFAULT, "default")


def _calls_project_endpoint(suite: ResolvedSuite, flag: str | None, env: Mapping[str, str]) -> None:
    """`--project-endpoint` → FOUNDRY_PROJECT_ENDPOINT → AZURE_AI_PROJECT_ENDPOINT, as
    `models.resolve.project_endpoint` reads them for a call."""
    name = "calls_project_endpoint"
    if flag:
        suite.put(name, flag, FLAG, "--project-endpoint")
        return
    for var in ENDPOINT_VARS:
        if env.get(var):
            suite.put(name, env[var], ENVIRONMENT, f"environment variable {var}")
            return
    suite.put(name, None, DEFAULT, "default")

"""azd's spellings that agentopt's optimize commands accept with azd's meaning
(`internal/cmd/optimize*.go` of the azure.ai.agents extension):

- `optimize [agent-name]`: the agent as a positional argument, beside `-a/--agent`;
- `-p/--project-endpoint` and `--endpoint` on `optimize` and every subcommand
  (`optimizeConnectionFlags`): the Foundry project, and the optimization service's own URL
  (local development) — `--endpoint` wins for the optimization calls, as in azd's `resolve`.

click parses a group's options up to its first bare word and takes that word for a
subcommand; `OptimizeGroup` takes it for the agent instead when no subcommand has that name
and parses the options after it too.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from agentopt.cli.context import STATE
from agentopt.core.errors import ConfigError

AGENT_ARG = "agentopt_optimize_agent"


class OptimizeGroup(TyperGroup):
    """`optimize NAME [OPTIONS]` runs the optimizer for agent NAME; `optimize status …` and
    the other subcommands are unchanged. `optimize` and each subcommand take the connection
    flags (azd's persistent `optimizeConnectionFlags`), declared once (`connection_params`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        flags = connection_params()  # the same parameter objects on each, as the globals
        for command in [self, *self.commands.values()]:
            command.params.extend(flags)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, list(args))
        words = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not words or words[0] in self.list_commands(ctx) or words[0].startswith("-"):
            return rest
        at = len(args) - len(words)
        ctx.meta[AGENT_ARG] = words[0]
        ctx._protected_args, ctx.args = [], []
        return super().parse_args(ctx, [*args[:at], *args[at + 1 :]])


def positional_agent(ctx: typer.Context, agent: str | None) -> str | None:
    """`-a NAME` or the positional NAME (both: they must agree)."""
    named = ctx.meta.get(AGENT_ARG)
    if named and agent and named != agent:
        raise ConfigError(f"the agent is given twice: {named!r} and --agent {agent!r}")
    return agent or named


def _set_project_endpoint(value: str | None) -> str | None:
    if value:
        STATE.project_endpoint = value.strip().rstrip("/")
    return value


def _set_service_endpoint(value: str | None) -> str | None:
    if value:
        STATE.service_endpoint = value.strip().rstrip("/")
    return value


ProjectEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "-p",
        "--project-endpoint",
        help="Foundry project endpoint (default: FOUNDRY_PROJECT_ENDPOINT, the azd env).",
        callback=_set_project_endpoint,
        show_default=False,
    ),
]
ServiceEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="Optimization service URL for local development (azd's --endpoint).",
        callback=_set_service_endpoint,
        show_default=False,
    ),
]


def _connection_declarations(
    project_endpoint: ProjectEndpointOpt = None, endpoint: ServiceEndpointOpt = None
) -> None:
    """Never called: typer turns this signature into the connection flags' click parameters."""


def connection_params() -> list[Any]:
    """`-p/--project-endpoint` and `--endpoint` as click parameters; their callbacks write
    `STATE` (read by `endpoint_override`), so the commands never see them."""
    holder = typer.Typer()
    holder.command()(_connection_declarations)
    params = list(typer.main.get_command(holder).params)
    for param in params:
        param.expose_value = False
    return params


def endpoint_override() -> str | None:
    """Where the optimization calls go: `--endpoint`, else `-p`, else None (the job's or
    the project's own)."""
    return STATE.service_endpoint or STATE.project_endpoint

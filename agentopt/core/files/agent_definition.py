"""The resolved agent under test, whatever it was defined by (azure.yaml inline keys, a
deprecated `config:` block, agent.yaml, `.agent_configs/<id>/metadata.yaml`, eval.yaml `agent:`,
or CLI flags). Loaders produce it; agent targets and the optimizer consume it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.core.lazy_model import LazyModel


class Skill(LazyModel):
    """A skill the agent can load: front-matter name/description, body = the skill text."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    body: str = ""
    path: str | None = None


class McpServer(LazyModel):
    """An MCP server started over stdio (metadata.yaml `mcp_servers`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


class AgentDefinition(LazyModel):
    """Everything needed to run and optimize one agent.

    `tools` are chat-completions function tools (`{"type":"function","function":{...}}`);
    other tool types are kept as they are (passed through with a warning by the loader).
    `folder` is the agent project directory; relative paths resolve against it.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["prompt", "hosted"] = "prompt"
    description: str | None = None
    """What the agent is for (`description:` of azure.yaml / agent.yaml)."""
    folder: Path = Path(".")
    model: str | None = None
    instructions: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    """Cap on each reply's tokens (None: the model's default)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    skills: list[Skill] = Field(default_factory=list)
    tool_mocks: dict[str, Any] | None = None
    """Parsed tool_mocks.json beside tools.json, when present."""
    tools_module: str | None = None
    """Path of a tools.py whose functions implement tools."""
    mcp_servers: list[McpServer] = Field(default_factory=list)
    max_tool_rounds: int = 8
    tool_choice: str | None = None
    """metadata.yaml `tool_choice` for the first model call of each user turn: auto, required,
    none, or a tool's name (that tool is forced); later rounds are auto, so the agent can
    answer after its tool results. None = the server's default (auto)."""

    # How to reach it when it is not run locally.
    target: str | None = None
    """local | hosted | endpoint | command | foundry; None = decide (agents.md)."""
    startup_command: str | list[str] | None = None
    code_runtime: str | None = None
    """Code-deploy runtime (`codeConfiguration.runtime`, e.g. `python_3_13`, `dotnet_10`, or
    `runtime.stack`): with `code_entry_point`, how a start command is derived."""
    code_entry_point: str | None = None
    """`codeConfiguration.entryPoint` (agent.yaml `code_configuration.entry_point`)."""
    port: int = 8088
    endpoint: str | None = None
    protocol: Literal["responses", "chat_completions"] = "responses"
    protocols: list[str] = Field(default_factory=list)
    """Protocols a hosted agent declares (`protocols: [{protocol, version}]` or `protocol:`),
    lower-cased: responses, invocations, invocations_ws, activity, a2a. Empty = responses."""
    invocations_io: dict[str, Any] | None = None
    """Where an invocations agent's text lives, from its RAI policy's `invocationsModeration`
    (`inputPaths`, `outputPaths`, `streamSelectors`); None = the samples' conventions."""
    headers_from_env: dict[str, str] = Field(default_factory=dict)
    """Header name → env var name holding its value (never written to results)."""
    command: list[str] | None = None
    deployed_name: str | None = None
    deployed_version: str | None = None
    project_endpoint: str | None = None

    config_id: str = "baseline"
    """Which `.agent_configs/<id>` this came from (or "baseline" for inline definitions)."""
    source: str = ""
    """Human-readable origin, e.g. "azure.yaml services.support (inline)"."""

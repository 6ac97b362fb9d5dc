"""The "Detected eval target" block that `eval init` and `eval generate` print (cli.md): what
was found, each line marked ✓ or "(not found)", with where it came from — a flag, an azd
environment variable, azure.yaml, agent.yaml or eval.yaml — as `azd ai agent eval` shows it."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import NamedTuple

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentopt.agents.hosted_protocol import hosted_protocol
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.workflows.detect import DetectedTarget

NOT_FOUND = "(not found)"


class Row(NamedTuple):
    """One line of the block: its label, the value (None = not found) and its source."""

    label: str
    value: str | None
    source: str = ""


def target_rows(target: DetectedTarget, cwd: Path | None = None) -> list[Row]:
    """The rows in display order; shared by the terminal block and tests."""
    base = Path(cwd or Path.cwd()).resolve()
    eval_note = "" if target.eval_yaml.exists() else "  (will be created)"
    src = target.sources
    foundry = target.foundry
    defn = target.definition
    rows = [Row("Service", target.service, src.get("service", "azure.yaml"))]
    if foundry is not None and foundry.deployed_name.value:
        rows.append(Row("Agent", foundry.deployed_name.value, foundry.deployed_name.source))
    else:
        rows.append(Row("Agent", target.agent_name, src.get("agent_name", "")))
    if foundry is not None:
        rows.append(Row("Version", foundry.deployed_version.value, foundry.deployed_version.source))
    rows.append(Row("Kind", target.kind, src.get("kind", "")))
    if defn is not None and defn.model:
        rows.append(Row("Model", defn.model, src.get("definition.model", "")))
    if target.endpoint:
        rows.append(Row("Endpoint", target.endpoint, "eval.yaml agent.endpoint"))
    elif foundry is not None:
        rows.append(
            Row("Endpoint", foundry.project_endpoint.value, foundry.project_endpoint.source)
        )
    else:
        rows.append(Row("Endpoint", target.project_endpoint))
    if foundry is not None and foundry.environment_label:
        rows.append(Row("Environment", foundry.environment_label, "azd"))
    rows += [
        Row("Project folder", _shown(target.project_dir, base)),
        Row("eval.yaml", _shown(target.eval_yaml, base) + eval_note),
        Row("Target", target.target),
    ]
    if target.kind == "hosted" and defn is not None and not defn.command:
        command = defn.startup_command
        shown = shlex.join(command) if isinstance(command, list) else command
        rows.append(
            Row(
                "Start command",
                shown,
                src.get("startup_command", src.get("definition.startup_command", "")),
            )
        )
    if target.kind == "hosted" and defn is not None and target.target == "hosted":
        rows.append(_protocol_row(defn))
    return rows


def _protocol_row(defn: AgentDefinition) -> Row:
    """The protocol a hosted agent is played through, or why it cannot be (activity…)."""
    try:
        chosen = hosted_protocol(defn)
    except ConfigError as exc:
        return Row("Protocol", None, f"{exc.message}; {exc.hint}")
    declared = ", ".join(defn.protocols)
    return Row("Protocol", chosen, f"declared: {declared}" if declared else "none declared")


def render_target_block(target: DetectedTarget, cwd: Path | None = None) -> RenderableType:
    """A rich renderable: a bold title, then one aligned ✓ / (not found) line per item."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=2)
    grid.add_column(style="bold")
    grid.add_column()
    for row in target_rows(target, cwd):
        if row.value:
            shown = Text(row.value)
            if row.source and row.source != "unresolved":
                shown.append(f"  ({row.source})", style="dim")
            grid.add_row(Text("✓", style="green"), f"{row.label}:", shown)
        else:
            shown = Text(NOT_FOUND, style="dim")
            if row.source and row.source != "unresolved":
                shown.append(f"  {row.source}", style="yellow")  # what to add
            grid.add_row(Text("·", style="yellow"), f"{row.label}:", shown)
    return Group(Text("Detected eval target", style="bold"), grid)


def _shown(path: Path, base: Path) -> str:
    """Relative to the working folder when inside it, else absolute."""
    try:
        rel = Path(os.path.relpath(path.resolve(), base))
    except ValueError:
        return str(path)
    if rel.parts and rel.parts[0] == "..":
        return str(path.resolve())
    return "." if str(rel) == "." else rel.as_posix()

"""The "Detected eval target" block that `eval init` prints (cli.md): what was found, each
line marked ✓, or "(not found)" so the user sees at once what to configure."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentopt.workflows.detect import DetectedTarget

NOT_FOUND = "(not found)"


def target_rows(target: DetectedTarget, cwd: Path | None = None) -> list[tuple[str, str | None]]:
    """(label, value or None) in display order; shared by the terminal block and tests."""
    base = Path(cwd or Path.cwd()).resolve()
    eval_note = "" if target.eval_yaml.exists() else "  (will be created)"
    endpoint = target.endpoint or target.project_endpoint
    return [
        ("Service", target.service),
        ("Agent", target.agent_name),
        ("Kind", target.kind),
        ("Endpoint", endpoint),
        ("Project folder", _shown(target.project_dir, base)),
        ("eval.yaml", _shown(target.eval_yaml, base) + eval_note),
        ("Target", target.target),
    ]


def render_target_block(target: DetectedTarget, cwd: Path | None = None) -> RenderableType:
    """A rich renderable: a bold title, then one aligned ✓ / (not found) line per item."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=2)
    grid.add_column(style="bold")
    grid.add_column()
    for label, value in target_rows(target, cwd):
        if value:
            grid.add_row(Text("✓", style="green"), f"{label}:", Text(value))
        else:
            grid.add_row(Text("·", style="yellow"), f"{label}:", Text(NOT_FOUND, style="dim"))
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

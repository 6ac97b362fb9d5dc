"""The "Eval suite created" block and the "Next steps" of `eval generate` / `eval init`, as
plain lines in the layout of cli.md (the CLI prints them; tests read them)."""

from __future__ import annotations

import os
from pathlib import Path

from agentopt.workflows.generate.suite import AssetInfo, SuiteResult

INDENT = "   "
WIDTH = 120
NEXT_STEPS: tuple[tuple[str, str], ...] = (
    ("agentopt eval run", "run the suite against the agent and score the answers"),
    ("agentopt eval update", "after editing the dataset or the rubric: register new versions"),
    ("agentopt optimize", "search for better instructions, tools and models"),
)


def shown_path(path: Path, cwd: Path) -> str:
    """Relative to the working folder when inside it, else as given; forward slashes."""
    # The folder is resolved, not the file: a link is named as the link (a registry.json
    # linked to /dev/null is "registry.json", not "/dev/null"), and a link loop cannot raise.
    try:
        where = Path(path).parent.resolve() / Path(path).name
        rel = Path(os.path.relpath(where, Path(cwd).resolve()))
    except (ValueError, OSError, RuntimeError):
        return Path(path).as_posix()
    if rel.parts and rel.parts[0] == "..":
        return where.as_posix()
    return rel.as_posix()


def summary_lines(result: SuiteResult, cwd: Path) -> list[str]:
    """The "Eval suite created" block: Config, Dataset, Evaluator, the dimensions by weight,
    the self-check."""
    lines = ["Eval suite created", f"{INDENT}{'Config:':<12}{shown_path(result.config_path, cwd)}"]
    assets = [("Dataset:", result.dataset), ("Evaluator:", result.evaluator)]
    labels = [f"{a.name} ({a.version})" for _, a in assets if a is not None]
    pad = max((len(label) for label in labels), default=0) + 2
    for title, asset in assets:
        if asset is not None:
            label = f"{asset.name} ({asset.version})"
            path = shown_path(asset.path, cwd)
            lines.append(f"{INDENT}{title:<12}{label:<{pad}}{path}{_note(asset)}")
    if result.dimensions:
        head = f"{INDENT}Evaluator dimensions ({len(result.dimensions)}):  "
        lines.append(f"{head}weight  dimension")
        rows = sorted(result.dimensions, key=lambda d: -d.weight)
        id_width = max(len(d.id) for d in rows) + 2
        for d in rows:
            start = f"{' ' * len(head)}{d.weight:>6}  {d.id:<{id_width}}"
            room = max(60, WIDTH - len(start))
            text = d.description if len(d.description) <= room else d.description[: room - 1] + "…"
            lines.append(start + text)
    if result.check is not None:
        lines.append(f"{INDENT}{'Self-check:':<12}{result.check.summary()}")
    if result.dataset is not None and result.categories:
        mix = ", ".join(f"{k} {v}" for k, v in result.categories.items())
        lines.append(f"{INDENT}{'Tasks:':<12}{result.dataset.count} ({mix})")
    for backup in result.backups:
        lines.append(f"{INDENT}{'Backup:':<12}{shown_path(backup, cwd)}")
    for note in result.notes:
        lines.append(f"{INDENT}Note: {note}")
    return lines


def next_steps_lines() -> list[str]:
    """The "Next steps" block."""
    width = max(len(cmd) for cmd, _ in NEXT_STEPS) + 3
    return ["Next steps:"] + [f"{INDENT}{cmd:<{width}}{what}" for cmd, what in NEXT_STEPS]


def _note(asset: AssetInfo) -> str:
    notes = []
    if not asset.changed:
        notes.append("unchanged")
    if asset.remote:
        notes.append(f"uploaded as version {asset.remote.get('version')}")
    return f"  ({', '.join(notes)})" if notes else ""

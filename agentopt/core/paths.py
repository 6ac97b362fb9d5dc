"""Where agentopt keeps its files, relative to the agent project directory (files.md §7)."""

from __future__ import annotations

from pathlib import Path

STATE_DIR = ".agentopt"
REGISTRY_DIR = Path(".azure") / ".foundry"
AGENT_CONFIGS_DIR = ".agent_configs"


def state_dir(project: Path) -> Path:
    """`.agentopt/` in the project; created on first use with a .gitignore entry."""
    d = Path(project) / STATE_DIR
    if not d.exists():
        d.mkdir(parents=True, exist_ok=True)
        _ensure_gitignored(Path(project))
    return d


def cache_path(project: Path) -> Path:
    return state_dir(project) / "cache.sqlite"


def runs_dir(project: Path) -> Path:
    return state_dir(project) / "runs"


def optimize_dir(project: Path) -> Path:
    return state_dir(project) / "optimize"


def registry_dir(project: Path) -> Path:
    return Path(project) / REGISTRY_DIR


def templates_dir() -> Path:
    """Prompt templates: packaged as `agentopt/_templates`, or the repo's `templates/`."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_templates"
    if packaged.is_dir():
        return packaged
    return here.parent / "templates"


def _ensure_gitignored(project: Path) -> None:
    gi = project / ".gitignore"
    line = f"{STATE_DIR}/"
    try:
        existing = gi.read_text(encoding="utf-8") if gi.exists() else ""
    except OSError:
        return
    if any(row.strip() in (STATE_DIR, line) for row in existing.splitlines()):
        return
    sep = "" if not existing or existing.endswith("\n") else "\n"
    try:
        with open(gi, "a", encoding="utf-8") as fh:
            fh.write(f"{sep}{line}\n")
    except OSError:
        pass

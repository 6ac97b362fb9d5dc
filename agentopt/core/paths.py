"""Where agentopt keeps its files, relative to the agent project directory (files.md §7)."""

from __future__ import annotations

import errno
from pathlib import Path

from agentopt.core.errors import ConfigError

STATE_DIR = ".agentopt"
REGISTRY_DIR = Path(".azure") / ".foundry"
AGENT_CONFIGS_DIR = ".agent_configs"


def inside_project(project: Path, path: Path, what: str) -> Path:
    """`path`, after checking that it resolves inside `project`: a folder agentopt writes to
    (the registry, `.agentopt/`, a run or job folder) that is a link to somewhere else would
    make it write outside the project, so it is refused with the link named.

    Raises:
        ConfigError: naming the folder, where it leads, and what to do.
    """
    root = Path(project).resolve()
    target = Path(path)
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        raise ConfigError(f"{what} {target} cannot be resolved: {exc}") from None
    try:
        resolved.relative_to(root)
    except ValueError:
        raise ConfigError(
            f"{what} {target} leads outside the project (to {resolved}); agentopt reads and "
            "writes only inside the project",
            hint=f"replace the link {target} by a real folder (move its content in)",
        ) from None
    return target


def state_dir(project: Path) -> Path:
    """`.agentopt/` in the project; created on first use with a .gitignore entry."""
    d = inside_project(project, Path(project) / STATE_DIR, "the state folder")
    if not d.exists():
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS:
                raise
            # A read-only project: commands that only read (`eval list`, `eval show`,
            # `optimize status`) find nothing there; one that writes fails on its first
            # write, and the CLI names the path in one line (cli/errors.py).
            return d
        _ensure_gitignored(Path(project))
    return d


READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def cache_path(project: Path) -> Path:
    return state_dir(project) / "cache.sqlite"


def runs_dir(project: Path) -> Path:
    return inside_project(project, state_dir(project) / "runs", "the runs folder")


def optimize_dir(project: Path) -> Path:
    return inside_project(project, state_dir(project) / "optimize", "the optimize folder")


def registry_dir(project: Path) -> Path:
    return inside_project(project, Path(project) / REGISTRY_DIR, "the registry folder")


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

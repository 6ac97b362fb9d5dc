"""`agentopt eval validate`: load each file with the tool's own loader, collect every problem."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentopt.core.errors import Problem


@dataclass
class FileReport:
    """Validation outcome of one path."""

    path: Path
    kind: str
    problems: list[Problem] = field(default_factory=list)

    def display_path(self, cwd: Path) -> str:
        try:
            return str(self.path.resolve().relative_to(cwd.resolve()))
        except ValueError:
            return str(self.path)


def validate_paths(paths: list[Path], *, strict: bool = False) -> list[FileReport]:
    """Placeholder until the loaders land."""
    return [
        FileReport(p, "unknown", [Problem(str(p), "", "validation not available yet")])
        for p in paths
    ]

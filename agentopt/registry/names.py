"""Registry names, file names and the editable working-copy paths (files.md §6)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from agentopt.core.errors import InputError

AssetKind = Literal["datasets", "evaluators"]
KINDS: tuple[AssetKind, ...] = ("datasets", "evaluators")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
VERSION_FILE_RE = re.compile(
    r"^(?P<name>.+)\.v(?P<version>[0-9A-Za-z][0-9A-Za-z._-]*)\.(?P<ext>[A-Za-z0-9]+)$"
)
"""`<name>.v<version>.<ext>`; versions as `agentopt.core.versions` reads them ("1", "1.0")."""
EVALUATOR_EXT = "yaml"
DATASET_EXT = "jsonl"


def check_name(name: str) -> str:
    """A registry name must be a safe file name: letters, digits, '.', '_', '-'."""
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise InputError.at(
            "",
            "name",
            f"expected a registry name of letters, digits, '.', '_' or '-', found {name!r}",
        )
    return name


def default_dataset_name(agent: str) -> str:
    """`<agent>-eval-seed`."""
    return f"{_slug(agent)}-eval-seed"


def default_evaluator_name(agent: str) -> str:
    """`<agent>-quality`."""
    return f"{_slug(agent)}-quality"


def dataset_copy_path(base: Path, name: str) -> Path:
    """The editable copy beside eval.yaml: `datasets/<name>/<name>.jsonl`."""
    return Path(base) / "datasets" / name / f"{name}.jsonl"


def rubric_copy_path(base: Path, name: str) -> Path:
    """The editable rubric beside eval.yaml: `evaluators/<name>/rubric_dimensions.json`."""
    return Path(base) / "evaluators" / name / "rubric_dimensions.json"


def version_file_name(name: str, version: str, ext: str) -> str:
    """`<name>.v<N>.<ext>`."""
    return f"{name}.v{version}.{ext}"


def _slug(agent: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", agent.strip()).strip("-.")
    return slug or "agent"

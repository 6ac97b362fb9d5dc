"""The one entry point: any dataset path → `Dataset` (files.md §4).

The loader is picked from the extension, then the content: `.jsonl` is task JSONL; `.json`
is an M365 eval document when it is an object with `items`/`schemaVersion`, a legacy M365
file when it has a legacy shape, else task JSONL (one object per line); `.csv` is CSV; a
folder means its single `*.jsonl` (or `*.json`) file.

The CSV and M365 loaders are imported for the first file of their kind: checking a task
JSONL file (`eval validate`, 0.25 s of CPU for 5 tasks, issue 37) does not load them.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentopt.core.errors import InputError, Problem
from agentopt.core.files import bounded
from agentopt.datasets.foundry import QUERY_KEYS
from agentopt.datasets.jsonl import load_jsonl
from agentopt.datasets.problems import ProblemLog, describe

if TYPE_CHECKING:
    from agentopt.contracts.task import Dataset, LegacyUpgrade
    from agentopt.datasets.m365 import M365Content
    from agentopt.datasets.m365_legacy import LegacyShape

JSONL_SUFFIXES = (".jsonl", ".ndjson")
SUFFIXES = (*JSONL_SUFFIXES, ".json", ".csv")


@dataclass
class _Outcome:
    log: ProblemLog
    dataset: Dataset | None = None


def load_dataset(path: str | Path, *, strict: bool = False, upgrade: bool = True) -> Dataset:
    """Load any dataset shape, or raise InputError listing every problem found.

    Args:
        path: a .jsonl/.json/.csv file or a folder holding one .jsonl (or .json) file.
        strict: validate M365 documents against the official schema exactly (`--strict`).
        upgrade: rewrite legacy M365 files in the versioned shape, after a backup
            (`--no-upgrade` = False). `Dataset.upgrade` tells the CLI what happened.
    """
    outcome = _load(Path(path), str(path), strict=strict, upgrade=upgrade)
    outcome.log.raise_if_errors(
        hint=f"fix the file, then check it with `agentopt eval validate {path}`"
    )
    assert outcome.dataset is not None
    return outcome.dataset


def validate_dataset(path: str | Path, strict: bool = False) -> list[Problem]:
    """Every problem (errors and warnings) of a dataset, without raising or rewriting it."""
    return _load(Path(path), str(path), strict=strict, upgrade=False, keep=False).log.in_order()


def resolve_dataset_path(path: str | Path) -> Path:
    """A file stays itself; a folder becomes its single .jsonl (or .json) file."""
    log = ProblemLog(str(path))
    resolved = _resolve(Path(path), log)
    log.raise_if_errors()
    assert resolved is not None
    return resolved


def _resolve(path: Path, log: ProblemLog) -> Path | None:
    if not bounded.exists(path):
        log.error("", "expected a dataset file or folder, found nothing at this path")
        return None
    if not bounded.is_dir(path):
        return path
    for pattern in ("*.jsonl", "*.json"):
        found = sorted(p for p in path.glob(pattern) if p.is_file())
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            log.error(
                "",
                f"expected a folder with a single {pattern} dataset file, found {len(found)}: "
                f"{names}; pass the file itself",
            )
            return None
    others = sorted(p.name for p in path.iterdir())[:10]
    found_text = ", ".join(others) if others else "an empty folder"
    log.error(
        "", f"expected a folder with one *.jsonl (or *.json) dataset file, found {found_text}"
    )
    return None


def _load(path: Path, label: str, *, strict: bool, upgrade: bool, keep: bool = True) -> _Outcome:
    """The file's problems and, unless `keep` is False (only its problems are wanted), its
    dataset: a task file's tasks are checked as they load either way."""
    log = ProblemLog(label)
    resolved = _resolve(path, log)
    if resolved is None:
        return _Outcome(log)
    if resolved != path:
        label = str(resolved)
        log = ProblemLog(label)
    suffix = resolved.suffix.lower()
    if suffix not in SUFFIXES:
        log.error(
            "",
            "expected a .jsonl, .json or .csv dataset file, "
            f"found a {suffix or 'extensionless'} file",
        )
        return _Outcome(log)
    try:
        data = bounded.read_bytes(resolved, shown=label, kind="dataset")
        text = bounded.decode(data, label)
    except InputError as err:
        for problem in err.problems:
            log.error(problem.location, problem.message)
        return _Outcome(log)
    # Hashed now, so the bytes are not held beside their text while the tasks load (7 MB of
    # a 100,000-task file's peak).
    sha256 = hashlib.sha256(data).hexdigest()
    del data
    if suffix in JSONL_SUFFIXES:
        packed, log = load_jsonl(text, label, check_only=not keep)
        keep = keep and not log.errors
        dataset = _dataset(tasks=packed, source=label, format="jsonl") if keep else None
    elif suffix == ".csv":
        from agentopt.datasets.csv_loader import load_csv

        tasks, log = load_csv(text, label)
        keep = keep and not log.errors
        dataset = _dataset(tasks=tasks, source=label, format="csv") if keep else None
    else:
        dataset, log = _load_json(text, resolved, label, strict=strict, upgrade=upgrade)
    if dataset is not None and not log.errors:
        if dataset.upgrade is not None:  # rewritten in place: the hash is of the new bytes
            again = bounded.read_bytes(resolved, shown=label, kind="dataset")
            sha256 = hashlib.sha256(again).hexdigest()
        dataset.sha256 = sha256
        dataset.warnings = [p for p in log.in_order() if p.severity != "error"]
    return _Outcome(log, dataset)


def _load_json(
    text: str, path: Path, label: str, *, strict: bool, upgrade: bool
) -> tuple[Dataset | None, ProblemLog]:
    from agentopt.datasets.m365 import is_versioned_document, read_document
    from agentopt.datasets.m365_legacy import legacy_shape

    log = ProblemLog(label)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        log.error("", "expected an M365 eval document or task JSON lines, found an empty file")
        return None, log
    try:
        data: Any = bounded.loads(text)
    except json.JSONDecodeError as err:
        if _first_line_is_object(lines[0]):
            return _as_jsonl(text, label)
        log.error(
            f"line {err.lineno}",
            f"expected valid JSON, found a syntax error: {err.msg} (column {err.colno})",
        )
        return None, log
    if is_versioned_document(data):
        content, log = read_document(data, label, strict=strict)
        if log.errors:
            return None, log
        return _m365_dataset(content, label, data), log
    shape = legacy_shape(data)
    if shape is not None:
        return _load_legacy(data, shape, path, label, strict=strict, upgrade=upgrade)
    if isinstance(data, dict) and len(lines) == 1:
        return _as_jsonl(text, label)
    hint = ""
    if isinstance(data, dict) and any(k in data for k in (*QUERY_KEYS, "turns")):
        hint = "; a task file needs one task object per line (give it a .jsonl extension)"
    log.error(
        "",
        'expected an M365 eval document ({"schemaVersion": ..., "items": [...]}), a legacy '
        f"prompts file, or one task object per line, found {describe(data)}{hint}",
    )
    return None, log


def _as_jsonl(text: str, label: str) -> tuple[Dataset | None, ProblemLog]:
    tasks, log = load_jsonl(text, label)
    return (_dataset(tasks=tasks, source=label, format="jsonl") if not log.errors else None), log


def _load_legacy(
    data: Any, shape: LegacyShape, path: Path, label: str, *, strict: bool, upgrade: bool
) -> tuple[Dataset | None, ProblemLog]:
    if strict:
        log = ProblemLog(label)
        log.error(
            "",
            "not valid against the official schema: a legacy prompts file (no schemaVersion, "
            "no items); upgrade it in place (a backup is kept) with "
            f"`agentopt eval validate --upgrade {shlex.quote(label)}`",
        )
        return None, log
    from agentopt.core.files.m365_schemas import newest_known_version
    from agentopt.datasets.m365 import read_document
    from agentopt.datasets.m365_legacy import upgraded_document, write_upgrade

    document, log = upgraded_document(data, label, strict=strict)
    if log.errors:
        return None, log
    content, checked = read_document(document, label, strict=strict)
    if checked.errors:
        return None, checked
    backup_path: str | None = None
    if upgrade:
        try:
            backup_path = str(write_upgrade(path, document))
        except OSError as err:
            log.error(
                "",
                f"expected to upgrade this legacy file in place, found it cannot be written "
                f"({err.strerror or err}); pass --no-upgrade to read it as is",
            )
            return None, log
    else:
        log.warn(
            "",
            "legacy prompts file (no schemaVersion): read as it is and left unchanged "
            f"(--no-upgrade); without --no-upgrade it is upgraded in place to schemaVersion "
            f"{newest_known_version()} after a backup",
        )
    from agentopt.contracts.task import LegacyUpgrade

    upgrade_note = LegacyUpgrade(path=label, shape=shape, backup=backup_path)
    return _m365_dataset(content, label, document, upgrade_note), log


def _m365_dataset(
    content: M365Content, label: str, document: Any, upgrade: LegacyUpgrade | None = None
) -> Dataset:
    """An M365 document's dataset: the document is kept, as an output is written back into it
    (for a legacy file, the upgraded document, and what the upgrade did)."""
    return _dataset(
        tasks=content.tasks,
        source=label,
        format="m365",
        name=content.name,
        default_evaluators=content.default_evaluators,
        document=document,
        upgrade=upgrade,
    )


def _dataset(**fields: Any) -> Dataset:
    """A `Dataset`: the task models are imported by the first loader that makes one."""
    from agentopt.contracts.task import Dataset

    return Dataset(**fields)


def _first_line_is_object(line: str) -> bool:
    try:
        return isinstance(bounded.loads(line), dict)
    except json.JSONDecodeError:
        return False

"""Append-only JSONL journals (`eval run` and `optimize` both keep one): each entry is one
fsync'd line, masked as it is written (`core.redaction`), and a reader skips a torn last line
left by a crash mid-write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentopt.core.atomic import append_line_fsync
from agentopt.core.redaction import redact_json


def append_entry(path: Path, entry: dict[str, Any]) -> None:
    """Append one entry as a line, secrets masked, and fsync it."""
    append_line_fsync(path, redact_json(entry, default=str)[1])


def read_numbered(path: Path) -> Iterator[tuple[int, Any]]:
    """(1-based line number, entry) in order; blank lines and a torn (unparseable) line,
    left by a crash mid-write, are skipped."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError:
                continue

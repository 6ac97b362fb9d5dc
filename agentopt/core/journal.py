"""Append-only JSONL journals (`eval run` and `optimize` both keep one): each entry is one
fsync'd line, masked as it is written (`core.redaction`), and a reader skips a torn last line
left by a crash mid-write."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentopt.core.atomic import append_line_fsync
from agentopt.core.files import bounded
from agentopt.core.redaction import redact_json


def append_entry(path: Path, entry: dict[str, Any]) -> None:
    """Append one entry as a line, secrets masked, and fsync it."""
    append_line_fsync(path, redact_json(entry, default=str)[1])


def read_numbered(path: Path) -> Iterator[tuple[int, Any]]:
    """(1-based line number, entry) in order; blank lines and a torn (unparseable) line,
    left by a crash mid-write, are skipped."""
    if not os.path.lexists(path):
        return
    # A journal that is not a regular file (a FIFO would block, /dev/zero never ends) is an
    # InputError naming it, not a hang.
    with bounded.open_regular(path) as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError:
                continue

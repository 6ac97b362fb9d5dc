"""Fixtures shared by the dataset tests (helpers are fixtures so no test imports another
module by path)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentopt.core.errors import InputError, Problem
from agentopt.datasets import load_dataset


def _write(folder: Path, name: str, content: str | bytes | Any) -> Path:
    """Write text, bytes, or (for anything else) JSON to `folder/name`."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def _jsonl(*records: Any) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _load_errors(path: Path, **kwargs: Any) -> list[Problem]:
    """The error problems `load_dataset` raises for `path` (the test fails if it loads)."""
    with pytest.raises(InputError) as info:
        load_dataset(path, **kwargs)
    errors = [p for p in info.value.problems if p.severity == "error"]
    assert errors, "InputError without error problems"
    return errors


Writer = Callable[[str, Any], Path]


@pytest.fixture
def write(tmp_path: Path) -> Writer:
    """`write("a.jsonl", text_or_bytes_or_json)` → the path, under tmp_path."""
    return lambda name, content: _write(tmp_path, name, content)


@pytest.fixture
def jsonl() -> Callable[..., str]:
    """`jsonl({...}, {...})` → JSONL text, one record per line."""
    return _jsonl


@pytest.fixture
def load_errors() -> Callable[..., list[Problem]]:
    """`load_errors(path, **kw)` → the error Problems load_dataset raised (fails if none)."""
    return _load_errors

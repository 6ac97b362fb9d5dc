"""`rubric_dimensions.json` — the editable rubric (files.md §5.1).

People edit this file by hand between `eval generate` and `eval update`, so the loader
reports every problem at once, by index and key (`[2].weight: expected an integer 1–10,
found 12`), instead of stopping at the first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from agentopt.core.errors import Problem
from agentopt.core.files.problems import (
    Collector,
    describe,
    expect_bool,
    expect_int,
    expect_str,
)
from agentopt.core.files.yaml_source import load_json
from agentopt.core.lazy_model import LazyModel

ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
ID_ALIASES = ("dimension_id", "rubric_id")
GENERAL_QUALITY_ID = "general_quality"
_KNOWN_KEYS = ("id", "description", "weight", "always_applicable", *ID_ALIASES)


class RubricDimension(LazyModel):
    """One scored aspect of a response; the judge rates it 1–5 and says if it applies."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_RE.pattern)
    """Stable identifier, `^[a-z][a-z0-9_]*$`, unique within the rubric."""
    description: str = Field(min_length=1)
    """What a good response does, in one sentence the judge can check."""
    weight: int = Field(ge=1, le=10)
    """Relative importance in the weighted mean (1–10)."""
    always_applicable: bool = False
    """True: the judge may not mark it "not applicable" (e.g. general_quality)."""


def parse_rubric(data: Any, file: str) -> list[RubricDimension]:
    """Validate already-parsed JSON data as a rubric.

    Also accepts `{"dimensions": [...]}` (the shape inside a registered evaluator YAML).

    Raises:
        InputError: with one Problem per thing wrong, each naming the index and key.
    """
    dims, c = _check(data, file)
    c.raise_if_errors()
    return dims


def rubric_problems(data: Any, file: str) -> list[Problem]:
    """Every problem of a rubric (errors and warnings), without raising."""
    return _check(data, file)[1].listed()


def load_rubric(path: Path | str) -> list[RubricDimension]:
    """Read and validate `rubric_dimensions.json`."""
    path = Path(path)
    return parse_rubric(load_json(path, shown=str(path)), str(path))


def dump_rubric(dims: list[RubricDimension]) -> str:
    """The canonical JSON text of a rubric (stable key order, 2-space indent)."""
    rows = [d.model_dump(exclude_defaults=False) for d in dims]
    for row in rows:
        if not row["always_applicable"]:
            del row["always_applicable"]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _check(data: Any, file: str) -> tuple[list[RubricDimension], Collector]:
    c = Collector(file)
    prefix: tuple[str | int, ...] = ()
    if isinstance(data, dict) and "dimensions" in data:
        data, prefix = data["dimensions"], ("dimensions",)
    return check_dimensions(c, prefix, data), c


def check_dimensions(
    c: Collector, prefix: tuple[str | int, ...], data: Any
) -> list[RubricDimension]:
    """Validate a dimension list found at `prefix`, adding problems to `c`."""
    if not isinstance(data, list):
        c.error(prefix, f"expected a list of rubric dimensions, found {describe(data)}")
        return []
    if not data:
        c.error(prefix, "expected at least one rubric dimension, found an empty list")
        return []
    dims: list[RubricDimension] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(data):
        path = (*prefix, i)
        dim = _check_one(c, path, row)
        if dim is None:
            continue
        if dim.id in seen:
            c.error((*path, "id"), f'duplicate id "{dim.id}" (already used by [{seen[dim.id]}])')
            continue
        seen[dim.id] = i
        dims.append(dim)
    return dims


def _check_one(c: Collector, path: tuple[str | int, ...], row: Any) -> RubricDimension | None:
    if not isinstance(row, dict):
        c.error(path, f"expected a mapping with id, description, weight; found {describe(row)}")
        return None
    before = len(c.errors)
    id_key = next((k for k in ("id", *ID_ALIASES) if k in row), None)
    dim_id: str | None = None
    if id_key is None:
        c.error(path, 'missing "id": expected an identifier like "refund_accuracy"')
    else:
        raw = row[id_key]
        if isinstance(raw, str) and ID_RE.match(raw):
            dim_id = raw
        else:
            c.error(
                (*path, id_key),
                f"expected an identifier matching ^[a-z][a-z0-9_]*$, found {describe(raw)}",
            )
    description = None
    if "description" not in row:
        c.error(path, 'missing "description": say what a good response does')
    else:
        description = expect_str(c, (*path, "description"), row["description"])
    weight = None
    if "weight" not in row:
        c.error(path, 'missing "weight": expected an integer 1–10')
    else:
        w = row["weight"]
        if isinstance(w, str):
            c.error((*path, "weight"), f"expected an integer 1–10, found {describe(w)}")
        else:
            weight = expect_int(c, (*path, "weight"), w, lo=1, hi=10)
    always = False
    if "always_applicable" in row:
        always = bool(expect_bool(c, (*path, "always_applicable"), row["always_applicable"]))
    for key in row:
        if key not in _KNOWN_KEYS:
            c.unknown_key(path, key, ("id", "description", "weight", "always_applicable"))
    if len(c.errors) > before or dim_id is None or description is None or weight is None:
        return None
    return RubricDimension(
        id=dim_id, description=description, weight=weight, always_applicable=always
    )

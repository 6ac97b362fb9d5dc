"""Legacy M365 prompt files, upgraded to the versioned eval document (files.md §4.2).

Two shapes predate `schemaVersion`: a bare array `[{"prompt", "expected_response"}, ...]` and
`{"prompts": [...], "expected_responses": [...]}` (paired by position). The upgrade is
checked completely before anything is written, and the original bytes are backed up first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from agentopt.core.atomic import backup, write_json_atomic
from agentopt.core.errors import Problem
from agentopt.core.files.m365_schemas import newest_known_version
from agentopt.datasets.m365 import check_document, is_versioned_document
from agentopt.datasets.problems import ProblemLog, describe

LegacyShape = Literal["array", "prompts"]
_ITEM_PATH = re.compile(r"^items(\[\d+\])(.*)$")


def legacy_shape(data: Any) -> LegacyShape | None:
    """Which legacy shape `data` has, if any."""
    if isinstance(data, list):
        return "array"
    if isinstance(data, dict) and "prompts" in data and not is_versioned_document(data):
        return "prompts"
    return None


def upgraded_document(
    data: Any, file: str, *, strict: bool = False
) -> tuple[dict[str, Any], ProblemLog]:
    """The versioned document a legacy file becomes, and every problem found on the way.

    Problems are located in the legacy file's own terms (`[2].prompt`, `prompts[2]`).
    """
    log = ProblemLog(file)
    shape = legacy_shape(data)
    if shape == "array":
        items = _array_items(data, log)
        document: dict[str, Any] = {"schemaVersion": newest_known_version(), "items": items}
    elif shape == "prompts":
        document = _from_prompt_lists(data, log)
    else:
        log.error("", f"expected a legacy prompts file, found {describe(data)}")
        return {}, log
    located = {p.location for p in log.errors}
    checked = check_document(document, file, strict=strict)
    log.extend(p for p in map(_relocate_for(shape), checked.problems) if p.location not in located)
    return document, log


def write_upgrade(path: Path, document: dict[str, Any]) -> Path:
    """Back up the legacy file, then rewrite it atomically; returns the backup path."""
    saved = backup(path)
    write_json_atomic(path, document)
    return saved


def _array_items(data: list[Any], log: ProblemLog) -> list[Any]:
    if not data:
        log.error(
            "",
            'expected a list of {"prompt": ..., "expected_response": ...} objects, '
            "found an empty list",
        )
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            log.error(
                f"[{index}]",
                f'expected an object like {{"prompt": "..."}}, found {describe(item)}',
            )
    return list(data)


def _from_prompt_lists(data: dict[str, Any], log: ProblemLog) -> dict[str, Any]:
    prompts = data.get("prompts")
    expected = data.get("expected_responses")
    if not isinstance(prompts, list) or not prompts:
        log.error(
            "prompts", f"expected a non-empty list of prompt strings, found {describe(prompts)}"
        )
        prompts = []
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, str) or not prompt.strip():
            log.error(f"prompts[{index}]", f"expected non-empty text, found {describe(prompt)}")
    if expected is not None:
        if not isinstance(expected, list):
            log.error(
                "expected_responses", f"expected a list of strings, found {describe(expected)}"
            )
            expected = None
        else:
            for index, answer in enumerate(expected):
                if not isinstance(answer, str):
                    log.error(
                        f"expected_responses[{index}]", f"expected text, found {describe(answer)}"
                    )
            if prompts and len(expected) != len(prompts):
                log.error(
                    "expected_responses",
                    f"expected {len(prompts)} entries (one per prompt, paired by position), "
                    f"found {len(expected)}",
                )
    items: list[dict[str, Any]] = []
    for index, prompt in enumerate(prompts):
        item: dict[str, Any] = {"prompt": prompt}
        if expected is not None and index < len(expected):
            item["expected_response"] = expected[index]
        items.append(item)
    rest = {k: v for k, v in data.items() if k not in ("prompts", "expected_responses")}
    return {"schemaVersion": newest_known_version(), "items": items, **rest}


def _relocate_for(shape: LegacyShape) -> Callable[[Problem], Problem]:
    """`items[2].prompt` → `[2].prompt` (array) or `prompts[2]` (prompt lists)."""

    def relocate(problem: Problem) -> Problem:
        match = _ITEM_PATH.match(problem.location)
        if not match:
            return problem
        index, rest = match.groups()
        if shape == "array":
            location = index + rest
        elif rest == ".expected_response":
            location = f"expected_responses{index}"
        else:
            location = f"prompts{index}"
        return Problem(problem.file, location, problem.message, problem.severity)

    return relocate

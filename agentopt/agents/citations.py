"""Citations from the annotations agents attach to their answers.

Two wire shapes carry them: Responses output text annotations
(`{"type": "url_citation", "url", "title"}`, `{"type": "file_citation", "file_id", "filename"}`)
and chat-completions message annotations (`{"type": "url_citation", "url_citation": {...}}`).
Citations are numbered 1.. in the order they first appear; duplicates are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentopt.contracts.transcript import Citation


def citations_from_annotations(annotations: Iterable[Any]) -> list[Citation]:
    """Citations from a list of annotations in either wire shape; unknown types are ignored."""
    found: list[Citation] = []
    seen: set[tuple[str | None, str | None]] = set()
    for raw in annotations:
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        nested = raw.get(kind)
        body: dict[str, Any] = nested if isinstance(nested, dict) else raw
        if kind in ("url_citation", "url"):
            url, title, file_id = body.get("url"), body.get("title"), None
        elif kind in ("file_citation", "file_path", "container_file_citation"):
            url = None
            file_id = body.get("file_id")
            title = body.get("filename") or body.get("title")
        else:
            continue
        key = (url, file_id or title)
        if key in seen:
            continue
        seen.add(key)
        found.append(Citation(index=len(found) + 1, url=url, title=title, file_id=file_id))
    return found


def citations_from_items(items: Iterable[Any]) -> list[Citation]:
    """Citations given directly by a program, as dicts (`{url, title}`) or bare URL strings."""
    found: list[Citation] = []
    for raw in items:
        if isinstance(raw, str):
            found.append(Citation(index=len(found) + 1, url=raw))
        elif isinstance(raw, dict):
            found.append(
                Citation(
                    index=raw.get("index") if isinstance(raw.get("index"), int) else len(found) + 1,
                    url=raw.get("url"),
                    title=raw.get("title"),
                    file_id=raw.get("file_id"),
                )
            )
    return found

"""The 1–5 scales of Foundry's builtin judges, so a local score means what the portal's does.

For each builtin judge agentopt runs that `azure-ai-evaluation` (Foundry's evaluation SDK,
MIT) also ships — relevance, coherence, fluency, groundedness, similarity, intent resolution,
tool-call accuracy — the prompt states the same levels with the same titles and definitions as
the SDK's `.prompty` file, and the pass threshold is the SDK's default (3). The levels are data
(`agentopt/data/foundry_judges.json`, with the package version they were read from);
tests/evaluators/test_foundry_judges.py reads the installed package and compares, so an SDK
that changes a rubric fails the suite rather than drifting silently.

Groundedness has two rubrics, as in the SDK: with a query and without one.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

DATA = "foundry_judges.json"
WITHOUT_QUERY = "#without_query"


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("agentopt").joinpath("data", DATA).read_text(encoding="utf-8")
    return dict(json.loads(text))


def foundry_scale(judge: str, *, query: bool = True) -> dict[str, Any] | None:
    """`{"threshold", "levels": [{score, title, definition}]}` of a builtin judge (the
    groundedness rubric without a query when `query` is false), or None for other judges."""
    judges = _table()["judges"]
    if not query and f"{judge}{WITHOUT_QUERY}" in judges:
        return dict(judges[f"{judge}{WITHOUT_QUERY}"])
    found = judges.get(judge)
    return dict(found) if found is not None else None


def foundry_source() -> dict[str, Any]:
    """Which package version the levels were read from (for the note in reports and docs)."""
    return dict(_table()["source"])

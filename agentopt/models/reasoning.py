"""Which models take reasoning-model request shapes (models.md §2).

Reasoning models (o1, o3, o4-mini, gpt-5, ...) reject `max_tokens` and `temperature`. The families
are data, not code: `model_table.json` ships the known patterns, eval.yaml adds more
(`CallSettings.reasoning_models`), and a provider may force the choice (`reasoning: true`).
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[str, ...], tuple[str, ...]]:
    data = json.loads(resources.files("agentopt.models").joinpath("model_table.json").read_text())
    return tuple(data.get("reasoning", [])), tuple(data.get("not_reasoning", []))


def is_reasoning_model(
    model: str, *, extra_patterns: list[str] | tuple[str, ...] = (), forced: bool | None = None
) -> bool:
    """True when `model` needs max_completion_tokens and no temperature/top_p.

    Args:
        model: the model or deployment name as sent to the provider.
        extra_patterns: glob patterns from configuration, checked before the shipped table.
        forced: a provider-level `reasoning:` flag; overrides the patterns when not None.
    """
    if forced is not None:
        return forced
    name = model.lower().rsplit("/", 1)[-1]
    reasoning, not_reasoning = _table()
    if any(fnmatchcase(name, p.lower()) for p in extra_patterns):
        return True
    if any(fnmatchcase(name, p) for p in not_reasoning):
        return False
    return any(fnmatchcase(name, p) for p in reasoning)

"""Fixtures for the report tests (the builders live in report_fixtures.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from report_fixtures import make_results, mixed_tasks, usage

from agentopt.reports import RunResults


@pytest.fixture
def mixed_dict() -> dict[str, Any]:
    data = make_results(
        mixed_tasks(),
        score_ci=[0.52, 0.81],
        errors_by_kind={"agentRequestFailed": 1, "judgeParseFailed": 1, "judgeUnavailable": 1},
        usage={
            "agent": usage(14, 5200, 900, 0.0123, 2),
            "judge": usage(30, 9100, 1200, 0.0456, 5),
        },
        cost_usd=0.0579,
        cache_hits=7,
        limiter="rate limited 14×, concurrency 16 → 4 → 11",
    )
    data["run"]["repeat"] = 1
    return data


@pytest.fixture
def mixed(mixed_dict: dict[str, Any]) -> RunResults:
    return RunResults.model_validate(mixed_dict)


@pytest.fixture
def build() -> Callable[..., RunResults]:
    """Build RunResults from task dicts: build([task(...), ...], **summary_overrides)."""

    def _build(tasks: list[dict[str, Any]], **overrides: Any) -> RunResults:
        return RunResults.model_validate(make_results(tasks, **overrides))

    return _build

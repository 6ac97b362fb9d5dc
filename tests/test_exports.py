"""The public surface is curated: the top-level `__all__` is pinned, and every package's
`__all__` names something that exists (style.md rule 1)."""

from __future__ import annotations

import importlib

import pytest

import agentopt

PACKAGES = [
    "agentopt.core.files",
    "agentopt.models",
    "agentopt.datasets",
    "agentopt.agents",
    "agentopt.evaluators",
    "agentopt.registry",
    "agentopt.reports",
    "agentopt.workflows.optimize",
    "agentopt.workflows.run",
    "agentopt.workflows.generate",
    "agentopt.contracts",
]


def test_top_level_all_is_pinned() -> None:
    assert sorted(agentopt.__all__) == sorted(
        ["AgentoptError", "ConfigError", "InputError", "__version__"]
    )


@pytest.mark.parametrize("name", PACKAGES)
def test_package_all_names_exist(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []

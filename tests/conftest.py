"""Shared fixtures. Tests never touch the network; reference files written by others
(M365 schema examples, azd azure.yaml, Foundry agent.yaml) are conformance fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _reference_dir() -> Path:
    env = os.environ.get("AGENTOPT_REFERENCE_DIR")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "reference"


REFERENCE = _reference_dir()


@pytest.fixture
def reference() -> Path:
    """The shared reference folder (beside the repo in development and in CI)."""
    assert REFERENCE.is_dir(), f"reference files not found at {REFERENCE}"
    return REFERENCE


M365_FIXTURES = REPO / "tests" / "fixtures" / "m365"


@pytest.fixture
def m365() -> Path:
    """Upstream microsoft/m365-copilot-eval files (schema, examples, samples; see SOURCE.md)."""
    return M365_FIXTURES


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty agent project directory, made the working directory, with no provider keys."""
    for var in list(os.environ):
        if var.endswith(("_API_KEY", "_ENDPOINT")) or var in {
            "OPENAI_BASE_URL",
            "AZURE_ENV_NAME",
            "OPENAI_API_VERSION",
        }:
            monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path

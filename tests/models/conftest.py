"""Fixtures of the model-layer tests: a local OpenAI-protocol server and provider env vars."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.models.helpers import TEST_KEY


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A started fake OpenAI server on 127.0.0.1:<ephemeral>."""
    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture
def openai_env(project: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI) -> FakeOpenAI:
    """OPENAI_API_KEY set to a test key and OPENAI_BASE_URL pointing at the fake server."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    return fake

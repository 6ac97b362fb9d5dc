"""Helpers shared by the model-layer tests."""

from __future__ import annotations

from agentopt.models import CallSettings, ProviderConfig
from tests.fake_openai import FakeOpenAI

TEST_KEY = "sk-test-0123456789abcdefSECRET"


def fast_settings(srv: FakeOpenAI | None = None, **overrides: object) -> CallSettings:
    """Call settings with millisecond back-off; `fake:` is a compat provider on the server."""
    values: dict[str, object] = {"retry_base_s": 0.01, "retry_cap_s": 0.05}
    if srv is not None:
        values["providers"] = {"fake": ProviderConfig(type="compat", base_url=srv.base_url)}
    values.update(overrides)
    return CallSettings(**values)  # type: ignore[arg-type]

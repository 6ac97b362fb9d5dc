"""Redaction sees environment changes even though it caches the secret values."""

from __future__ import annotations

import pytest

from agentopt.core.redaction import redact, redact_data


def test_new_secret_env_var_is_masked_after_a_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact("nothing secret here") == "nothing secret here"
    monkeypatch.setenv("SHOP_API_KEY", "value-that-must-not-leak")
    assert "value-that-must-not-leak" not in redact("key=value-that-must-not-leak!")
    monkeypatch.setenv("SHOP_API_KEY", "a-rotated-value-1234")
    assert redact("using a-rotated-value-1234") == "using ***"
    monkeypatch.delenv("SHOP_API_KEY")
    assert redact("using a-rotated-value-1234") == "using a-rotated-value-1234"


def test_headers_and_bearer_tokens_are_masked() -> None:
    data = {"headers": {"Authorization": "Bearer abc.def", "api-key": "k-123456"}, "x": ["ok"]}
    masked = redact_data(data)
    assert masked["headers"] == {"Authorization": "***", "api-key": "***"}
    assert "abc.def.ghi" not in redact("Authorization: Bearer abc.def.ghi")


def test_only_secret_values_are_masked_not_ordinary_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_TOKEN", "true")
    monkeypatch.setenv("LEGACY_API_KEY", "Incorrect")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")
    message = "Incorrect API key provided: sk-live-0123456789abcdef (retry is true)"
    assert redact(message) == "Incorrect API key provided: *** (retry is true)"
    monkeypatch.setenv("SHORT_SECRET", "ab12cd")
    assert redact("token ab12cd, not xab12cdx") == "token ***, not xab12cdx"

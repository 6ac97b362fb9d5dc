"""The public surface of agentopt.models is curated (style.md rule 1)."""

from __future__ import annotations

import subprocess
import sys

import agentopt.models as models
import agentopt.models.providers as providers


def test_models_all_is_pinned() -> None:
    assert sorted(models.__all__) == sorted(
        [
            "DEFAULT_EMBED_MODEL",
            "LOCAL_CHAT_MODEL",
            "POOLS",
            "AIMDState",
            "CacheStats",
            "CallLayer",
            "CallSettings",
            "CallStats",
            "ChatRequest",
            "ChatResponse",
            "CostEstimate",
            "Embeddings",
            "FunctionCall",
            "Ledger",
            "LimiterEvent",
            "Message",
            "ModelCacheStats",
            "ModelRef",
            "Pool",
            "PoolLimiter",
            "Price",
            "PriceTable",
            "ProviderConfig",
            "RetryPolicy",
            "ToolCall",
            "ToolDef",
            "Totals",
            "Usage",
            "cache_clear",
            "cache_stats",
            "canonical_json",
            "chat_cache_key",
            "classify",
            "embed_cache_key",
            "estimate",
            "estimate_tokens",
            "fallback_notice",
            "is_reasoning_model",
            "parse_age",
            "parse_retry_after",
            "project_endpoint",
            "register_mock",
            "resolve_model",
            "unregister_mock",
        ]
    )
    for name in models.__all__:
        assert hasattr(models, name), name
    for name in providers.__all__:
        assert hasattr(providers, name), name


def test_importing_the_layer_loads_no_heavy_sdk() -> None:
    """`agentopt --help` stays fast: SDKs load when their provider is first used."""
    code = (
        "import sys, agentopt.models; "
        "heavy = [m for m in ('openai', 'azure.identity', 'azure.ai.projects', 'xllamacpp', "
        "'onnxruntime', 'numpy', 'tokenizers') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

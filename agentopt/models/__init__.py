"""agentopt.models: one call layer over every model provider, and the embedded offline models.

Everything above this layer calls models through `CallLayer` (cache → limiter → retry →
provider → usage/cost); providers are small adapters (openai, azure, foundry, ollama/compat,
local, mock). See models.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.contracts import Usage
    from agentopt.models.cache_admin import (
        CacheStats,
        ModelCacheStats,
        cache_clear,
        cache_stats,
        parse_age,
    )
    from agentopt.models.cache_key import canonical_json, chat_cache_key, embed_cache_key
    from agentopt.models.call import CallLayer
    from agentopt.models.call_stats import CallStats
    from agentopt.models.classify import classify, parse_retry_after
    from agentopt.models.cost import (
        CostEstimate,
        Ledger,
        PriceTable,
        Totals,
        estimate,
        estimate_tokens,
    )
    from agentopt.models.limiter import AIMDState, LimiterEvent, PoolLimiter
    from agentopt.models.providers.mock import register_mock, unregister_mock
    from agentopt.models.reasoning import is_reasoning_model
    from agentopt.models.resolve import (
        DEFAULT_EMBED_MODEL,
        LOCAL_CHAT_MODEL,
        ModelRef,
        fallback_notice,
        project_endpoint,
        resolve_model,
    )
    from agentopt.models.retry import RetryPolicy
    from agentopt.models.settings import CallSettings, Price, ProviderConfig
    from agentopt.models.types import (
        POOLS,
        ChatRequest,
        ChatResponse,
        Embeddings,
        FunctionCall,
        Message,
        Pool,
        ToolCall,
        ToolDef,
    )

_HOMES = {
    "Usage": "agentopt.contracts",
    "canonical_json": "agentopt.models.cache_key",
    "chat_cache_key": "agentopt.models.cache_key",
    "embed_cache_key": "agentopt.models.cache_key",
    "CacheStats": "agentopt.models.cache_admin",
    "ModelCacheStats": "agentopt.models.cache_admin",
    "cache_clear": "agentopt.models.cache_admin",
    "cache_stats": "agentopt.models.cache_admin",
    "parse_age": "agentopt.models.cache_admin",
    "CallLayer": "agentopt.models.call",
    "CallStats": "agentopt.models.call_stats",
    "classify": "agentopt.models.classify",
    "parse_retry_after": "agentopt.models.classify",
    "CostEstimate": "agentopt.models.cost",
    "Ledger": "agentopt.models.cost",
    "PriceTable": "agentopt.models.cost",
    "Totals": "agentopt.models.cost",
    "estimate": "agentopt.models.cost",
    "estimate_tokens": "agentopt.models.cost",
    "AIMDState": "agentopt.models.limiter",
    "LimiterEvent": "agentopt.models.limiter",
    "PoolLimiter": "agentopt.models.limiter",
    "register_mock": "agentopt.models.providers.mock",
    "unregister_mock": "agentopt.models.providers.mock",
    "is_reasoning_model": "agentopt.models.reasoning",
    "DEFAULT_EMBED_MODEL": "agentopt.models.resolve",
    "LOCAL_CHAT_MODEL": "agentopt.models.resolve",
    "ModelRef": "agentopt.models.resolve",
    "fallback_notice": "agentopt.models.resolve",
    "project_endpoint": "agentopt.models.resolve",
    "resolve_model": "agentopt.models.resolve",
    "RetryPolicy": "agentopt.models.retry",
    "CallSettings": "agentopt.models.settings",
    "Price": "agentopt.models.settings",
    "ProviderConfig": "agentopt.models.settings",
    "POOLS": "agentopt.models.types",
    "ChatRequest": "agentopt.models.types",
    "ChatResponse": "agentopt.models.types",
    "Embeddings": "agentopt.models.types",
    "FunctionCall": "agentopt.models.types",
    "Message": "agentopt.models.types",
    "Pool": "agentopt.models.types",
    "ToolCall": "agentopt.models.types",
    "ToolDef": "agentopt.models.types",
}

__all__ = [
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

__getattr__ = lazy_exports(__name__, _HOMES)

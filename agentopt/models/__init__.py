"""agentopt.models: one call layer over every model provider, and the embedded offline models.

Everything above this layer calls models through `CallLayer` (cache → limiter → retry →
provider → usage/cost); providers are small adapters (openai, azure, foundry, ollama/compat,
local, mock). See models.md.
"""

from agentopt.contracts.usage import Usage
from agentopt.models.cache import canonical_json, chat_cache_key, embed_cache_key
from agentopt.models.cache_admin import (
    CacheStats,
    ModelCacheStats,
    cache_clear,
    cache_stats,
    parse_age,
)
from agentopt.models.call import CallLayer, CallStats
from agentopt.models.classify import classify, parse_retry_after
from agentopt.models.cost import CostEstimate, Ledger, PriceTable, Totals, estimate, estimate_tokens
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

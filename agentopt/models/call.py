"""The one call layer every model call goes through (models.md §3).

PLACEHOLDER CONTRACT — the model-layer work fills this in (cache → limiter → retry →
provider → usage/cost). The public surface below is fixed; callers depend on it:

    layer = CallLayer(project_dir=Path("."), settings=CallSettings(...))
    resp = await layer.complete("mock:echo", ChatRequest(messages=[...]), pool="judge")
    layer.stats()            # per-pool tokens, cost, calls, cache hits, limiter events
    await layer.aclose()
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentopt.core.errors import ModelCallError
from agentopt.models.providers.mock import MockProvider
from agentopt.models.types import ChatRequest, ChatResponse, Pool


class CallSettings(BaseModel):
    """Knobs of the call layer; CLI flags and eval.yaml `options` map onto these."""

    model_config = ConfigDict(extra="forbid")

    concurrency: dict[str, int] = Field(
        default_factory=lambda: {"agent": 8, "judge": 16, "generator": 4, "optimizer": 2}
    )
    use_cache: bool = True
    """False = `--no-cache`: bypass reads, still write."""
    cache_enabled: bool = True
    """False = no cache file at all (tests, --dry-run)."""
    max_attempts: int = 6
    call_timeout_s: float = 120.0
    run_deadline_s: float | None = None
    max_cost_usd: float | None = None
    max_calls: int | None = None


class CallLayer:
    """Single entry point for model calls."""

    def __init__(self, project_dir: Path | None = None, settings: CallSettings | None = None):
        self.project_dir = Path(project_dir or ".")
        self.settings = settings or CallSettings()
        self._mock = MockProvider()

    async def complete(
        self, model: str, request: ChatRequest, *, pool: Pool = "agent", repeat: int = 0
    ) -> ChatResponse:
        provider, _, name = model.partition(":")
        if provider == "mock":
            return await self._mock.complete(name, request)
        raise ModelCallError(f"provider for '{model}' not implemented yet", kind="not_found")

    async def embed(
        self, texts: list[str], *, model: str | None = None, pool: Pool = "judge"
    ) -> list[list[float]]:
        """Embedding vectors for `texts` (default model: the local MiniLM, models.md §4)."""
        provider, _, name = (model or "local:minilm").partition(":")
        if provider == "mock":
            return await self._mock.embed(name, texts)
        raise ModelCallError(f"embeddings for '{model}' not implemented yet", kind="not_found")

    async def aclose(self) -> None:
        return None

"""The one call layer every model call goes through (models.md §3, style.md rule 3).

    layer = CallLayer(project_dir=Path("."), settings=CallSettings(...))
    resp = await layer.complete("gpt-4.1-mini", ChatRequest(messages=[...]), pool="judge")
    vectors = await layer.embed(["a", "b"])          # local MiniLM by default
    layer.stats()                                    # per-pool tokens, cost, calls, cache hits
    await layer.aclose()

Order of concerns: resolve the name → cache → budget → limiter → retry → provider → usage/cost
→ cache write. Providers stay dumb; everything cross-cutting is here. One event loop per layer.
What the cache keeps of a call and how it replays it is `call_cache.py`; this module decides
when to ask it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

from agentopt.contracts.usage import Usage
from agentopt.core import limits
from agentopt.core.errors import ModelCallError
from agentopt.models import call_trail, deadlines
from agentopt.models.attempts import AttemptFailed, CallTarget, Outcome, run_attempts
from agentopt.models.call_cache import CallCache
from agentopt.models.call_progress import CallProgress, TokenMeter
from agentopt.models.call_state import DEFAULT_POOL_LIMIT, CallState
from agentopt.models.call_stats import CallStats
from agentopt.models.calllog import log_request, log_response
from agentopt.models.capabilities import ServerCapabilities, grammar_decoded
from agentopt.models.cost import CostEstimate, PriceTable, estimate
from agentopt.models.providers.base import CURRENT_REPEAT, Provider
from agentopt.models.providers.registry import (
    build_provider,
    capabilities_of,
    ignored_key_notices,
    is_free,
)
from agentopt.models.resolve import DEFAULT_EMBED_MODEL, ModelRef, fallback_notice, resolve_model
from agentopt.models.retry import RetryPolicy
from agentopt.models.settings import CallSettings, ProviderConfig
from agentopt.models.structured import bounded
from agentopt.models.types import POOLS, ChatRequest, ChatResponse, Embeddings, Pool

__all__ = ["CallLayer", "CallSettings", "CallStats", "ProviderConfig"]

R = TypeVar("R", ChatResponse, Embeddings)
"""What one attempt-run of the call layer returns: a chat answer or embeddings."""
log = logging.getLogger("agentopt.models")
EMBED_BATCH = 256


class CallLayer:
    """Single entry point for model calls.

    Args:
        project_dir: the agent project; the cache lives in its `.agentopt/cache.sqlite`.
        settings: limits, budgets, cache switches, providers, prices.
        on_notice: receives one-line notices meant for the user (the embedded-model fallback);
            default: a WARNING on the `agentopt.models` logger.
        environ: environment to resolve providers from (default: os.environ, read when needed).
        provider_kwargs: extra keyword arguments per provider type, passed to its factory
            (e.g. `{"azure": {"credential": cred}}`).
        rng: random source of the back-off jitter (tests pass a seeded one).
        state: the cache, limiters and ledger to share (default: this layer's own). A Ray
            executor passes a proxy of the cluster's one state (models/call_state.py).
    """

    def __init__(
        self,
        project_dir: Path | None = None,
        settings: CallSettings | None = None,
        *,
        on_notice: Callable[[str], None] | None = None,
        environ: Mapping[str, str] | None = None,
        provider_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
        rng: random.Random | None = None,
        state: CallState | None = None,
    ) -> None:
        self.project_dir = Path(project_dir or ".")
        self.settings = settings or CallSettings()
        limits.set_max_answer_bytes(self.settings.max_answer_bytes)  # one cap per command
        self.state = state or CallState(self.project_dir, self.settings)
        self.ledger = self.state.ledger
        self.prices = PriceTable(self.settings.prices)
        self._own_prices = PriceTable(self.settings.prices, shipped=False)
        self.notices: list[str] = []
        self._on_notice = on_notice
        self._environ = environ
        self._provider_kwargs = {k: dict(v) for k, v in (provider_kwargs or {}).items()}
        self._policy = RetryPolicy(
            max_attempts=max(1, self.settings.max_attempts),
            base_s=self.settings.retry_base_s,
            cap_s=self.settings.retry_cap_s,
            rng=rng or random.Random(),
        )
        self._clock = time.monotonic
        self._run_deadline = (
            self._clock() + self.settings.run_deadline_s if self.settings.run_deadline_s else None
        )
        self._providers: dict[tuple[str, str | None], Provider] = {}
        self._refs: dict[tuple[str, str], ModelRef] = {}
        self._fallbacks: set[str] = set()
        self._servers: dict[str, ServerCapabilities] = {}
        self._speeds: dict[str, deadlines.ModelSpeed] = {}
        self._cache = CallCache(self.state.cache, read=self.settings.use_cache)
        self.meter = TokenMeter()
        """Output tokens of every call, streamed ones as they come (progress lines read it)."""

    async def __aenter__(self) -> CallLayer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- public API --------------------------------------------------------------------------
    def resolve(self, model: str, *, purpose: str = "chat") -> ModelRef:
        """Which provider and model a name means (emits the fallback notice once)."""
        key = (model, purpose)
        ref = self._refs.get(key)
        if ref is None:
            env = self._environ
            ref = self._refs[key] = resolve_model(model, self.settings, env, purpose=purpose)
            if ref.auto_fallback and ref.model not in self._fallbacks:
                # One line per embedded model, however many names fell back to it.
                self._fallbacks.add(ref.model)
                self._notice(fallback_notice(ref, self._environ))
            if ref.provider in self.settings.providers:
                for notice in ignored_key_notices(ref.provider, ref.config):
                    self._notice(notice)
        return ref

    def grammar_decoded(self, model: str) -> bool:
        """Whether `model`'s JSON answers are decoded under a grammar compiled from the schema
        (`capabilities.grammar_decoded`): callers may then send bounded schemas."""
        ref = self.resolve(model)
        return grammar_decoded(ref.type, ref.config)

    async def complete(
        self, model: str, request: ChatRequest, *, pool: Pool = "agent", repeat: int = 0
    ) -> ChatResponse:
        """One chat completion, shaped for the server (structured-output ladder, prompted
        tools, refused parameters: `capabilities`), through cache → budget → limiter → retry →
        provider → cost. A structured request without `max_tokens` is bounded by its schema."""
        _check_pool(pool)
        ref = self.resolve(model)
        provider = self._provider(ref)
        request = bounded(request)

        async def send(shaped: ChatRequest) -> ChatResponse:
            return await self._complete_once(ref, provider, shaped, pool, repeat)

        server = self._server(ref, provider)
        try:
            return await (send(request) if server is None else server.complete(request, send))
        except ModelCallError as exc:
            if exc.kind == "unsupported":  # counted here: a refusal adapted to is no error
                self.ledger.record_error(pool)
            raise

    async def _complete_once(
        self, ref: ModelRef, provider: Provider, request: ChatRequest, pool: str, repeat: int
    ) -> ChatResponse:
        key = self._cache.chat_key(ref, provider, request, repeat)
        hit = await self._cache.replay(key, provider, ref.provider)
        if hit is not None:
            self.ledger.record_hit(pool)
            call_trail.note([key] if key else None, pool)
            return hit
        self._check_run_deadline(ref)
        self.ledger.start_call()
        secrets = list(provider.secrets)
        log_request(
            provider=ref.provider,
            model=ref.model,
            pool=pool,
            attempt=1,
            body=lambda: provider.wire_request(ref.model, request),
            secrets=secrets,
        )
        CURRENT_REPEAT.set(repeat)
        try:
            outcome = await self._attempts(
                ref, provider, pool, lambda: provider.complete(ref.model, request), request
            )
        except BaseException:
            call_trail.note(None, pool)  # even when a caller adapts and asks again
            raise
        response: ChatResponse = outcome.value
        cost = self._cost(ref, [ref.model, response.model], response.usage)
        response = response.model_copy(
            update={"provider": ref.provider, "latency_s": outcome.latency_s, "cost_usd": cost}
        )
        self.ledger.record_call(pool, response.usage, cost, retries=outcome.retries)
        log_response(
            provider=ref.provider,
            model=ref.model,
            pool=pool,
            latency_s=outcome.latency_s,
            body=lambda: response.model_dump(mode="json", exclude_none=True),
            secrets=secrets,
        )
        kept = await self._cache.keep(key, ref, response, secrets, request=request, pool=pool)
        call_trail.note([key] if kept and key else None, pool)
        await self.state.sync()
        return response

    async def embed(
        self, texts: list[str], *, model: str | None = None, pool: Pool = "judge"
    ) -> list[list[float]]:
        """Embedding vectors for `texts`, in order (default: the local MiniLM, models.md §4)."""
        _check_pool(pool)
        if not texts:
            return []
        ref = self.resolve(model or DEFAULT_EMBED_MODEL, purpose="embed")
        provider = self._provider(ref)
        if not provider.embeds:
            raise ModelCallError(
                f"provider '{ref.provider}' has no embeddings endpoint",
                kind="bad_request",
                provider=ref.provider,
                model=ref.model,
            )
        unique = list(dict.fromkeys(texts))
        keys = self._cache.vector_keys(ref, provider, unique)
        found = await self._cache.vectors(keys)
        missing = [t for t in unique if t not in found]
        if not missing:
            self.ledger.record_hit(pool)
        call_trail.note(list(keys.values()) if self._cache.keeps else None, pool)  # one hit
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            self._check_run_deadline(ref)
            self.ledger.start_call()
            outcome = await self._attempts(ref, provider, pool, _embed_call(provider, ref, batch))
            result: Embeddings = outcome.value
            if len(result.vectors) != len(batch):
                raise ModelCallError(
                    f"{ref.provider} model '{ref.model}' returned {len(result.vectors)} "
                    f"embeddings for {len(batch)} texts",
                    kind="parse",
                    provider=ref.provider,
                    model=ref.model,
                )
            cost = self._cost(ref, [ref.model], result.usage)
            self.ledger.record_call(pool, result.usage, cost, retries=outcome.retries)
            found.update(zip(batch, result.vectors, strict=True))
            await self._cache.keep_vectors(keys, ref, batch, result.vectors)
            await self.state.sync()
        return [found[t] for t in texts]

    def estimate(
        self, model: str, work: Iterable[ChatRequest] | tuple[int, int, int]
    ) -> CostEstimate:
        """Dry-run estimate for `model` as this layer would resolve it (free for local/mock)."""
        ref = self.resolve(model)
        return estimate(
            f"{ref.type}:{ref.model}",
            work,
            prices=self.settings.prices,
            shipped=not _own_server(ref),
        )

    def identity(self, model: str) -> str:
        """`model` as every view shows it: the resolved provider and model, and the server
        when it is the user's own (`ModelRef.identity`)."""
        return self.resolve(model).identity

    def stats(self) -> CallStats:
        """Per-pool and total accounting, limiter summaries and notices, for the run summary."""
        return CallStats(
            pools={k: v.model_copy() for k, v in self.ledger.pools.items()},
            total=self.ledger.total,
            rate_limits=self.state.rate_limits(),
            limiter_events=self.state.limiter_events(),
            unpriced_models=sorted(self.ledger.unpriced),
            notices=list(self.notices),
            capabilities={name: server.summary() for name, server in sorted(self._servers.items())},
        )

    def limiter_summary(self) -> str:
        """One line for the run summary, e.g. "judge: rate limited 14×, concurrency 16 → 4 → 11"."""
        return "; ".join(f"{pool}: {text}" for pool, text in self.stats().rate_limits.items())

    async def aclose(self) -> None:
        """Close provider clients and flush the cache's hit counters."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            await provider.aclose()
        await self.state.aclose()

    # -- internals ---------------------------------------------------------------------------
    def _notice(self, text: str) -> None:
        if text in self.notices:
            return
        self.notices.append(text)
        if self._on_notice is not None:
            self._on_notice(text)
        else:
            log.warning("%s", text)

    def _provider(self, ref: ModelRef) -> Provider:
        key = (ref.provider, ref.config.base_url)
        provider = self._providers.get(key)
        if provider is None:
            import os

            env = self._environ if self._environ is not None else os.environ
            kwargs = self._provider_kwargs.get(ref.type, {})
            provider = build_provider(ref.provider, ref.config, self.settings, env, **kwargs)
            self._providers[key] = provider
        return provider

    def _server(self, ref: ModelRef, provider: Provider) -> ServerCapabilities | None:
        """The capability memory of a remote server + model (None: in-process models)."""
        if capabilities_of(ref.type).in_process:
            return None
        if ref.qualified not in self._servers:
            key = (ref.type, str(provider.base_url), ref.model)
            self._servers[ref.qualified] = ServerCapabilities(
                ref.provider, key, ref.config, self.state.cache, self._notice
            )
        return self._servers[ref.qualified]

    def _check_run_deadline(self, ref: ModelRef) -> None:
        if self._run_deadline is not None and self._clock() >= self._run_deadline:
            raise ModelCallError(
                f"{ref.provider} model '{ref.model}': the run deadline (--timeout) was reached "
                "before the call started",
                kind="deadline",
                provider=ref.provider,
                model=ref.model,
                hint="raise --timeout, or resume the run (finished calls are cached)",
            )

    def limit(self, pool: str) -> int:
        """The configured concurrency of `pool` (what the run engine sizes its workers by)."""
        _check_pool(pool)
        return self.settings.concurrency.get(pool, DEFAULT_POOL_LIMIT)

    def slot(self, pool: str) -> AbstractAsyncContextManager[int]:
        """Hold one of `pool`'s slots for a whole unit of work: agent targets hold an agent
        slot per task run (`run_turns` does it), so `--concurrency` bounds agent runs of every
        target; model calls made inside reuse the held slot."""
        _check_pool(pool)
        return self.state.limiter(pool).slot()

    async def _speed(self, ref: ModelRef, provider: Provider) -> deadlines.ModelSpeed | None:
        """The measured speed of a local or self-hosted model (None: hosted APIs)."""
        if not deadlines.watched(ref.type):
            return None
        speed = self._speeds.get(ref.qualified)
        if speed is None:
            key = (ref.type, str(provider.base_url), ref.model)
            speed = deadlines.ModelSpeed(ref.type, key, self.state.cache)
            self._speeds[ref.qualified] = speed
        await speed.load()
        return speed

    async def _attempts(
        self,
        ref: ModelRef,
        provider: Provider,
        pool: str,
        send: Callable[[], Awaitable[R]],
        request: ChatRequest | None = None,
    ) -> Outcome[R]:
        speed = await self._speed(ref, provider)
        limits = deadlines.windows(ref.type, self.settings, request, speed)
        progress = CallProgress(clock=self._clock, meter=self.meter, plain_s=limits.plain_s)
        target = CallTarget(
            provider=ref.provider,
            model=ref.model,
            pool=pool,
            base_url=provider.base_url,
            secrets=tuple(provider.secrets),
        )
        try:
            outcome = await run_attempts(
                send,
                target=target,
                limiter=self.state.limiter(pool),
                policy=self._policy,
                call_timeout_s=limits.call_timeout_s,
                attempt_timeout_s=limits.attempt_s,
                stall_s=limits.stall_s,
                first_token_s=limits.first_token_s,
                progress=progress,
                run_deadline=self._run_deadline,
                clock=self._clock,
            )
        except AttemptFailed as failed:
            if failed.error.kind != "unsupported":
                self.ledger.record_error(pool, retries=failed.retries)
            raise failed.error from None
        finally:
            if speed is not None and limits.plain_s is not None and progress.plain_s is None:
                speed.streams_only = True  # a plain attempt failed: this model streams again
        if isinstance(outcome.value, ChatResponse):
            usage = outcome.value.usage
            self.meter.add(usage.output_tokens - progress.tokens)  # what no stream ticked
            if speed is not None:
                deadlines.measure(speed, progress, outcome.value, outcome.latency_s)
                await speed.save()
        return outcome

    def _cost(self, ref: ModelRef, names: list[str], usage: Usage) -> float:
        if is_free(ref.type):
            return 0.0
        own = _own_server(ref)
        cost = (self._own_prices if own else self.prices).cost(names, usage)
        if cost is None:
            if not own:  # a server of one's own costs nothing; an unknown vendor model is listed
                self.ledger.unpriced.add(ref.qualified)
            return 0.0
        return cost


def _own_server(ref: ModelRef) -> bool:
    """A server the user runs (compat/ollama/vllm, or any provider on loopback): priced only
    by eval.yaml `options.prices`, never at a vendor's list price."""
    return capabilities_of(ref.type).self_hosted or ref.local_server


def _embed_call(
    provider: Provider, ref: ModelRef, batch: list[str]
) -> Callable[[], Awaitable[Embeddings]]:
    return lambda: provider.embed(ref.model, batch)


def _check_pool(pool: str) -> None:
    if pool not in POOLS:
        raise ValueError(f"unknown pool '{pool}' (pools: {', '.join(POOLS)})")

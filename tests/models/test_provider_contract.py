"""The provider contract (providers/base.py): a `Provider` subclass with default hooks; what a
provider type is, declared when it registers (`Capabilities`), decides what the call layer does
— no list of type names; an answer without `finish_reason` is cached, not silently dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts import Usage
from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.models import CallLayer, ChatRequest, Message
from agentopt.models.providers import PROVIDERS, Provider, register_provider
from agentopt.models.providers.base import Capabilities
from agentopt.models.settings import CallSettings, ProviderConfig
from agentopt.models.types import ChatResponse
from tests.models.helpers import fast_settings


class Scripted(Provider):
    """Answers with the finish_reason the test chose, counting what it was asked."""

    id = "scripted"
    base_url = "scripted://"
    finish: str | None = None
    calls = 0

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        type(self).calls += 1
        return ChatResponse(
            message=Message(role="assistant", content="a whole answer"),
            finish_reason=type(self).finish,
            usage=Usage(input_tokens=10, output_tokens=3),
            model=model,
        )


def _factory(
    name: str, config: ProviderConfig, settings: CallSettings, env: Mapping[str, str]
) -> Provider:
    return Scripted()


@pytest.fixture
def plugin_types() -> Iterator[None]:
    """Three plugin provider types, one per kind of declaration, removed afterwards."""
    register_provider("scripted")(_factory)
    register_provider("scripted_own", capabilities=Capabilities(self_hosted=True, grammar=True))(
        _factory
    )
    register_provider("scripted_inproc", capabilities=Capabilities(in_process=True))(_factory)
    Scripted.calls = 0
    yield
    for name in ("scripted", "scripted_own", "scripted_inproc"):
        PROVIDERS.remove(name)


def ask() -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content="hello")])


def run(project: Path, model: str, settings: CallSettings | None = None) -> tuple[Any, Any]:
    async def main() -> tuple[Any, Any]:
        async with CallLayer(project, settings or fast_settings()) as layer:
            return await layer.complete(model, ask(), pool="judge"), layer

    return asyncio.run(main())


@pytest.mark.usefixtures("plugin_types")
def test_an_answer_without_finish_reason_is_cached(project: Path) -> None:
    Scripted.finish = None
    first, _ = run(project, "scripted:m")
    again, _ = run(project, "scripted:m")  # a new layer: a new run, same project
    assert not first.cached and again.cached
    assert again.text == "a whole answer" and Scripted.calls == 1


@pytest.mark.usefixtures("plugin_types")
def test_a_cut_off_answer_is_still_never_cached(project: Path) -> None:
    Scripted.finish = "length"
    run(project, "scripted:m")
    again, _ = run(project, "scripted:m")
    assert not again.cached and Scripted.calls == 2


@pytest.mark.usefixtures("plugin_types")
def test_declared_capabilities_decide_what_the_call_layer_does(project: Path) -> None:
    Scripted.finish = "stop"
    model = "gpt-4.1-mini"  # in the shipped price table

    async def main() -> None:
        async with CallLayer(project, fast_settings()) as layer:
            hosted = await layer.complete(f"scripted:{model}", ask(), pool="judge")
            own = await layer.complete(f"scripted_own:{model}", ask(), pool="judge")
            await layer.complete(f"scripted_inproc:{model}", ask(), pool="judge")
            assert hosted.cost_usd > 0  # a hosted API: the vendor's list price
            assert own.cost_usd == 0  # the user's own server: options.prices only (none here)
            assert layer.stats().unpriced_models == []
            assert layer.grammar_decoded(f"scripted_own:{model}")
            assert not layer.grammar_decoded(f"scripted:{model}")
            # A server's refusals are remembered; an in-process model has no server.
            assert set(layer.stats().capabilities) == {f"scripted:{model}", f"scripted_own:{model}"}

    asyncio.run(main())


@pytest.mark.usefixtures("plugin_types")
def test_the_default_embed_hook_refuses_before_sending(project: Path) -> None:
    async def main() -> None:
        async with CallLayer(project, fast_settings()) as layer:
            with pytest.raises(ModelCallError) as info:
                await layer.embed(["a"], model="scripted:m")
            assert "has no embeddings endpoint" in info.value.message

    asyncio.run(main())


def test_a_factory_that_returns_no_provider_is_refused_with_the_reason(project: Path) -> None:
    class Duck:
        id = "duck"
        base_url = "duck://"

    register_provider("duck")(lambda name, config, settings, env: Duck())
    try:
        with pytest.raises(ConfigError) as info:
            run(project, "duck:m")
    finally:
        PROVIDERS.remove("duck")
    said = str(info.value)
    assert "provider type 'duck'" in said and "Duck, which is not a Provider" in said
    assert "subclass agentopt.models.providers.Provider" in said

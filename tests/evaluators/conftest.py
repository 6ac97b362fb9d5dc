"""Fixtures for evaluator tests: scripted judge models (`mock:`) that record every request,
and a harness that builds and runs evaluators through a real call layer (cache off)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentopt.evaluators import EvalResult, EvalSample, build_evaluator
from agentopt.models.call import CallLayer, CallSettings
from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest

Reply = str | Exception | Callable[[ChatRequest], str]
_ids = itertools.count()


@dataclass
class ScriptedJudge:
    """A `mock:` judge that answers from a list of replies (the last one repeats) and keeps
    every request it got, so tests can read the prompts the evaluator sent."""

    model: str
    replies: list[Reply]
    requests: list[ChatRequest] = field(default_factory=list)

    def __call__(self, request: ChatRequest) -> str:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply(request) if callable(reply) else reply

    @property
    def calls(self) -> int:
        return len(self.requests)

    def prompt(self, call: int = 0) -> str:
        """The full text (all messages) of one request."""
        return "\n".join(m.content or "" for m in self.requests[call].messages)


@pytest.fixture
def judge() -> Iterator[Callable[..., ScriptedJudge]]:
    """`j = judge(reply1, reply2, ...)`; use `j.model` as the judge model name."""
    made: list[str] = []

    def make(*replies: Reply) -> ScriptedJudge:
        name = f"evaljudge{next(_ids)}"
        scripted = ScriptedJudge(model=f"mock:{name}", replies=list(replies))
        register_mock(name, scripted)
        made.append(name)
        return scripted

    yield make
    for name in made:
        unregister_mock(name)


@dataclass
class Harness:
    """Builds evaluators and runs them on samples inside one event loop per call."""

    project_dir: Path

    def layer(self) -> CallLayer:
        return CallLayer(self.project_dir, CallSettings(cache_enabled=False, max_attempts=1))

    def run(
        self,
        spec: Any,
        samples: EvalSample | Sequence[EvalSample],
        *,
        judge_model: str | None = None,
    ) -> Any:
        """One result for one sample, a list for a list."""

        async def go() -> list[EvalResult]:
            layer = self.layer()
            try:
                ev = build_evaluator(
                    spec, judge_model=judge_model, layer=layer, project_dir=self.project_dir
                )
                many = samples if isinstance(samples, Sequence) else [samples]
                return [await ev.evaluate(s) for s in many]
            finally:
                await layer.aclose()

        results = asyncio.run(go())
        return results if isinstance(samples, Sequence) else results[0]

    def build(self, spec: Any, *, judge_model: str | None = None) -> Any:
        return build_evaluator(
            spec, judge_model=judge_model, layer=self.layer(), project_dir=self.project_dir
        )


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(project_dir=tmp_path)

"""A scripted `mock:` eval model for the generate/update/init tests (import
`generator_fixture` into a test module to get the `generator` fixture).

It stands in for the remote generator and judge: it answers each request from the request's
own content (the structured-output schema name says what is asked; the prompt says how many
tasks, which category, which batch), so identical requests get identical answers and a rerun
is reproducible. Knobs make it misbehave the way real generators do — invalid tasks,
duplicates, near-duplicates, a rubric with sloppy ids and weights, a judge that cannot tell
good from bad.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest

_ids = itertools.count()

GOOD_MARK = "GOOD-ANSWER"
BAD_MARK = "BAD-ANSWER"
DEFAULT_RUBRIC: list[dict[str, Any]] = [
    {"id": "Refund Accuracy", "description": "States the 30-day refund window.", "weight": 10},
    {"id": "tone", "description": "Polite and empathetic.", "weight": 4},
    {"id": "policy_grounding", "description": "Cites the store policy.", "weight": 7},
    {"id": "next-steps", "description": "Says what the customer does next.", "weight": 3},
]


def _words(seed: str, n: int) -> list[str]:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return [f"w{digest[i * 6 : i * 6 + 6]}" for i in range(n)]


@dataclass
class ScriptedGenerator:
    """`mock:<name>` answering generation, rubric, answer-pair and rubric-judge requests.

    Attributes:
        invalid_every: every k-th generated task has a single criterion (invalid).
        duplicate_every: every k-th task repeats the first query of its reply exactly.
        near_duplicate_every: every k-th task rephrases the first query (same words).
        max_distinct: cap on distinct tasks the generator can ever invent (then it repeats).
        rubric: the dimensions it proposes (raw, possibly sloppy).
        rubric_replies: replies for rubric requests in order (the last repeats); overrides.
        judge_can_tell: False = the judge scores every answer 3/5 (self-check fails).
    """

    model: str
    invalid_every: int = 0
    duplicate_every: int = 0
    near_duplicate_every: int = 0
    max_distinct: int | None = None
    rubric: list[dict[str, Any]] = field(default_factory=lambda: list(DEFAULT_RUBRIC))
    rubric_replies: list[str] = field(default_factory=list)
    judge_can_tell: bool = True
    requests: list[ChatRequest] = field(default_factory=list)
    _rubric_calls: int = 0

    def __call__(self, request: ChatRequest) -> str:
        self.requests.append(request)
        name = (request.response_format or {}).get("json_schema", {}).get("name", "")
        prompt = request.messages[-1].content or ""
        if name == "generated_tasks":
            return "```json\n" + json.dumps({"tasks": self._tasks(request, prompt)}) + "\n```"
        if name == "generated_threads":
            return json.dumps({"threads": self._threads(request, prompt)})
        if name == "generated_conversations":
            return json.dumps({"conversations": self._conversations(request, prompt)})
        if name == "rubric_dimensions":
            return self._rubric()
        if name == "answer_pair":
            return json.dumps(
                {
                    "good": f"{GOOD_MARK} Refunds are accepted within 30 days of delivery.",
                    "bad": f"{BAD_MARK} No idea, maybe try another shop.",
                }
            )
        if name == "rubric":
            return self._judge(prompt)
        if name == "task_adherence":  # every criterion met: the suite's run can pass
            names = re.findall(r"^- name: (\w+)", prompt, flags=re.M)
            return json.dumps(
                {"verdicts": [{"name": n, "passed": True, "reason": "ok"} for n in names]}
            )
        raise AssertionError(f"unexpected request kind {name!r}")

    def calls(self, kind: str) -> int:
        return sum(
            1
            for r in self.requests
            if (r.response_format or {}).get("json_schema", {}).get("name") == kind
        )

    # -- generation --------------------------------------------------------------------------
    def _tasks(self, request: ChatRequest, prompt: str) -> list[dict[str, Any]]:
        category = re.search(r'of the category "(\w+)"', prompt)[1]  # type: ignore[index]
        count = int(re.search(r"Write (\d+) test task", prompt)[1])  # type: ignore[index]
        out: list[dict[str, Any]] = []
        for i in range(count):
            key = f"{request.seed}|{category}|{i}|{prompt.count('- ')}"
            topic = category
            if self.max_distinct is not None:  # a generator that runs out of ideas
                key, topic = f"pool|{i % self.max_distinct}", "an"
            a, b, c = _words(key, 3)
            query = f"Customer asks about {topic} order {a} with item {b} shipped {c}?"
            k = len(out) + 1
            if self.duplicate_every and k % self.duplicate_every == 0 and out:
                query = out[0]["query"]
            elif self.near_duplicate_every and k % self.near_duplicate_every == 0 and out:
                query = out[0]["query"].upper().replace("?", "!!") + " please"
            criteria = [
                {"name": "Mentions Window", "instruction": "States the 30-day refund window."},
                {"name": "no invention", "instruction": "Does not invent a policy exception."},
            ]
            if self.invalid_every and k % self.invalid_every == 0:
                criteria = criteria[:1]
            out.append(
                {
                    "name": f"{category} {a}",
                    "query": query,
                    "ground_truth": f"Answer for {a}" if i % 2 == 0 else None,
                    "category": category,
                    "criteria": criteria,
                }
            )
        return out

    def _threads(self, request: ChatRequest, prompt: str) -> list[dict[str, Any]]:
        category = re.search(r'of the category "(\w+)"', prompt)[1]  # type: ignore[index]
        count = int(re.search(r"Write (\d+) multi-turn", prompt)[1])  # type: ignore[index]
        out = []
        for i in range(count):
            a, b = _words(f"thread|{request.seed}|{category}|{i}", 2)
            out.append(
                {
                    "name": f"thread {a}",
                    "category": category,
                    "turns": [
                        {
                            "query": f"I want to return order {a} please",
                            "ground_truth": None,
                            "criteria": [
                                {"name": "asks_id", "instruction": "Asks for the order number."}
                            ],
                        },
                        {
                            "query": f"Actually make it an exchange for item {b}",
                            "ground_truth": "An exchange is possible.",
                            "criteria": [
                                {"name": "exchange", "instruction": "Switches to an exchange."}
                            ],
                        },
                    ],
                }
            )
        return out

    def _conversations(self, request: ChatRequest, prompt: str) -> list[dict[str, Any]]:
        category = re.search(r'of the category "(\w+)"', prompt)[1]  # type: ignore[index]
        count = int(re.search(r"Write (\d+) scenario", prompt)[1])  # type: ignore[index]
        out = []
        for i in range(count):
            a, b, c = _words(f"conversation|{request.seed}|{category}|{i}", 3)
            out.append(
                {
                    "name": f"scenario {a}",
                    "category": category,
                    "persona": "A hurried customer who writes short messages.",
                    "goal": f"Return {b} from order {a} and get the refund for {c} started.",
                    "query": f"I need to send back {b} {c} from order {a}",
                    "stop_when": "The agent confirms the return and the refund.",
                    "criteria": [
                        {"name": "asks_reason", "instruction": "Asks why the item is returned."},
                        {"name": "confirms", "instruction": "Confirms the refund in the end."},
                    ],
                }
            )
        return out

    # -- rubric, answers, judge -------------------------------------------------------------------
    def _rubric(self) -> str:
        self._rubric_calls += 1
        if self.rubric_replies:
            return self.rubric_replies[min(self._rubric_calls, len(self.rubric_replies)) - 1]
        return json.dumps({"dimensions": self.rubric})

    def _judge(self, prompt: str) -> str:
        ids = re.findall(r"^- id: (\w+)", prompt, flags=re.M)
        if not self.judge_can_tell:
            score = 3
        elif GOOD_MARK in prompt:
            score = 5
        elif BAD_MARK in prompt:
            score = 1
        else:
            score = 3
        dims = [{"id": i, "applicable": True, "score": score, "reason": "ok"} for i in ids]
        return json.dumps({"dimensions": dims})


@pytest.fixture(name="generator")
def generator_fixture() -> Iterator[Callable[..., ScriptedGenerator]]:
    """`g = generator(invalid_every=3, ...)`; use `g.model` as the eval model."""
    made: list[str] = []

    def make(**knobs: Any) -> ScriptedGenerator:
        name = f"wfgen{next(_ids)}"
        scripted = ScriptedGenerator(model=f"mock:{name}", **knobs)
        register_mock(name, scripted)
        made.append(name)
        return scripted

    yield make
    for name in made:
        unregister_mock(name)

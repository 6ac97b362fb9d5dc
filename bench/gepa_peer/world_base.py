"""What every benchmark world shares (`worlds.py` documents the worlds): the tasks, the
deterministic draws, what a reflection prompt asks, and `World` itself — the `phrases` world,
which the others vary."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

BASE_INSTRUCTIONS = "You are the store's support assistant. Answer customer questions briefly."
TOPICS: dict[str, str] = {
    "returns": "refund window",
    "shipping": "tracking link",
    "orders": "order number",
    "warranty": "two-year warranty",
    "payments": "secure checkout",
    "accounts": "password reset link",
    "delivery": "signature on delivery",
    "privacy": "data export",
}
KIND_QUERIES = {
    "order": "A customer asks where their order is.",
    "tracking": "A customer asks where their parcel is right now.",
    "promo": "A customer asks what is on offer this week.",
}
KIND_CRITERIA = {
    "order": "The response tells the customer the status of their order.",
    "tracking": "The response tells the customer where their parcel is.",
    "promo": "The response tells the customer about the current promotions.",
}
PER_SPLIT = 16
SPLITS = ("train", "validation", "test")
MAX_NEW_RULES = 2
RULE = "Always mention '{phrase}'."
MISSING = re.compile(r"does not mention '([^']+)'")
_WORD = re.compile(r"\S+")


def draw(*parts: object) -> float:
    """A deterministic uniform draw in [0, 1) from its arguments."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def words(text: str) -> int:
    return len(_WORD.findall(text))


@dataclass(frozen=True)
class BenchTask:
    """One task: a topic, an optional customer group (`subsets`) and kind (`tool-descriptions`)."""

    name: str
    topic: str
    split: str
    group: str = ""
    kind: str = "policy"
    text: str = ""
    """The question itself, when the world words it (`memorized-qa`)."""
    truth: str = ""
    """The expected answer, when the world scores by one (`memorized-qa`: no judge)."""

    @property
    def query(self) -> str:
        if self.text:
            return f"[{self.name}] {self.text}"
        if self.kind in KIND_QUERIES:
            return f"[{self.name}] {KIND_QUERIES[self.kind]}"
        who = f"A {self.group} customer" if self.group else "A customer"
        return f"[{self.name}] {who} asks a question about {self.topic}."

    @property
    def criterion(self) -> str:
        if self.truth:
            return f"The answer contains '{self.truth}'."
        if self.kind in KIND_CRITERIA:
            return KIND_CRITERIA[self.kind]
        scope = f" for {self.group} customers" if self.group else ""
        return f"The response follows the store's policy on {self.topic}{scope}."

    def row(self) -> dict[str, Any]:
        """The task as a jsonl row of an agentopt dataset."""
        if self.truth:
            return {"name": self.name, "query": self.query, "ground_truth": self.truth}
        return {
            "name": self.name,
            "query": self.query,
            "criteria": [{"name": "policy", "instruction": self.criterion}],
        }


@dataclass
class Reflection:
    """What a reflection prompt asks, read from any optimizer's layout."""

    component: str
    """`instructions`, or the name of the tool whose description is rewritten."""
    current: str
    reasons: list[str]
    """The judges' reasons shown in the prompt, in order."""
    digest: str
    """A hash of the prompt (the reflection model's own randomness)."""


@dataclass
class AgentTurn:
    """The agent's reply: an answer, or a tool call."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 10


class World:
    """`phrases`: one rule phrase per topic; a rule in the prompt makes its topic pass."""

    name = "phrases"
    about = "a hidden phrase per topic, learnt from the judges' reasons"
    p_with, p_without = 0.85, 0.15
    tools: ClassVar[list[dict[str, Any]]] = []
    tool_mocks: ClassVar[dict[str, Any] | None] = None
    calls_per_task = 2
    """Agent + judge requests per evaluated task."""

    # -- the dataset ---------------------------------------------------------------------------
    def tasks(self) -> list[BenchTask]:
        """`PER_SPLIT` tasks per split, every topic equally often, interleaved by topic."""
        out: list[BenchTask] = []
        for split in SPLITS:
            for i in range(PER_SPLIT):
                out.append(BenchTask(f"t{len(out):02d}", list(TOPICS)[i % len(TOPICS)], split))
        return out

    def phrase(self, task: BenchTask) -> str:
        return TOPICS[task.topic]

    def phrases(self) -> list[str]:
        return list(TOPICS.values())

    def rules_in(self, prompt: str) -> frozenset[str]:
        """The rule phrases a prompt contains."""
        low = prompt.lower()
        return frozenset(p for p in self.phrases() if p in low)

    # -- the agent -----------------------------------------------------------------------------
    def p_pass(self, task: BenchTask, instructions: str) -> float:
        return self.p_with if self.phrase(task) in self.rules_in(instructions) else self.p_without

    def passes(self, seed: int, task: BenchTask, instructions: str) -> bool:
        key = "|".join(sorted(self.rules_in(instructions)))
        return draw(seed, task.name, key) < self.p_pass(task, instructions)

    def answer(
        self,
        seed: int,
        task: BenchTask,
        instructions: str,
        tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:
        """`tools`: name → description offered; `results`: tool results of this turn so far."""
        style = hashlib.sha256(instructions.encode()).hexdigest()[:6]
        text = f"About your question {task.name} on {task.topic} (reply {style})."
        if self.passes(seed, task, instructions):
            text += f" Please note our {self.phrase(task)}."
        return AgentTurn(text=text, prompt_tokens=10)

    # -- the judge -----------------------------------------------------------------------------
    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        phrase = self.phrase(task)
        if phrase in response.lower():
            return True, f"mentions '{phrase}', as the policy on {task.topic} requires"
        return False, f"does not mention '{phrase}', which the policy on {task.topic} requires"

    # -- the reflection model ------------------------------------------------------------------
    def rule(self, phrase: str) -> str:
        return RULE.format(phrase=phrase)

    def missing(self, reflection: Reflection, have: frozenset[str]) -> list[str]:
        new: list[str] = []
        for reason in reflection.reasons:
            for phrase in MISSING.findall(reason):
                if phrase not in have and phrase not in new and len(new) < MAX_NEW_RULES:
                    new.append(phrase)
        return new

    def reflect(self, seed: int, reflection: Reflection) -> str:
        """The new text of the component (the current one when it has nothing to add)."""
        current = reflection.current.rstrip()
        new = self.missing(reflection, self.rules_in(current))
        return current + "".join(f"\n{self.rule(p)}" for p in new)

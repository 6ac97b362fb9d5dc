"""The scripted worlds of the optimizer benchmark: a store's support agent, its judge and a
modest reflection model, each world stressing a different part of an optimizer.

Every world is deterministic given its seed: a draw is a hash of (seed, task, what the agent
can act on), so two optimizers that reach the same effective prompt get the same answers
whatever wording or framework boilerplate surrounds it. Judges' reasons are the only place
the hidden rules can be learnt from (criteria say "follows the store's policy on <topic>").

- `phrases`: a task passes w.p. 0.85 when its topic's phrase is in the prompt, else 0.15.
  Reflection appends `Always mention '<phrase>'.` for ≤ 2 phrases the reasons say are missing.
- `subsets`: business and personal customers need different phrases per topic: own phrase →
  0.9; only the other group's phrase → 0.05 (the agent over-applies it); neither → 0.4.
  Reflection appends scoped rules (`For business customers asking about returns, …`).
- `noisy-judge`: as `phrases`; the judge flips 10% of its verdicts (a hash of seed, task and
  answer) and words its reason to match the flipped verdict.
- `long-prompt`: as `phrases`, minus 0.004 pass probability per word the instructions add
  beyond 40; usage reports the prompt's tokens. Reflection gives each rule a 14-word
  justification.
- `tool-descriptions`: order and policy questions; the agent calls the tool whose description
  names what the question is about ("order" / "polic"; a tie or no match: a draw), and answers
  from its result (w.p. 0.9). `order_status` is described as a policy search. Reflection on a
  tool writes "Use this tool for <kind> questions." for the kinds reasons say need it; rules in
  the instructions do not steer the agent's choice of tool.
- `conflicting`: four topics have two plausible rules ("original payment method" / "store
  credit"): the right one → 0.85, the wrong one (alone or with the right one) → 0.02, neither
  → 0.15; the judge's reason names both. The other four topics are as in `phrases`. Reflection
  picks one of the two at random, and replaces a rule a reason says the policy does not allow.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, ClassVar

from bench.gepa_peer.world_base import (
    BASE_INSTRUCTIONS,
    MAX_NEW_RULES,
    MISSING,
    PER_SPLIT,
    RULE,
    SPLITS,
    TOPICS,
    AgentTurn,
    BenchTask,
    Reflection,
    World,
    draw,
    words,
)

__all__ = [
    "BASE_INSTRUCTIONS",
    "SPLITS",
    "TOPICS",
    "WORLDS",
    "AgentTurn",
    "BenchTask",
    "Reflection",
    "World",
    "draw",
    "words",
]


class Subsets(World):
    """`subsets`: per-group phrases; a rule for one group hurts the other until it has its own."""

    name = "subsets"
    about = (
        "business and personal customers need different phrases; one group's rule hurts the other"
    )
    p_with, p_without, p_confused = 0.9, 0.4, 0.05
    GROUPS: ClassVar[dict[str, dict[str, str]]] = {
        "business": {
            "returns": "invoice credit",
            "shipping": "freight account",
            "warranty": "service contract",
            "payments": "purchase order",
        },
        "personal": {
            "returns": "refund window",
            "shipping": "tracking link",
            "warranty": "two-year warranty",
            "payments": "secure checkout",
        },
    }

    def tasks(self) -> list[BenchTask]:
        cells = [(g, t) for t in self.GROUPS["business"] for g in self.GROUPS]
        out: list[BenchTask] = []
        for split in SPLITS:
            for i in range(PER_SPLIT):
                group, topic = cells[i % len(cells)]
                out.append(BenchTask(f"t{len(out):02d}", topic, split, group=group))
        return out

    def phrase(self, task: BenchTask) -> str:
        return self.GROUPS[task.group][task.topic]

    def other(self, task: BenchTask) -> str:
        group = next(g for g in self.GROUPS if g != task.group)
        return self.GROUPS[group][task.topic]

    def phrases(self) -> list[str]:
        return [p for rules in self.GROUPS.values() for p in rules.values()]

    def p_pass(self, task: BenchTask, instructions: str) -> float:
        have = self.rules_in(instructions)
        if self.phrase(task) in have:
            return self.p_with
        return self.p_confused if self.other(task) in have else self.p_without

    def answer(
        self,
        seed: int,
        task: BenchTask,
        instructions: str,
        tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:
        turn = super().answer(seed, task, instructions, tools, results)
        if self.phrase(task) not in turn.text and self.other(task) in self.rules_in(instructions):
            turn.text += f" Please note our {self.other(task)}."  # the other group's rule
        return turn

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        phrase, policy = self.phrase(task), f"the policy on {task.topic} for {task.group} customers"
        if phrase in response.lower():
            return True, f"mentions '{phrase}', as {policy} requires"
        return False, f"does not mention '{phrase}', which {policy} requires"

    def rule(self, phrase: str) -> str:
        for group, rules in self.GROUPS.items():
            for topic, p in rules.items():
                if p == phrase:
                    return f"For {group} customers asking about {topic}, mention '{phrase}'."
        return RULE.format(phrase=phrase)


class NoisyJudge(World):
    """`noisy-judge`: `phrases` with a judge that flips 10% of its verdicts."""

    name = "noisy-judge"
    about = "the phrases world with a judge that flips 10% of verdicts"
    flip = 0.10

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        ok, _ = super().verdict(seed, task, response)
        if draw(seed, "judge", task.name, response) < self.flip:
            ok = not ok
        phrase = self.phrase(task)
        if ok:
            return True, f"mentions '{phrase}', as the policy on {task.topic} requires"
        return False, f"does not mention '{phrase}', which the policy on {task.topic} requires"


class LongPrompt(World):
    """`long-prompt`: every word past a length costs quality; the reflection model is wordy."""

    name = "long-prompt"
    about = "each word past 40 added words costs 0.004 pass probability; reflection is wordy"
    free_words, per_word = 40, 0.004
    WHY = " Customers who ask about this expect it, and leaving it out has caused complaints."

    def added_words(self, instructions: str) -> int:
        return max(0, words(instructions) - words(BASE_INSTRUCTIONS))

    def p_pass(self, task: BenchTask, instructions: str) -> float:
        over = max(0, self.added_words(instructions) - self.free_words)
        return max(0.02, super().p_pass(task, instructions) - self.per_word * over)

    def passes(self, seed: int, task: BenchTask, instructions: str) -> bool:
        # Same draw for the same rules, so a longer wording of them can only lose.
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
        turn = super().answer(seed, task, instructions, tools, results)
        turn.prompt_tokens = 10 + round(words(instructions) * 4 / 3)
        return turn

    def rule(self, phrase: str) -> str:
        return RULE.format(phrase=phrase) + self.WHY


class ToolDescriptions(World):
    """`tool-descriptions`: only a better description of `order_status` fixes the tool choice."""

    name = "tool-descriptions"
    about = "order_status is described as a policy search; only its description can fix that"
    p_right = 0.9
    calls_per_task = 3
    NEEDS: ClassVar[dict[str, str]] = {"order": "order", "policy": "polic"}
    """Task kind → the word a description must contain for the agent to pick it."""
    RIGHT: ClassVar[dict[str, str]] = {"order": "order_status", "policy": "search_policies"}
    DATA: ClassVar[dict[str, str]] = {
        "order_status": "ORDER: shipped, arriving in two days",
        "search_policies": "POLICY: see section 4",
    }
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "type": "function",
            "function": {
                "name": "search_policies",
                "description": "Search the store's policy documents.",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "What to look up."}},
                    "required": ["query"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "order_status",
                "description": "Search the store's policy documents for a customer.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string", "description": "The order."}},
                    "required": ["order_id"],
                },
            },
        },
    ]
    tool_mocks: ClassVar[dict[str, Any] | None] = {n: {"return": d} for n, d in DATA.items()}
    POLICY_TOPICS = ("returns", "shipping", "warranty", "payments")

    def tasks(self) -> list[BenchTask]:
        out: list[BenchTask] = []
        for split in SPLITS:
            for i in range(PER_SPLIT):
                name = f"t{len(out):02d}"
                if i % 2:
                    out.append(BenchTask(name, "orders", split, kind="order"))
                else:
                    out.append(BenchTask(name, self.POLICY_TOPICS[(i // 2) % 4], split))
        return out

    def choose(self, seed: int, task: BenchTask, tools: dict[str, str]) -> str:
        need = self.NEEDS[task.kind]
        fits = sorted(n for n, d in tools.items() if need in d.lower()) or sorted(tools)
        key = "|".join(f"{n}={tools[n]}" for n in sorted(tools))
        return fits[int(draw(seed, "tool", task.name, key) * len(fits))]

    def answer(
        self,
        seed: int,
        task: BenchTask,
        instructions: str,
        tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:
        if not results:
            tool = self.choose(seed, task, tools)
            args = {"order_id": task.name} if tool == "order_status" else {"query": task.topic}
            return AgentTurn(tool=tool, arguments=args)
        style = hashlib.sha256(instructions.encode()).hexdigest()[:6]
        text = f"About your question {task.name} (reply {style})."
        if draw(seed, task.name, "answer") < self.p_right:
            text += " " + " ".join(results)
        return AgentTurn(text=text)

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        right = self.RIGHT[task.kind]
        need = "the order status" if task.kind == "order" else f"the policy on {task.topic}"
        if self.DATA[right] in response:
            return True, f"gives {need}, looked up with {right}"
        wrong = next((n for n, d in self.DATA.items() if d in response), None)
        if wrong is not None:
            return (
                False,
                f"does not give {need}: the agent used {wrong}, "
                f"and {task.kind} questions need {right}",
            )
        return False, f"does not give {need} ({task.kind} questions need {right})"

    def reflect(self, seed: int, reflection: Reflection) -> str:
        needed = [
            m for r in reflection.reasons for m in re.findall(r"(\w+) questions need (\w+)", r)
        ]
        if reflection.component == "instructions":
            current = reflection.current.rstrip()
            rules = [f"Use {tool} for {kind} questions." for kind, tool in dict(needed).items()]
            return current + "".join(f"\n{r}" for r in rules if r not in current)
        kinds = sorted({kind for kind, tool in needed if tool == reflection.component})
        if not kinds:
            return reflection.current
        return f"Use this tool for {' and '.join(kinds)} questions."


class Conflicting(World):
    """`conflicting`: two plausible rules for four topics; only one of each pair helps."""

    name = "conflicting"
    about = "two plausible rules per topic for four topics; only one helps, both together hurt"
    p_harm = 0.02
    PAIRS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "returns": ("original payment method", "store credit", "how refunds are paid"),
        "warranty": ("two-year warranty", "one-year warranty", "how long the warranty lasts"),
        "delivery": ("signature on delivery", "leave at the door", "how parcels are handed over"),
        "payments": ("secure checkout", "pay by phone", "how to pay"),
    }

    def phrase(self, task: BenchTask) -> str:
        return self.PAIRS[task.topic][0] if task.topic in self.PAIRS else TOPICS[task.topic]

    def phrases(self) -> list[str]:
        plain = [p for t, p in TOPICS.items() if t not in self.PAIRS]
        return plain + [p for right, wrong, _ in self.PAIRS.values() for p in (right, wrong)]

    def p_pass(self, task: BenchTask, instructions: str) -> float:
        if task.topic in self.PAIRS and self.PAIRS[task.topic][1] in self.rules_in(instructions):
            return self.p_harm
        return super().p_pass(task, instructions)

    def answer(
        self,
        seed: int,
        task: BenchTask,
        instructions: str,
        tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:
        turn = super().answer(seed, task, instructions, tools, results)
        pair = self.PAIRS.get(task.topic)
        if pair and pair[1] in self.rules_in(instructions):
            turn.text += f" You can have {pair[1]}."
        return turn

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        pair = self.PAIRS.get(task.topic)
        if pair is None:
            return super().verdict(seed, task, response)
        right, wrong, what = pair
        policy = f"the policy on {task.topic}"
        if wrong in response.lower():
            return False, f"offers '{wrong}', which {policy} does not allow"
        if right in response.lower():
            return True, f"mentions '{right}', as {policy} requires"
        options = (right, wrong) if draw(seed, "order", task.name) < 0.5 else (wrong, right)
        return (
            False,
            f"does not say {what} ('{options[0]}' or '{options[1]}'?), which {policy} requires",
        )

    def reflect(self, seed: int, reflection: Reflection) -> str:
        lines = reflection.current.rstrip().splitlines()
        have = self.rules_in(reflection.current)
        changes = 0
        for reason in reflection.reasons:
            if changes >= MAX_NEW_RULES:
                break
            refused = re.search(r"offers '([^']+)', which", reason)
            ambiguous = re.search(r"\('([^']+)' or '([^']+)'\?\)", reason)
            missing = MISSING.search(reason)
            if refused:
                bad = refused.group(1)
                good = next(r for r, w, _ in self.PAIRS.values() if w == bad)
                lines = [line for line in lines if bad not in line.lower()]
                lines += [] if good in have else [RULE.format(phrase=good)]
            elif ambiguous and not ({ambiguous.group(1), ambiguous.group(2)} & have):
                pick = ambiguous.group(1 + int(draw(seed, reflection.digest, reason) * 2))
                lines.append(RULE.format(phrase=pick))
            elif missing and missing.group(1) not in have:
                lines.append(RULE.format(phrase=missing.group(1)))
            else:
                continue
            have = self.rules_in("\n".join(lines))
            changes += 1
        return "\n".join(lines)


WORLDS: dict[str, World] = {
    w.name: w
    for w in (World(), Subsets(), NoisyJudge(), LongPrompt(), ToolDescriptions(), Conflicting())
}

"""Worlds built to trap an optimizer (issue 31), added to the six of `worlds.py`.

Each one stresses a way an optimizer's winner can fail to carry over from the tasks it tuned
on to new ones, or a way its search can stop too early. As in `worlds.py`, everything is a
deterministic draw of (seed, task, what the agent can act on), and the judges' reasons are the
only place the hidden rules can be learnt from. The scripted agent here reads its instructions
line by line: a line that quotes a task's question (a memorized Q→A line) applies to that
question only; any other line applies to every task it names nothing against.

- `many-rules`: 12 topics, each with its own phrase (0.9 with it, else 0.1), each needed by
  only 4 of the 48 tasks: a search must collect all 12, and stopping on a perfect validation
  score while train failures remain leaves some of them out.
- `distractor`: the `phrases` world whose train split was collected during a holiday sale:
  4 train tasks ask about promotions and pass only when the agent mentions the 'holiday sale'.
  On validation and test the sale has ended: an agent told about it mentions it in 60% of its
  answers, and the judge fails every such answer. The rule helps train and hurts test.
- `scoped`: business and personal customers need different phrases for four topics. A line
  that names no customer group applies to both, so an unscoped rule of one group is offered to
  the other, which the judge fails ("offers 'invoice credit', which is only for business
  customers"); own phrase → 0.9, the other group's → 0.05, none → 0.3. Reflection writes
  scoped rules and scopes an over-applied one.
- `reworded`: `phrases` with each reason in one of three styles drawn per verdict: the usual
  "does not mention 'X', which …", a terse "Left out: X (… policy).", and a paragraph. The
  reflection model understands all three.
- `memorizer`: `phrases` with a reflection model that, for each failure it fixes, writes a
  memorized line (`When asked "<the question>", mention 'X'.`) with probability 0.6 and a
  general rule otherwise. A memorized line helps its one train question and nothing else.
- `tool-routing`: three tools (orders, policies, parcel tracking); two descriptions mislead
  (`order_status` is described as a policy search, `track_parcel` as an order lookup). The
  agent calls the tool whose description names what the question is about, or that quotes
  the question itself; instructions do not steer it. Reflection on a tool writes "Use this
  tool for <kind> questions." or, half the time, quotes the failed questions.
- `memorized-qa`: no judge: an exact-match check of the expected answer (four store facts).
  Train, validation and test ask about the same four facts in different words. The agent
  states a fact when a line holds it with a word of its topic, or when a line quotes the exact
  question; reflection memorizes the question with its answer half the time. Memorized lines
  pass the exact train questions and none of the reworded ones.
"""

from __future__ import annotations

import hashlib
import re
from functools import cached_property
from typing import Any, ClassVar

from bench.gepa_peer.world_base import (
    MAX_NEW_RULES,
    MISSING,
    PER_SPLIT,
    SPLITS,
    TOPICS,
    AgentTurn,
    BenchTask,
    Reflection,
    World,
    draw,
)
from bench.gepa_peer.worlds import Subsets, ToolDescriptions

_TASK_ID = re.compile(r"\[(t\d+)\]")


def by_task(reflection: Reflection) -> list[tuple[str, str]]:
    """(task id, line) for each line of a reflection prompt after the first task id: what
    was said about which task, in any optimizer's layout (examples come one after another)."""
    out: list[tuple[str, str]] = []
    current = ""
    for line in reflection.reasons:
        found = _TASK_ID.search(line)
        if found:
            current = found.group(1)
        if current:
            out.append((current, line))
    return out


class LineReader(World):
    """A world whose agent reads its instructions line by line (see the module)."""

    @cached_property
    def queries(self) -> dict[str, str]:
        return {t.name: t.query.lower() for t in self.tasks()}

    @cached_property
    def by_name(self) -> dict[str, BenchTask]:
        return {t.name: t for t in self.tasks()}

    def quoted(self, line: str) -> set[str]:
        low = line.lower()
        return {n for n, q in self.queries.items() if q in low}

    def line_applies(self, line: str, task: BenchTask) -> bool:
        quoted = self.quoted(line)
        return task.name in quoted if quoted else True

    def rules_for(self, task: BenchTask, instructions: str) -> frozenset[str]:
        found: set[str] = set()
        for line in instructions.splitlines():
            if self.line_applies(line, task):
                found |= self.rules_in(line)
        return frozenset(found)

    def p_pass(self, task: BenchTask, instructions: str) -> float:
        mine = self.rules_for(task, instructions)
        return self.p_with if self.phrase(task) in mine else self.p_without

    def passes(self, seed: int, task: BenchTask, instructions: str) -> bool:
        key = "|".join(sorted(self.rules_for(task, instructions)))
        return draw(seed, task.name, key) < self.p_pass(task, instructions)

    def general(self, text: str) -> frozenset[str]:
        """Phrases of the lines that quote no task."""
        return frozenset(
            p for line in text.splitlines() if not self.quoted(line) for p in self.rules_in(line)
        )


class ManyRules(LineReader):
    name = "many-rules"
    about = "12 small independent rules, each needed by 4 of 48 tasks"
    p_with, p_without = 0.9, 0.1
    TOPICS12: ClassVar[dict[str, str]] = {
        **TOPICS,
        "gift cards": "card balance",
        "price matching": "price match form",
        "loyalty points": "points statement",
        "repairs": "repair ticket",
    }

    def tasks(self) -> list[BenchTask]:
        topics = list(self.TOPICS12)
        out: list[BenchTask] = []
        for s, split in enumerate(SPLITS):
            for i in range(PER_SPLIT):
                topic = topics[(i + 4 * s) % len(topics)]
                out.append(BenchTask(f"t{len(out):02d}", topic, split))
        return out

    def phrase(self, task: BenchTask) -> str:
        return self.TOPICS12[task.topic]

    def phrases(self) -> list[str]:
        return list(self.TOPICS12.values())


class Distractor(LineReader):
    name = "distractor"
    about = "a 'holiday sale' rule that 4 train tasks need and that fails held-out answers"
    SALE = "holiday sale"
    p_say_sale = 0.6

    def tasks(self) -> list[BenchTask]:
        out: list[BenchTask] = []
        for split in SPLITS:
            for i in range(PER_SPLIT):
                name = f"t{len(out):02d}"
                if split == "train" and i % 4 == 3:
                    out.append(BenchTask(name, "promotions", split, kind="promo"))
                else:
                    out.append(BenchTask(name, list(TOPICS)[i % len(TOPICS)], split))
        return out

    def phrase(self, task: BenchTask) -> str:
        return self.SALE if task.kind == "promo" else TOPICS[task.topic]

    def phrases(self) -> list[str]:
        return [*TOPICS.values(), self.SALE]

    def answer(
        self, seed: int, task: BenchTask, instructions: str, tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:  # fmt: skip
        turn = super().answer(seed, task, instructions, tools, results)
        told = self.SALE in self.rules_for(task, instructions)
        if told and task.kind != "promo" and draw(seed, task.name, "sale") < self.p_say_sale:
            turn.text += f" Don't miss our {self.SALE}."
        return turn

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        if task.split != "train" and self.SALE in response.lower():
            return False, (
                f"offers the '{self.SALE}', which has ended; the policy on {task.topic} "
                "does not allow it"
            )
        return super().verdict(seed, task, response)


class Scoped(Subsets, LineReader):
    name = "scoped"
    about = "per-group phrases; a rule that names no group is applied to both and fails one"
    p_with, p_without, p_confused = 0.9, 0.3, 0.05

    def line_applies(self, line: str, task: BenchTask) -> bool:
        if not LineReader.line_applies(self, line, task):
            return False
        named = {g for g in self.GROUPS if re.search(rf"\b{g}\b", line.lower())}
        return not named or task.group in named

    def p_pass(self, task: BenchTask, instructions: str) -> float:
        mine = self.rules_for(task, instructions)
        if self.other(task) in mine:
            return self.p_confused
        return self.p_with if self.phrase(task) in mine else self.p_without

    def answer(
        self, seed: int, task: BenchTask, instructions: str, tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:  # fmt: skip
        turn = World.answer(self, seed, task, instructions, tools, results)
        if self.other(task) in self.rules_for(task, instructions):
            turn.text += f" Please note our {self.other(task)}."
        return turn

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        other = self.other(task)
        if other in response.lower():
            owner = next(g for g in self.GROUPS if g != task.group)
            return False, f"offers '{other}', which is only for {owner} customers"
        return super().verdict(seed, task, response)

    def reflect(self, seed: int, reflection: Reflection) -> str:
        lines = reflection.current.rstrip().splitlines()
        for reason in reflection.reasons:
            found = re.search(r"offers '([^']+)', which is only for (\w+) customers", reason)
            if found:
                bad, group = found.groups()
                lines = [x for x in lines if bad not in x.lower() or group in x.lower()]
                if not any(bad in x.lower() for x in lines):
                    lines.append(self.rule(bad))
        current = "\n".join(lines)
        new = self.missing(reflection, self.rules_in(current))
        return current + "".join(f"\n{self.rule(p)}" for p in new)


class Reworded(LineReader):
    name = "reworded"
    about = "the phrases world with judge reasons in three styles"
    FAIL_CUES = (
        re.compile(r"does not mention '([^']+)'"),
        re.compile(r"Left out: ([^(]+?) \("),
        re.compile(r"never brings up the ([^;]+?);"),
    )

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        phrase, topic = self.phrase(task), task.topic
        ok = phrase in response.lower()
        style = int(draw(seed, "style", task.name, response) * 3)
        if style == 0:
            return super().verdict(seed, task, response)
        if style == 1:
            return ok, (f"Covered: {phrase}." if ok else f"Left out: {phrase} ({topic} policy).")
        if ok:
            return (
                ok,
                f"The reply covers the {phrase}, which a customer asking about {topic} needs.",
            )
        return ok, (
            f"The reply talks about {topic} in general terms but never brings up the {phrase}; "
            f"a customer asking about {topic} has to be told about it, so the answer falls short."
        )

    def missing(self, reflection: Reflection, have: frozenset[str]) -> list[str]:
        new: list[str] = []
        for reason in reflection.reasons:
            for cue in self.FAIL_CUES:
                for phrase in cue.findall(reason):
                    phrase = phrase.strip().lower()
                    fresh = phrase in self.phrases() and phrase not in have | set(new)
                    if fresh and len(new) < MAX_NEW_RULES:
                        new.append(phrase)
        return new


class Memorizer(LineReader):
    name = "memorizer"
    about = "a reflection model that memorizes 60% of the failures it fixes"
    p_memorize = 0.6

    def memorized(self, task: BenchTask, phrase: str) -> str:
        return f"When asked \"{task.query}\", mention '{phrase}'."

    def reflect(self, seed: int, reflection: Reflection) -> str:
        current = reflection.current.rstrip()
        have = self.general(current)
        lines: list[str] = []
        for name, line in by_task(reflection):
            for phrase in MISSING.findall(line):
                if len(lines) >= MAX_NEW_RULES or phrase in have or name not in self.by_name:
                    continue
                if draw(seed, reflection.digest, name) < self.p_memorize:
                    new = self.memorized(self.by_name[name], phrase)
                else:
                    new, have = self.rule(phrase), have | {phrase}
                if new not in current and new not in lines:
                    lines.append(new)
        return current + "".join(f"\n{x}" for x in lines)


class ToolRouting(ToolDescriptions):
    name = "tool-routing"
    about = "three tools, two described misleadingly; reflection quotes questions half the time"
    p_memorize = 0.5
    NEEDS: ClassVar[dict[str, str]] = {"order": "order", "policy": "polic", "tracking": "track"}
    RIGHT: ClassVar[dict[str, str]] = {
        "order": "order_status",
        "policy": "search_policies",
        "tracking": "track_parcel",
    }
    DATA: ClassVar[dict[str, str]] = {
        "order_status": "ORDER: shipped, arriving in two days",
        "search_policies": "POLICY: see section 4",
        "track_parcel": "PARCEL: at the Leeds depot",
    }
    tools: ClassVar[list[dict[str, Any]]] = [
        *ToolDescriptions.tools,
        {
            "type": "function",
            "function": {
                "name": "track_parcel",
                "description": "Look up a customer's order information.",
                "parameters": {
                    "type": "object",
                    "properties": {"parcel_id": {"type": "string", "description": "The parcel."}},
                    "required": ["parcel_id"],
                },
            },
        },
    ]
    tool_mocks: ClassVar[dict[str, Any] | None] = {n: {"return": d} for n, d in DATA.items()}
    KINDS = ("policy", "order", "tracking")

    def tasks(self) -> list[BenchTask]:
        out: list[BenchTask] = []
        for split in SPLITS:
            for i in range(PER_SPLIT):
                name, kind = f"t{len(out):02d}", self.KINDS[len(out) % 3]
                topic = self.POLICY_TOPICS[i % 4] if kind == "policy" else kind
                out.append(BenchTask(name, topic, split, kind=kind))
        return out

    @cached_property
    def queries(self) -> dict[str, str]:
        return {t.name: t.query.lower() for t in self.tasks()}

    @cached_property
    def by_name(self) -> dict[str, BenchTask]:
        return {t.name: t for t in self.tasks()}

    def choose(self, seed: int, task: BenchTask, tools: dict[str, str]) -> str:
        need = self.NEEDS[task.kind]
        fits = []
        for name, text in sorted(tools.items()):
            low = text.lower()
            quoted = {n for n, q in self.queries.items() if q in low}
            if task.name in quoted or (not quoted and need in low):
                fits.append(name)
        fits = fits or sorted(tools)
        key = "|".join(f"{n}={tools[n]}" for n in sorted(tools))
        return fits[int(draw(seed, "tool", task.name, key) * len(fits))]

    def answer(
        self, seed: int, task: BenchTask, instructions: str, tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:  # fmt: skip
        if not results:
            tool = self.choose(seed, task, tools)
            arg = {"order_status": "order_id", "track_parcel": "parcel_id"}.get(tool, "query")
            return AgentTurn(tool=tool, arguments={arg: task.name})
        style = hashlib.sha256(instructions.encode()).hexdigest()[:6]
        text = f"About your question {task.name} (reply {style})."
        if draw(seed, task.name, "answer") < self.p_right:
            text += " " + " ".join(results)
        return AgentTurn(text=text)

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        right = self.RIGHT[task.kind]
        need = {
            "order": "the order status",
            "tracking": "where the parcel is",
            "policy": f"the policy on {task.topic}",
        }[task.kind]
        if self.DATA[right] in response:
            return True, f"gives {need}, looked up with {right}"
        wrong = next((n for n, d in self.DATA.items() if d in response), None)
        if wrong is not None:
            return False, (
                f"does not give {need}: the agent used {wrong}, and {task.kind} questions "
                f"need {right}"
            )
        return False, f"does not give {need} ({task.kind} questions need {right})"

    def reflect(self, seed: int, reflection: Reflection) -> str:
        if reflection.component == "instructions":
            return super().reflect(seed, reflection)
        asked = [
            (name, kind)
            for name, line in by_task(reflection)
            for kind, tool in re.findall(r"(\w+) questions need (\w+)", line)
            if tool == reflection.component
        ]
        if not asked:
            return reflection.current
        if draw(seed, reflection.digest, "memorize") < self.p_memorize:
            quoted = sorted({self.by_name[n].query for n, _ in asked if n in self.by_name})
            return "Use this tool for questions like " + "; ".join(f'"{q}"' for q in quoted)
        kinds = sorted({kind for _, kind in asked})
        return f"Use this tool for {' and '.join(kinds)} questions."


class MemorizedQA(LineReader):
    name = "memorized-qa"
    about = "exact-match facts asked in other words on validation and test; reflection memorizes"
    p_with, p_without, p_memorize = 0.9, 0.1, 0.5
    calls_per_task = 1
    evaluators: ClassVar[list[Any]] = [
        {"name": "builtin.exact_match", "initialization_parameters": {"mode": "contains"}}
    ]
    FACTS: ClassVar[dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]] = {
        "returns": (
            "45 days",
            ("return", "refund", "send back", "money back"),
            (
                "How many days do I have to return an item?",
                "Can I still return shoes I bought last month?",
                "Is there a deadline to return a gift?",
                "How long do I have to ask for a refund?",
                "I changed my mind about a lamp. Until when can I send it back?",
                "What is the time limit on refunds?",
                "My jacket does not fit. How long can I wait before returning it?",
                "Can I get my money back for a kettle I got three weeks ago?",
                "By when must a return reach you?",
                "Is it too late to send back a rug from five weeks ago?",
                "How much time do customers get to return things?",
                "Do refunds expire after some number of days?",
            ),
        ),
        "free shipping": (
            "$35",
            ("shipping", "delivery fee", "postage"),
            (
                "How much do I need to spend to get free shipping?",
                "Is there a minimum order for free shipping?",
                "My cart is $20. Will I pay for shipping?",
                "When is standard shipping free?",
                "Do you charge a delivery fee on small orders?",
                "What order total makes shipping free?",
                "Is postage free if I buy two books?",
                "How do I avoid paying for shipping?",
                "Above what amount is shipping included?",
                "Will a $50 order ship for free?",
                "Is there a threshold for free postage?",
                "What do I have to spend so that shipping costs nothing?",
            ),
        ),
        "warranty": (
            "2 years",
            ("warranty", "guarantee"),
            (
                "How long is the warranty on a blender?",
                "Does my vacuum still have warranty after a year?",
                "What warranty comes with a new laptop?",
                "How long are appliances under warranty?",
                "Is a toaster from last spring still under guarantee?",
                "What is the guarantee period on electronics?",
                "When does the warranty on headphones end?",
                "How many years of warranty do I get?",
                "Is my broken kettle covered by the guarantee after 18 months?",
                "What length of warranty do you offer?",
                "Does the guarantee cover a fridge bought last year?",
                "For how long is a coffee machine guaranteed?",
            ),
        ),
        "opening hours": (
            "9am to 6pm",
            ("open", "hours", "close"),
            (
                "What are your opening hours?",
                "When does the shop open?",
                "What time do you close?",
                "Are you open in the evening?",
                "Until what time can I visit the store?",
                "What hours is the store open on weekdays?",
                "Can I come by at 7pm?",
                "When do your doors open in the morning?",
                "What are the store's hours?",
                "Is the shop open at lunchtime?",
                "How late are you open?",
                "At what time does the store close today?",
            ),
        ),
    }

    def tasks(self) -> list[BenchTask]:
        out: list[BenchTask] = []
        topics = list(self.FACTS)
        for s, split in enumerate(SPLITS):
            for i in range(PER_SPLIT):
                topic = topics[i % len(topics)]
                fact, _, questions = self.FACTS[topic]
                text = questions[4 * s + i // len(topics)]
                out.append(BenchTask(f"t{len(out):02d}", topic, split, text=text, truth=fact))
        return out

    def phrase(self, task: BenchTask) -> str:
        return self.FACTS[task.topic][0]

    def phrases(self) -> list[str]:
        return [f[0] for f in self.FACTS.values()]

    def line_applies(self, line: str, task: BenchTask) -> bool:
        quoted = self.quoted(line)
        if quoted:
            return task.name in quoted
        low = line.lower()
        return any(k in low for k in self.FACTS[task.topic][1])

    def answer(
        self, seed: int, task: BenchTask, instructions: str, tools: dict[str, str],
        results: list[str],
    ) -> AgentTurn:  # fmt: skip
        style = hashlib.sha256(instructions.encode()).hexdigest()[:6]
        text = f"About your question {task.name} (reply {style})."
        if self.passes(seed, task, instructions):
            text += f" It is {self.phrase(task)}."
        return AgentTurn(text=text)

    def verdict(self, seed: int, task: BenchTask, response: str) -> tuple[bool, str]:
        ok = task.truth.lower() in response.lower()
        if ok:
            return True, f"Correct: the answer contains the expected answer '{task.truth}'."
        return False, f"The answer did not contain the expected answer '{task.truth}'."

    def reflect(self, seed: int, reflection: Reflection) -> str:
        current = reflection.current.rstrip()
        have = self.general(current)
        failed = {n for n, line in by_task(reflection) if "(fail)" in line or "did not" in line}
        lines: list[str] = []
        for name in sorted(failed):
            task = self.by_name.get(name)
            if task is None or task.split != "train" or len(lines) >= MAX_NEW_RULES:
                continue
            fact, keywords, _ = self.FACTS[task.topic]
            if fact in have:
                continue
            if draw(seed, reflection.digest, name) < self.p_memorize:
                new = f'When asked "{task.query}", the answer is {fact}.'
            else:
                new, have = f"For {keywords[0]} questions, the answer is {fact}.", have | {fact}
            if new not in current and new not in lines:
                lines.append(new)
        return current + "".join(f"\n{x}" for x in lines)


TRAPS: list[World] = [
    ManyRules(),
    Distractor(),
    Scoped(),
    Reworded(),
    Memorizer(),
    ToolRouting(),
    MemorizedQA(),
]

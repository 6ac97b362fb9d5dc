"""The scripted benchmark both optimizers face: one fake OpenAI-compatible server that plays
the agent, the judge and the reflection model, told apart by the model name of the request
(`agent`, `judge`, `reflect`).

The world: a store with `TOPICS` policies. Each topic has a hidden rule, a phrase the answer
must contain ("refund window" for returns, ...). A task asks about one topic; its criterion
says only "follows the store's policy on <topic>", so the phrase is learnt from the judge's
reasons, never read off the criterion.

- **Agent**: for a task whose rule phrase is in its system prompt, the answer contains the
  phrase with probability `P_WITH_RULE`, else with `P_WITHOUT_RULE`. The draw is a hash of
  (world seed, task, the set of rule phrases the prompt contains): deterministic, and the same
  for both optimizers whatever wording or framework boilerplate surrounds the rules.
  The answer carries a tag of the system prompt, as a real model's wording would differ.
- **Judge**: passes a criterion when the answer contains the topic's phrase; the reason names
  the phrase either way ("does not mention 'refund window' ...").
- **Reflection model**: a modest one. It keeps the current instructions and appends a rule
  (`Always mention '<phrase>'.`) for at most `MAX_NEW_RULES` phrases that judges' reasons in
  its prompt say are missing. It answers in the format it was asked for: agentopt's JSON
  (`{"instructions", "rationale"}`), DSPy's chat or JSON adapter fields, or GEPA's fenced block.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.fake_openai import RecordedRequest, Reply, error, text

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
P_WITH_RULE = 0.85
P_WITHOUT_RULE = 0.15
MAX_NEW_RULES = 2
PER_TOPIC = {"train": 2, "validation": 2, "test": 2}
BASE_INSTRUCTIONS = "You are the store's support assistant. Answer customer questions briefly."
RULE = "Always mention '{phrase}'."

_TASK = re.compile(r"\[(t\d+)\]")
_CHECK = re.compile(r"- name: (.+)\n  check: .*policy on ([a-z]+)")
_RESPONSE = re.compile(r"<response-([0-9a-f]+)>\n(.*?)\n</response-\1>", re.S)
_INSTRUCTIONS = re.compile(r"<instructions-([0-9a-f]+)>\n(.*?)\n</instructions-\1>", re.S)
_MISSING = re.compile(r"does not mention '([^']+)'")
_FENCED = re.compile(r"```\n?(.*?)\n?```", re.S)
_DSPY_CURRENT = re.compile(r"\[\[ ## current_instruction ## \]\]\n(.*?)\n\n\[\[ ## ", re.S)


@dataclass(frozen=True)
class BenchTask:
    """One task of the benchmark."""

    name: str
    topic: str
    split: str

    @property
    def query(self) -> str:
        return f"[{self.name}] A customer asks a question about {self.topic}."

    @property
    def criterion(self) -> str:
        return f"The response follows the store's policy on {self.topic}."

    def row(self) -> dict[str, Any]:
        """The task as a jsonl row of an agentopt dataset."""
        return {
            "name": self.name,
            "query": self.query,
            "criteria": [{"name": "policy", "instruction": self.criterion}],
        }


def make_tasks() -> list[BenchTask]:
    """Every topic in every split (`PER_TOPIC` tasks each), interleaved by topic."""
    tasks: list[BenchTask] = []
    for split, count in PER_TOPIC.items():
        for _ in range(count):
            for topic in TOPICS:
                tasks.append(BenchTask(f"t{len(tasks):02d}", topic, split))
    return tasks


def rules_in(prompt: str) -> frozenset[str]:
    """The rule phrases a system prompt contains."""
    low = prompt.lower()
    return frozenset(p for p in TOPICS.values() if p in low)


def draw(seed: int, task: str, rules: frozenset[str]) -> float:
    digest = hashlib.sha256(f"{seed}:{task}:{'|'.join(sorted(rules))}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def passes(seed: int, task: BenchTask, prompt: str) -> bool:
    """Whether the agent's answer to `task` under this system prompt contains the phrase."""
    rules = rules_in(prompt)
    p = P_WITH_RULE if TOPICS[task.topic] in rules else P_WITHOUT_RULE
    return draw(seed, task.name, rules) < p


def verdict(topic: str, response: str) -> tuple[bool, str]:
    phrase = TOPICS[topic]
    if phrase in response.lower():
        return True, f"mentions '{phrase}', as the policy on {topic} requires"
    return False, f"does not mention '{phrase}', which the policy on {topic} requires"


def judge_prompt(query: str, criterion: str, response: str) -> str:
    """A judge request in the shape the scripted judge reads (agentopt's task_adherence
    layout); the GEPA metric sends this."""
    return (
        f"The user's query:\n{query}\n\n"
        f"The agent's response:\n<response-000000000000>\n{response}\n</response-000000000000>\n\n"
        f"Criteria (1):\n- name: policy\n  check: {criterion}\n"
    )


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content or ""


@dataclass
class ScriptedServer:
    """The handler for `FakeOpenAI.handler`; counts requests per model name."""

    seed: int
    tasks: dict[str, BenchTask]
    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, req: RecordedRequest) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        role = str(body.get("model", ""))
        with self.lock:
            self.counts[role] += 1
        messages = body.get("messages") or []
        if role == "agent":
            return self.agent(messages)
        if role == "judge":
            return self.judge("\n".join(_content(m) for m in messages))
        if role == "reflect":
            return self.reflect(messages, body)
        return error(404, f"no such model {role!r}", code="model_not_found")

    def agent(self, messages: list[dict[str, Any]]) -> Reply:
        system = "\n".join(_content(m) for m in messages if m.get("role") == "system")
        user = next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")
        found = _TASK.search(user)
        if found is None or found.group(1) not in self.tasks:
            return error(400, "the scripted agent got no task id")
        task = self.tasks[found.group(1)]
        # Answers differ between configurations, as a real model's would (so the judge is not
        # asked the same thing twice for two candidates).
        style = hashlib.sha256(system.encode()).hexdigest()[:6]
        answer = f"About your question {task.name} on {task.topic} (reply {style})."
        if passes(self.seed, task, system):
            answer += f" Please note our {TOPICS[task.topic]}."
        if "Respond with a JSON object" in user:  # DSPy's JSONAdapter
            return text(json.dumps({"answer": answer}))
        if "[[ ## answer ## ]]" in system:  # DSPy's ChatAdapter
            answer = f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"
        return text(answer)

    def judge(self, prompt: str) -> Reply:
        found = _RESPONSE.search(prompt)
        response = found.group(2) if found else ""
        verdicts = []
        for name, topic in _CHECK.findall(prompt):
            ok, reason = verdict(topic, response)
            verdicts.append({"name": name.strip(), "passed": ok, "reason": reason})
        return text(json.dumps({"verdicts": verdicts}))

    def reflect(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> Reply:
        prompt = "\n".join(_content(m) for m in messages)
        current = current_instructions(prompt)
        have = rules_in(current)
        new: list[str] = []
        for phrase in _MISSING.findall(prompt):
            if phrase not in have and phrase not in new and len(new) < MAX_NEW_RULES:
                new.append(phrase)
        updated = current.rstrip() + "".join(f"\n{RULE.format(phrase=p)}" for p in new)
        return text(reflection_reply(prompt, updated, new))


def current_instructions(prompt: str) -> str:
    """The instructions a reflection prompt asks to improve, in each optimizer's layout."""
    # The last match: DSPy's system message shows the field layout with a placeholder first.
    for pattern in (_INSTRUCTIONS, _DSPY_CURRENT, _FENCED):
        found = list(pattern.finditer(prompt))
        if found:
            return found[-1].group(found[-1].lastindex or 1).strip()
    return BASE_INSTRUCTIONS


def reflection_reply(prompt: str, updated: str, new: list[str]) -> str:
    """The new instructions in the format the prompt asked for."""
    if _INSTRUCTIONS.search(prompt):  # agentopt's reflect_instructions.j2
        rationale = f"added rules for {', '.join(new)}" if new else "no new rule"
        return json.dumps({"instructions": updated, "rationale": rationale})
    if "Respond with a JSON object" in prompt:  # DSPy's JSONAdapter
        return json.dumps({"new_instruction": updated})
    if "[[ ## new_instruction ## ]]" in prompt:  # DSPy's ChatAdapter
        return f"[[ ## new_instruction ## ]]\n{updated}\n\n[[ ## completed ## ]]"
    return f"```\n{updated}\n```"  # GEPA's own reflection template

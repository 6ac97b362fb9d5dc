"""The one fake OpenAI-compatible server both optimizers face: it plays a world's agent, judge
and reflection model (`worlds.py`), told apart by the model name of the request (`agent`,
`judge`, `reflect`), and it holds every run to its call budget.

It reads each optimizer's own layout: agentopt's system prompt and reflection templates
(`<instructions-…>` blocks, the tool-definition block), DSPy's chat and JSON adapters
(`[[ ## current_instruction ## ]]`, `your objective is:`), and GEPA's own fenced reflection
template. The agent's answers depend only on the instructions and tool descriptions it was
given, never on who asked.

The budget: agent + judge requests beyond `budget` get a 429 (`budget_exhausted`) and are
counted as refused, not served. A peer names its test-split models `agent-test` and
`judge-test`; its other requests are refused once `budget − reserve` are spent, so its search
cannot eat into the test split. A GET of `…/bench/budget` says how many were refused (GEPA's
stop condition polls it).
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.gepa_peer.worlds import BenchTask, Reflection, World
from tests.fake_openai import RecordedRequest, Reply, error, text, tool_calls

_TASK = re.compile(r"\[(t\d+)\]")
_CHECK = re.compile(r"- name: (.+)\n  check: ")
_RESPONSE = re.compile(r"<response-([0-9a-f]+)>\n(.*?)\n</response-\1>", re.S)
_INSTRUCTIONS = re.compile(r"<instructions-([0-9a-f]+)>\n(.*?)\n</instructions-\1>", re.S)
_TOOL_BLOCK = re.compile(r"<tool-([0-9a-f]+)>\n(.*?)\n</tool-\1>", re.S)
_TOOL_NAME = re.compile(r"This is the definition of the tool `([^`]+)`")
_GEPA_TOOL = re.compile(r"Tool being described: (\w+)")
_FENCED = re.compile(r"```\n?(.*?)\n?```", re.S)
_DSPY_CURRENT = re.compile(r"\[\[ ## current_instruction ## \]\]\n(.*?)\n\n\[\[ ## ", re.S)
_DSPY_OBJECTIVE = "your objective is:"
TEST_SUFFIX = "-test"
BUDGET_PATH = "/bench/budget"


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content or ""


def instructions_in(system: str) -> str:
    """The instructions inside a system prompt (DSPy puts them after its field layout)."""
    at = system.find(_DSPY_OBJECTIVE)
    if at < 0:
        return system.strip()
    return textwrap.dedent(system[at + len(_DSPY_OBJECTIVE) :].lstrip(" ").lstrip("\n")).strip()


def judge_prompt(query: str, criterion: str, response: str) -> str:
    """A judge request in the layout of agentopt's task_adherence prompt (the GEPA metric and
    the tool-world adapter send this)."""
    return (
        f"The user's query:\n<query-000000000000>\n{query}\n</query-000000000000>\n\n"
        f"The agent's response:\n<response-000000000000>\n{response}\n</response-000000000000>\n\n"
        f"Criteria (1):\n- name: policy\n  check: {criterion}\n"
    )


def read_reflection(prompt: str) -> Reflection:
    """The component, its current text and the reasons shown, in any optimizer's layout."""
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
    tool = _TOOL_NAME.search(prompt)
    block = _TOOL_BLOCK.search(prompt)
    if tool and block:  # agentopt's reflect_tool.j2
        current = str(json.loads(block.group(2)).get("description", ""))
        rest = prompt.replace(block.group(0), "")
        return Reflection(tool.group(1), current, rest.splitlines(), digest)
    gepa_tool = _GEPA_TOOL.search(prompt)
    for pattern in (_INSTRUCTIONS, _DSPY_CURRENT, _FENCED):
        found = list(pattern.finditer(prompt))
        if found:
            # DSPy's system message shows the field layout with a placeholder first (take the
            # last); GEPA's template fences the current text first, then the examples.
            match = found[0] if pattern is _FENCED else found[-1]
            current = match.group(match.lastindex or 1).strip()
            rest = prompt.replace(match.group(0), "")
            component = gepa_tool.group(1) if gepa_tool else "instructions"
            return Reflection(component, current, rest.splitlines(), digest)
    return Reflection("instructions", "", prompt.splitlines(), digest)


def reflection_reply(prompt: str, reflection: Reflection, updated: str) -> str:
    """The new text in the format the prompt asked for."""
    changed = updated.strip() != reflection.current.strip()
    rationale = "rewrote it from the failures" if changed else "nothing to change"
    block = _TOOL_BLOCK.search(prompt)
    if block and _TOOL_NAME.search(prompt):  # agentopt's reflect_tool.j2
        function = json.loads(block.group(2))
        function["description"] = updated
        return json.dumps({"tool": function, "rationale": rationale})
    if _INSTRUCTIONS.search(prompt):  # agentopt's reflect_instructions.j2
        return json.dumps({"instructions": updated, "rationale": rationale})
    if "Respond with a JSON object" in prompt:  # DSPy's JSONAdapter
        return json.dumps({"new_instruction": updated})
    if "[[ ## new_instruction ## ]]" in prompt:  # DSPy's ChatAdapter
        return f"[[ ## new_instruction ## ]]\n{updated}\n\n[[ ## completed ## ]]"
    return f"```\n{updated}\n```"  # GEPA's own reflection template


@dataclass
class ScriptedServer:
    """The handler for `FakeOpenAI.handler`; counts served and refused requests per model."""

    world: World
    seed: int
    tasks: dict[str, BenchTask]
    budget: int | None = None
    """Agent + judge requests a run may make (test split included); None = no cap."""
    reserve: int = 0
    """Of the budget, what requests marked as search may not use (the test split's share)."""
    counts: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, req: RecordedRequest) -> Reply:
        if req.path.endswith(BUDGET_PATH):
            with self.lock:
                return Reply(
                    body={"refused": sum(self.refused.values()), "served": dict(self.counts)}
                )
        body = req.body if isinstance(req.body, dict) else {}
        name = str(body.get("model", "")).removeprefix("openai/")
        role = name.removesuffix(TEST_SUFFIX)
        if role in ("agent", "judge") and not self._admit(role, test=name.endswith(TEST_SUFFIX)):
            return error(429, "the benchmark's call budget is spent", code="budget_exhausted")
        if role == "reflect":
            with self.lock:
                self.counts[role] += 1
        messages = body.get("messages") or []
        if role == "agent":
            return self.agent(messages, body.get("tools") or [])
        if role == "judge":
            return self.judge("\n".join(_content(m) for m in messages))
        if role == "reflect":
            prompt = "\n".join(_content(m) for m in messages)
            reflection = read_reflection(prompt)
            return text(
                reflection_reply(prompt, reflection, self.world.reflect(self.seed, reflection))
            )
        return error(404, f"no such model {role!r}", code="model_not_found")

    def _admit(self, role: str, *, test: bool) -> bool:
        with self.lock:
            spent = self.counts["agent"] + self.counts["judge"]
            limit = self.budget
            if limit is not None and not test:
                limit -= self.reserve
            if limit is not None and spent >= limit:
                self.refused[role] += 1
                return False
            self.counts[role] += 1
            return True

    def agent(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        system = "\n".join(_content(m) for m in messages if m.get("role") == "system")
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        user = _content(messages[last_user]) if last_user >= 0 else ""
        found = _TASK.search(user)
        if found is None or found.group(1) not in self.tasks:
            return error(400, "the scripted agent got no task id")
        task = self.tasks[found.group(1)]
        offered = {
            str(t["function"]["name"]): str(t["function"].get("description", ""))
            for t in tools
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        }
        results = [_content(m) for m in messages[last_user + 1 :] if m.get("role") == "tool"]
        turn = self.world.answer(self.seed, task, instructions_in(system), offered, results)
        usage = (turn.prompt_tokens, 12)
        if turn.tool is not None:
            return tool_calls([(turn.tool, turn.arguments)], usage=usage)
        answer = turn.text
        if "Respond with a JSON object" in user:  # DSPy's JSONAdapter
            return text(json.dumps({"answer": answer}), usage=usage)
        if "[[ ## answer ## ]]" in system:  # DSPy's ChatAdapter
            answer = f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"
        return text(answer, usage=usage)

    def judge(self, prompt: str) -> Reply:
        found = _RESPONSE.search(prompt)
        response = found.group(2) if found else ""
        task_id = _TASK.search(prompt)
        task = self.tasks.get(task_id.group(1)) if task_id else None
        verdicts = []
        for name in _CHECK.findall(prompt):
            if task is None:
                verdicts.append({"name": name.strip(), "passed": False, "reason": "no task"})
                continue
            ok, reason = self.world.verdict(self.seed, task, response)
            verdicts.append({"name": name.strip(), "passed": ok, "reason": reason})
        return text(json.dumps({"verdicts": verdicts}))

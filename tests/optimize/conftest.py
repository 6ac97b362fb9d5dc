"""Fixtures for optimizer tests: scripted `mock:` models and small agent projects.

The scripted agent follows its system prompt: it repeats every phrase written in single quotes
in its instructions. A task's criterion asks for one phrase, so an agent passes exactly when
its instructions hold the right rule — which is what the rule proposer or the reflection model
must add. The scripted judge reads the task-adherence prompt it is sent (the criteria and the
fenced response) and checks each phrase, like a strict human would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest, Message, ToolCall
from agentopt.workflows.optimize import (
    NullOptimizeSink,
    OptimizeOptions,
    OptimizeOutcome,
    prepare_optimize,
    run_optimize,
)

_RESPONSE = re.compile(r"<response-([0-9a-f]{12})>\n(.*?)\n</response-\1>", re.S)
_CRITERION = re.compile(r"- name: (.+)\n  check: (.+)")
_QUOTED = re.compile(r"'([A-Za-z][A-Za-z ]{0,40})'")


def system_text(req: ChatRequest) -> str:
    return next((m.content or "" for m in req.messages if m.role == "system"), "")


def last_user(req: ChatRequest) -> str:
    return next((m.content or "" for m in reversed(req.messages) if m.role == "user"), "")


def prompt_text(req: ChatRequest) -> str:
    return "\n".join(m.content or "" for m in req.messages)


def rule_agent(req: ChatRequest) -> str:
    """Says every quoted phrase of its system prompt."""
    phrases = _QUOTED.findall(system_text(req))
    return f"Answer to {last_user(req)}." + "".join(f" {p}." for p in phrases)


def phrase_verdicts(text: str) -> str:
    """The task-adherence verdicts for a judge prompt: a criterion passes when the quoted
    phrase of its check occurs in the response."""
    match = _RESPONSE.search(text)
    response = match.group(2) if match else ""
    verdicts = []
    for name, check in _CRITERION.findall(text):
        quoted = _QUOTED.search(check)
        phrase = quoted.group(1) if quoted else check
        ok = phrase.lower() in response.lower()
        reason = f"{'mentions' if ok else 'does not mention'} '{phrase}'"
        verdicts.append({"name": name.strip(), "passed": ok, "reason": reason})
    return json.dumps({"verdicts": verdicts})


def phrase_judge(req: ChatRequest) -> str:
    return phrase_verdicts(prompt_text(req))


@dataclass
class Recorder:
    """A scripted model that keeps every request it got."""

    fn: Callable[[ChatRequest], Any]
    requests: list[ChatRequest] = field(default_factory=list)

    def __call__(self, req: ChatRequest) -> Any:
        self.requests.append(req)
        return self.fn(req)

    @property
    def prompts(self) -> list[str]:
        return [prompt_text(r) for r in self.requests]


@dataclass
class Models:
    """Registered scripted models, by name (use `mock:<name>`)."""

    recorders: dict[str, Recorder] = field(default_factory=dict)

    def add(self, name: str, fn: Callable[[ChatRequest], Any]) -> Recorder:
        rec = Recorder(fn)
        register_mock(name, rec)
        self.recorders[name] = rec
        return rec

    def __getitem__(self, name: str) -> Recorder:
        return self.recorders[name]


@pytest.fixture
def models() -> Iterator[Models]:
    """`opt_agent` (rule-following agent) and `opt_judge` (phrase judge) pre-registered."""
    m = Models()
    m.add("opt_agent", rule_agent)
    m.add("opt_judge", phrase_judge)
    yield m
    for name in m.recorders:
        unregister_mock(name)


def task(name: str, phrase: str, query: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "query": query or f"question {name}",
        "criteria": [
            {"name": "key_phrase", "instruction": f"The response includes the phrase '{phrase}'"}
        ],
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def make_project(
    root: Path,
    rows: list[dict[str, Any]],
    *,
    validation: list[dict[str, Any]] | None = None,
    test: list[dict[str, Any]] | None = None,
    instructions: str = "You are the store's support assistant. Answer briefly.",
    model: str = "mock:opt_agent",
    tools: list[dict[str, Any]] | None = None,
    tool_mocks: dict[str, Any] | None = None,
    skills: dict[str, str] | None = None,
    evaluators: list[Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Path:
    """An agent project: `.agent_configs/baseline/`, datasets and eval.yaml."""
    base = root / ".agent_configs" / "baseline"
    base.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {"model": model, "instruction_file": "instructions.md"}
    (base / "instructions.md").write_text(instructions + "\n", encoding="utf-8")
    if tools is not None:
        meta["tools_file"] = "tools.json"
        (base / "tools.json").write_text(json.dumps(tools, indent=2), encoding="utf-8")
    if tool_mocks is not None:
        (base / "tool_mocks.json").write_text(json.dumps(tool_mocks), encoding="utf-8")
    for name, body in (skills or {}).items():
        folder = base / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\nname: {name}\ndescription: How to handle {name}.\n---\n{body}\n"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    if skills:
        meta["skill_dir"] = "skills"
    (base / "metadata.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    write_jsonl(root / "data" / "tasks.jsonl", rows)
    config: dict[str, Any] = {
        "name": "opt-suite",
        "agent": {"name": "store", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "data/tasks.jsonl"},
        "evaluators": evaluators if evaluators is not None else ["builtin.task_adherence"],
        "options": {"eval_model": "mock:opt_judge", **(options or {})},
    }
    if validation is not None:
        write_jsonl(root / "data" / "validation.jsonl", validation)
        config["validation_dataset"] = {"local_uri": "data/validation.jsonl"}
    if test is not None:
        write_jsonl(root / "data" / "test.jsonl", test)
        config["test_dataset"] = {"local_uri": "data/test.jsonl"}
    (root / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


def optimize(project: Path, sink: Any = None, **options: Any) -> OptimizeOutcome:
    """prepare + run, like the CLI does, without prompts."""
    prepared = prepare_optimize(OptimizeOptions(**options), project, None)
    return run_optimize(prepared, sink or NullOptimizeSink())


def tool_call_message(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Message:
    return Message(
        role="assistant",
        content=None,
        tool_calls=[
            ToolCall.model_validate(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
        ],
    )


def two_phrase_rows(
    prefix: str, n: int, phrases: tuple[str, ...] = ("refund window", "tracking link")
) -> list[dict[str, Any]]:
    return [task(f"{prefix}{i}", phrases[i % len(phrases)]) for i in range(n)]

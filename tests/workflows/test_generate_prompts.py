"""Snapshots of the generation prompts (templates/generate/*.j2): a prompt change shows up in
review as a change of the snapshot files. Refresh them on purpose with
`AGENTOPT_UPDATE_SNAPSHOTS=1 pytest tests/workflows/test_generate_prompts.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentopt.workflows.generate.prompts import (
    AgentContext,
    category_description,
    render_messages,
    tool_summaries,
)
from agentopt.workflows.generate.rubric import MAX_DIMENSIONS, MIN_DIMENSIONS
from agentopt.workflows.generate.validate import MAX_THREAD_TURNS

SNAPSHOTS = Path(__file__).parent / "snapshots"
AGENT = AgentContext(
    instruction="A support agent for an online store: refunds, returns and shipping.",
    agent_instructions="You are Shopbot. Refunds are possible within 30 days of delivery.",
    tools=tool_summaries(
        [
            {
                "type": "function",
                "function": {
                    "name": "lookup_order",
                    "description": "Find an order\n by its number.",
                    "parameters": {"type": "object"},
                },
            },
            {"type": "file_search"},
        ]
    ),
)
BARE = AgentContext(instruction="Answers HR policy questions.")

CASES: dict[str, tuple[str, AgentContext, dict[str, object]]] = {
    "tasks_first_batch": (
        "tasks.j2",
        AGENT,
        {
            "count": 3,
            "category": "edge",
            "category_description": category_description("edge"),
            "batch": 1,
            "batches": 1,
            "attempt": 1,
            "avoid": [],
            "max_turns": MAX_THREAD_TURNS,
        },
    ),
    "tasks_top_up": (
        "tasks.j2",
        BARE,
        {
            "count": 1,
            "category": "payroll",
            "category_description": category_description("payroll"),
            "batch": 2,
            "batches": 3,
            "attempt": 2,
            "avoid": ["How many vacation days do I get?", "Can I carry leave over?"],
            "max_turns": MAX_THREAD_TURNS,
        },
    ),
    "threads": (
        "threads.j2",
        AGENT,
        {
            "count": 2,
            "category": "multi_step",
            "category_description": category_description("multi_step"),
            "batch": 1,
            "batches": 1,
            "attempt": 1,
            "avoid": [],
            "max_turns": MAX_THREAD_TURNS,
        },
    ),
    "rubric": (
        "rubric.j2",
        AGENT,
        {"min_dimensions": MIN_DIMENSIONS, "max_dimensions": MAX_DIMENSIONS},
    ),
    "answers": (
        "answers.j2",
        BARE,
        {"query": "How many vacation days do I get?", "ground_truth": "25 days a year."},
    ),
}


def _render(name: str) -> str:
    template, agent, params = CASES[name]
    messages = render_messages(template, agent, **params)
    return "".join(f"=== {m.role} ===\n{m.content}\n" for m in messages)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prompt_snapshot(name: str) -> None:
    path = SNAPSHOTS / f"generate_{name}.txt"
    text = _render(name)
    if os.environ.get("AGENTOPT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path.name}; run with AGENTOPT_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


def test_prompts_are_deterministic_and_free_of_run_specific_values() -> None:
    for name in CASES:
        assert _render(name) == _render(name)
    text = _render("tasks_first_batch")
    assert "- lookup_order: Find an order by its number." in text
    assert "- file_search" in text
    assert "Refunds are possible within 30 days" in text

"""Snapshots of every judge prompt as sent, so a prompt change shows up in review.

After an intended prompt change: `AGENTOPT_UPDATE_SNAPSHOTS=1 pytest tests/evaluators -k snapshot`
and commit the changed files under tests/evaluators/snapshots/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentopt.contracts.task import Criterion
from agentopt.contracts.transcript import ToolCallRecord
from agentopt.evaluators import EvalSample
from agentopt.evaluators.base import HistoryTurn

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("AGENTOPT_UPDATE_SNAPSHOTS") == "1"

SAMPLE = EvalSample(
    query="Can I still return the headphones I opened last week?",
    response="Yes — opened items can be returned within 14 days 【1†returns-policy】.",
    ground_truth="Opened items may be returned within 14 days of delivery.",
    context="Returns policy: unopened items 30 days; opened items 14 days from delivery.",
    criteria=[
        Criterion(name="states_window", instruction="States the 14-day window for opened items."),
        Criterion(name="polite", instruction="Is polite."),
    ],
    history=[HistoryTurn(query="Hi, I bought headphones.", response="Happy to help!")],
    tool_calls=[
        ToolCallRecord(
            name="get_policy", arguments={"topic": "returns"}, result={"opened_days": 14}
        )
    ],
    tool_definitions=[
        {
            "type": "function",
            "function": {
                "name": "get_policy",
                "description": "Look up a store policy.",
                "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}},
            },
        }
    ],
    instructions="You are the store's support agent. Be concise.",
)
SCORE = json.dumps({"reason": "r", "score": 4})
CASES = {
    "relevance": ("Relevance", SCORE),
    "coherence": ("Coherence", SCORE),
    "fluency": ("builtin.fluency", SCORE),
    "intent_resolution": ("builtin.intent_resolution", SCORE),
    "groundedness": ("Groundedness", SCORE),
    "similarity": ("Similarity", SCORE),
    "tool_call_accuracy": ("builtin.tool_call_accuracy", SCORE),
    "task_adherence": (
        "builtin.task_adherence",
        json.dumps(
            {
                "verdicts": [
                    {"name": "states_window", "passed": True, "reason": "r"},
                    {"name": "polite", "passed": True, "reason": "r"},
                ]
            }
        ),
    ),
    "rubric": (
        {"name": "support-quality", "local_uri": "rubric_dimensions.json"},
        json.dumps(
            {
                "dimensions": [
                    {"id": "policy_accuracy", "applicable": True, "score": 4, "reason": "r"},
                    {"id": "general_quality", "applicable": True, "score": 4, "reason": "r"},
                ]
            }
        ),
    ),
}
RUBRIC = [
    {"id": "policy_accuracy", "description": "States the policy correctly.", "weight": 10},
    {
        "id": "general_quality",
        "description": "Other important quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]


def render(request) -> str:
    parts = [f"=== {m.role} ===\n{m.content}" for m in request.messages]
    parts.append(f"=== response_format ===\n{json.dumps(request.response_format, indent=2)}")
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("case", sorted(CASES))
def test_judge_prompt_snapshot(harness, judge, case):
    spec, reply = CASES[case]
    (harness.project_dir / "rubric_dimensions.json").write_text(json.dumps(RUBRIC))
    j = judge(reply)
    r = harness.run(spec, SAMPLE, judge_model=j.model)
    assert r.status == "pass", r
    text = render(j.requests[0])
    path = SNAPSHOTS / f"{case}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path.name}: run with AGENTOPT_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"the {case} judge prompt changed; if intended, update the snapshot "
        "(AGENTOPT_UPDATE_SNAPSHOTS=1) and review the diff"
    )


CONVERSATION = SAMPLE.model_copy(
    update={
        "scope": "conversation",
        "goal": "Find out whether the opened headphones can still be returned.",
    }
)
"""The same exchange scored as the end of a whole conversation (evaluation_level)."""


@pytest.mark.parametrize("case", ["task_adherence", "relevance", "fluency"])
def test_conversation_scope_judge_prompt_snapshot(harness, judge, case):
    spec, reply = CASES[case]
    j = judge(reply)
    r = harness.run(spec, CONVERSATION, judge_model=j.model)
    assert r.status == "pass", r
    text = render(j.requests[0])
    assert "whole conversation" in text and CONVERSATION.goal in text
    assert "Hi, I bought headphones." in text  # the earlier turn, also for fluency
    path = SNAPSHOTS / f"conversation_{case}.txt"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path.name}: run with AGENTOPT_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"the conversation-scope {case} prompt changed; if intended, update the snapshot"
    )

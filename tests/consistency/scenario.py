"""One `eval run` with every outcome class, against two real OpenAI-compatible servers on
loopback (the agent's and the judge's), for the consistency test.

| task       | what happens                                       | outcome                    |
|------------|----------------------------------------------------|----------------------------|
| good-1/2   | the judge passes every criterion                   | pass                       |
| wrong      | the judge fails a criterion                        | fail                       |
| unparsable | the judge answers with prose, not JSON             | partial (judgeParseFailed) |
| judge-down | the judge's server refuses the request (HTTP 400)  | partial (judgeUnavailable) |
| agent-down | the agent's server refuses the request (HTTP 400)  | error (agentRequestFailed) |
| thread     | turn 1 fails at the agent: turn 2 is never sent    | error, and a skipped turn  |
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text

CRITERIA = [
    {"name": "cites_window", "instruction": "States the 30-day refund window in days."},
    {"name": "offers_help", "instruction": "Offers to start the return for the customer."},
]
"""The words a person wrote: every view must show them, not just the names."""

TASKS: list[dict[str, Any]] = [
    {"name": "good-1", "query": "q-pass one: can I return my shoes?", "criteria": CRITERIA},
    {"name": "good-2", "query": "q-pass two: refund for a lamp?", "criteria": CRITERIA},
    {"name": "wrong", "query": "q-fail: how long do refunds take?", "criteria": CRITERIA},
    {"name": "unparsable", "query": "q-parse: may I return a gift?", "criteria": CRITERIA},
    {"name": "judge-down", "query": "q-unavail: refund a used item?", "criteria": CRITERIA},
    {"name": "agent-down", "query": "q-agent-error: hello?", "criteria": CRITERIA},
    {
        "name": "thread",
        "turns": [
            {"query": "q-agent-error in a thread"},
            {"query": "q-pass: and after that?"},
        ],
        "criteria": CRITERIA,
    },
]
EXPECTED = {"pass": 2, "fail": 1, "partial": 2, "error": 2}
EXPECTED_CALLS = {"agentRequestFailed": 2, "judgeParseFailed": 1, "judgeUnavailable": 1}
EXPECTED_SKIPPED = 1


def _last_user(req: RecordedRequest) -> str:
    users = [m for m in (req.body or {}).get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    return content if isinstance(content, str) else json.dumps(content)


def agent(req: RecordedRequest) -> Reply:
    query = _last_user(req)
    if "q-agent-error" in query:
        return error(400, "the agent refused this request", code="bad_request")
    return text(f"You can return it within 30 days; shall I start it? ({query[:20]})")


def judge(req: RecordedRequest) -> Reply:
    prompt = json.dumps(req.body)
    if "q-parse" in prompt:
        return text("I think the answer is mostly fine, overall.")
    if "q-unavail" in prompt:
        return error(400, "content filtered", code="content_filter")
    passed = "q-fail" not in prompt
    verdicts = [
        {"name": c["name"], "passed": passed or c["name"] == "offers_help", "reason": "checked"}
        for c in CRITERIA
    ]
    if not passed:
        verdicts[0]["reason"] = "says two weeks, not 30 days"
    return text(json.dumps({"verdicts": verdicts}), usage=(200, 20))


def write_project(root: Path) -> Path:
    rows = "\n".join(json.dumps(t) for t in TASKS) + "\n"
    (root / "tasks.jsonl").write_text(rows, encoding="utf-8")
    return root / "tasks.jsonl"


def run_args(agent_srv: FakeOpenAI, judge_srv: FakeOpenAI) -> list[str]:
    return [
        "--prompts-file", "tasks.jsonl",
        "--agent-model", f"compat:gpt-4.1-mini@{agent_srv.base_url}",
        "--eval-model", f"compat:judge@{judge_srv.base_url}",
        "--evaluator", "builtin.task_adherence",
        "--max-errors", "100", "--concurrency", "2", "--name", "consistency",
    ]  # fmt: skip

"""A scripted world on the fake OpenAI server for simulated-user tests: one handler answers
the three kinds of request a simulated conversation makes, told apart as the wire shows them.

- the simulated user: `response_format.json_schema.name == "simulated_user"`; its reply after
  the agent's n-th answer is `user_script(n)` (n = 0: the opening message);
- judges: any other `response_format` (task_adherence verdicts pass; 1–5 judges give 4);
- the agent: everything else (chat completions without a response_format); its n-th answer
  is `agent_script(n)`, n counted from the user messages it was sent.
Every request is kept by the server (`srv.requests`), so a test asserts on what was sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text

UserScript = Callable[[int], dict[str, str]]
AgentScript = Callable[[int], str]


def kind(req: RecordedRequest) -> str:
    """simulator | judge | agent."""
    body = req.body if isinstance(req.body, dict) else {}
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        name = (fmt.get("json_schema") or {}).get("name")
        return "simulator" if name == "simulated_user" else "judge"
    return "agent"


def user_content(req: RecordedRequest) -> str:
    """The text of the request's user messages, joined."""
    return "\n".join(
        str(m.get("content") or "") for m in req.body.get("messages", []) if m["role"] == "user"
    )


def agent_turns_seen(req: RecordedRequest) -> int:
    """How many agent answers a simulator request shows (its conversation block)."""
    return len(re.findall(r"\[turn \d+\] Agent:", user_content(req)))


def of_kind(srv: FakeOpenAI, name: str) -> list[RecordedRequest]:
    return [r for r in srv.chat_requests if kind(r) == name]


def continue_with(message: str) -> dict[str, str]:
    return {"reason": "not there yet", "action": "continue", "message": message}


def stop(action: str = "goal_reached") -> dict[str, str]:
    return {"reason": f"{action}: the agent did it", "action": action, "message": ""}


def install(srv: FakeOpenAI, user_script: UserScript, agent_script: AgentScript) -> None:
    """Answer every request of `srv` from the two scripts (and passing judges)."""

    def handler(req: RecordedRequest) -> Reply | None:
        which = kind(req)
        if which == "simulator":
            return text(json.dumps(user_script(agent_turns_seen(req))))
        if which == "judge":
            return text(json.dumps(judge_reply(req)))
        users = [m for m in req.body.get("messages", []) if m["role"] == "user"]
        return text(agent_script(len(users)))

    srv.handler = handler


def judge_reply(req: RecordedRequest) -> dict[str, Any]:
    schema = req.body["response_format"]["json_schema"]
    if schema["name"] == "task_adherence":
        names = re.findall(r"^- name: (\S+)$", user_content(req), flags=re.MULTILINE)
        return {"verdicts": [{"name": n, "passed": True, "reason": "ok"} for n in names]}
    return {"reason": "fine", "score": 4}

"""The three workloads of the peer comparison, and how the fake server plays the model in each.

- `single`: one model call per task, scored by exact match (the original comparison).
- `judge`: the same call, scored by one LLM judge per task (two calls per task): agentopt
  `builtin.relevance`, promptfoo `llm-rubric`, Inspect `model_graded_qa()`.
- `tools`: the agent calls a `lookup` tool twice, one round each, before answering (three
  model calls per task), scored by exact match: agentopt's local agent with a mocked tool,
  promptfoo's OpenAI provider with a tool callback, Inspect's `use_tools()` + `generate()`.

The server answers each tool's requests the way that tool's graders expect, recognised from
the request itself: agentopt's judge asks for a `json_schema` response format, promptfoo's
rubric grader says "rubric" and asks for `pass`/`score` JSON, Inspect's grader ends with
"GRADE: C or GRADE: I". An agent request with tools gets a tool call until the conversation
holds two tool results, then the echo of the user's query (so exact match passes).
"""

from __future__ import annotations

import json
from typing import Any

from tests.fake_openai import RecordedRequest, Reply, text, tool_calls

WORKLOADS = ("single", "judge", "tools")
TOOL_ROUNDS = 2
LOOKUP_TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a benchmark item up.",
        "parameters": {
            "type": "object",
            "properties": {"item": {"type": "string"}},
            "required": ["item"],
        },
    },
}
CALLS_PER_TASK = {"single": 1, "judge": 2, "tools": 1 + TOOL_ROUNDS}


def answer(req: RecordedRequest) -> Reply | None:
    """The reply for a request of any workload (None: the server's default echo)."""
    body = req.body if isinstance(req.body, dict) else {}
    messages = body.get("messages") or []
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema" and "builtin_" in str(fmt.get("json_schema", {})):
        return text(json.dumps({"reason": "The response repeats the request.", "score": 5}))
    joined = "\n".join(_content(m) for m in messages)
    if "GRADE: C" in joined and "GRADE: I" in joined:
        return text("The submission matches the criterion.\n\nGRADE: C")
    if "rubric" in joined.lower() and '"pass"' in joined:
        return text(json.dumps({"reason": "The output repeats the request.", "pass": True,
                                "score": 1.0}))  # fmt: skip
    if body.get("tools"):
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < TOOL_ROUNDS:
            return tool_calls([("lookup", {"item": f"round {done + 1}"})])
        return text(_last_user(messages))
    return None


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _last_user(messages: list[dict[str, Any]]) -> str:
    users = [_content(m) for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""

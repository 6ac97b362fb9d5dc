"""Tool calling for servers without it: the tools in the prompt, a JSON reply read back.

A server that refuses `tools` (a capability error), ignores them (`tool_choice` forced a call
and none came back) or answers with a JSON tool call as plain text gets the agent's request
rewritten the portable way the embedded model already uses (`providers.local_tools`):

- the history in system/user/assistant roles only (an assistant tool call becomes its JSON, a
  tool result a user message naming the tool), the tool list and the reply format appended to
  the system message; for the plain answer after tool results, the calls are left out and the
  results handed over in the user's turn (a small model otherwise copies the call's JSON);
- a JSON answer constrained by a schema that only admits a listed tool with its arguments or,
  when the model may answer, `{"content": ...}` — sent through the structured-output ladder, so
  a grammar-decoding server (llama.cpp) can only name real tools; after a tool result (with
  `tool_choice` auto) a plain answer, which a small model ends by itself;
- the reply translated back into `ToolCall`s (ids `call_<turn>_<n>`, stable across runs), so
  the agent loop above never knows the difference.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentopt.models.providers.local_tools import (
    history_for_template,
    offered_tools,
    parse_tool_reply,
    tool_prompt,
    tool_schema,
    wants_tools,
    with_system_text,
)
from agentopt.models.types import ChatRequest, ChatResponse, FunctionCall, Message, ToolCall

SCHEMA_NAME = "tool_reply"
PROMPTED_MAX_TOKENS = 1024
"""Bound of a prompted tool-call turn without its own max_tokens: a small model writing an
answer inside JSON may never close the string."""
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.S)


def forces_tool_call(request: ChatRequest) -> bool:
    """Whether `tool_choice` obliges the model to call a tool on this request."""
    choice = request.tool_choice
    return bool(request.tools) and (choice == "required" or isinstance(choice, dict))


def prompted_request(request: ChatRequest) -> ChatRequest:
    """`request` (with tools) without `tools`: a JSON reply naming a tool (or answering) when
    the model may call one, else a plain answer (after a tool result, tool_choice auto)."""
    update: dict[str, Any] = {"tools": None, "tool_choice": None}
    if not wants_tools(request):
        update["messages"] = answer_history(request.messages)
        return request.model_copy(update=update)
    tools = offered_tools(request)
    allow_content = not forces_tool_call(request)
    schema = tool_schema(tools, allow_content=allow_content)
    history = with_system_text(
        history_for_template(request.messages), tool_prompt(tools, allow_content=allow_content)
    )
    update["response_format"] = {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": schema},
    }
    update["max_tokens"] = request.max_tokens or PROMPTED_MAX_TOKENS
    update["messages"] = [Message(role=m["role"], content=m["content"]) for m in history]  # type: ignore[arg-type]
    return request.model_copy(update=update)


def answer_history(messages: list[Message]) -> list[Message]:
    """The history for a plain answer after tool results: the tool calls left out (a small
    model copies their JSON instead of answering) and each result given to the model as text
    in the user's turn."""
    names = {tc.id: tc.function.name for m in messages for tc in m.tool_calls or []}
    out: list[Message] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            continue
        if m.role == "tool":
            name = names.get(m.tool_call_id or "", m.name or "the tool")
            m = Message(role="user", content=f"Result of {name}:\n{m.content or ''}")
        else:
            m = Message(role=m.role, content=m.content or "")
        if out and out[-1].role == m.role == "user":
            out[-1] = Message(role="user", content=f"{out[-1].content}\n\n{m.content}")
        else:
            out.append(m)
    hint = "Answer the user in plain text, using the tool results above."
    return [*out[:-1], Message(role="user", content=f"{out[-1].content}\n\n{hint}")]


def prompted_response(request: ChatRequest, response: ChatResponse) -> ChatResponse:
    """The reply to a `prompted_request` as an ordinary answer or tool-call response."""
    if not wants_tools(request):
        return response
    content, calls = parse_tool_reply(response.text.strip(), _turn(request))
    if calls:
        message = Message(role="assistant", content=None, tool_calls=calls)
        return response.model_copy(update={"message": message, "finish_reason": "tool_calls"})
    message = Message(role="assistant", content=content)
    return response.model_copy(update={"message": message})


def tool_calls_in_text(request: ChatRequest, response: ChatResponse) -> list[ToolCall]:
    """Tool calls a server without tool support wrote as its text answer: one JSON value
    (optionally fenced) of `{"name", "arguments"|"parameters"}`, a list of them, or
    `{"tool_calls": [...]}`, naming only tools the request offered. Else []."""
    if response.tool_calls or not request.tools:
        return []
    text = response.text.strip()
    fenced = _FENCE.match(text)
    body = (fenced.group(1) if fenced else text).lstrip()
    if body[:1] not in ("{", "["):  # no call can be written otherwise: a plain answer is not
        return []  # parsed (a failed parse, an exception, on every answer of a native server)
    try:
        data = json.loads(body)
    except ValueError:
        return []
    if isinstance(data, dict) and isinstance(data.get("tool_calls"), list):
        data = data["tool_calls"]
    items = data if isinstance(data, list) else [data]
    names = {t.name for t in request.tools}
    calls = []
    for i, item in enumerate(items):
        call = _call(item, names)
        if call is None:
            return []
        name, args = call
        calls.append(
            ToolCall(
                id=f"call_{_turn(request)}_{i}",
                function=FunctionCall(name=name, arguments=json.dumps(args)),
            )
        )
    return calls


def _call(item: Any, names: set[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, dict):
        return None
    inner = item.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else item
    name = fn.get("name")
    args = fn.get("arguments", fn.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args or "{}")
        except ValueError:
            return None
    if name not in names or not isinstance(args, dict):
        return None
    return str(name), args


def _turn(request: ChatRequest) -> int:
    """The number of this model call in the conversation (for stable tool-call ids)."""
    return sum(1 for m in request.messages if m.role == "assistant")

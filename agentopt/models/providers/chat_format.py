"""ChatRequest ⇄ chat.completions wire format, shared by every OpenAI-protocol provider.

Messages are sent in the shape every server accepts (docs/providers.md, "Message shapes"):
- one system message, first: system messages elsewhere are merged into it (Mistral, Gemma and
  Llama-2 chat templates raise on a system message after the first turn);
- an assistant message that carries `tool_calls` always has a `content` key: `null` as the
  OpenAI reference says, or `""` for local servers (`string_content`), whose Jinja chat
  templates concatenate `message['content']` and crash on a missing key or on None
  (llama-cpp-python's server answers HTTP 500);
- a tool result carries `tool_call_id` and the tool's `name`, and its content is a string;
- no `tools: []` (and no `tool_choice` without tools).
"""

from __future__ import annotations

from typing import Any

from agentopt.core import limits
from agentopt.models.classify import answer_too_large, unusable_answer
from agentopt.models.types import ChatRequest, ChatResponse, Message


def message_to_wire(message: Message, *, string_content: bool = False) -> dict[str, Any]:
    """One Message as a chat.completions message dict."""
    out: dict[str, Any] = {"role": message.role}
    if message.content is not None:
        out["content"] = message.content
    elif message.tool_calls:
        out["content"] = "" if string_content else None
    else:
        out["content"] = ""
    if message.tool_calls:
        out["tool_calls"] = [tc.model_dump() for tc in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def one_system_first(messages: list[Message]) -> list[Message]:
    """The messages with every system message merged into one at the start."""
    positions = [i for i, m in enumerate(messages) if m.role == "system"]
    if positions in ([], [0]):
        return messages
    text = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    rest = [m for m in messages if m.role != "system"]
    return [Message(role="system", content=text), *rest] if text else rest


def with_tool_names(messages: list[Message]) -> list[Message]:
    """Tool results named after the call they answer, when they carry no name."""
    names: dict[str, str] = {}
    out = []
    for m in messages:
        for call in m.tool_calls or []:
            names[call.id] = call.function.name
        if m.role == "tool" and m.name is None and m.tool_call_id in names:
            m = m.model_copy(update={"name": names[m.tool_call_id or ""]})
        out.append(m)
    return out


def request_to_wire(
    model: str, request: ChatRequest, *, reasoning: bool, string_content: bool = False
) -> dict[str, Any]:
    """Keyword arguments for `client.chat.completions.create`.

    Reasoning models get `max_completion_tokens` and no temperature/top_p (they reject both).
    `response_format` `{"type": "guided_json", "schema": ...}` (the structured-output ladder's
    vLLM rung) goes out as vLLM's `extra_body={"guided_json": schema}`.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            message_to_wire(m, string_content=string_content)
            for m in with_tool_names(one_system_first(request.messages))
        ],
    }
    if request.tools:
        # The definitions as they are (`model_dump` copied each deeply on every call): the
        # body is written out, never changed in place.
        body["tools"] = [{"type": t.type, "function": t.function} for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
    if not reasoning:
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    if request.max_tokens is not None:
        body["max_completion_tokens" if reasoning else "max_tokens"] = request.max_tokens
    if request.seed is not None:
        body["seed"] = request.seed
    fmt = request.response_format
    if fmt is not None and fmt.get("type") == "guided_json":
        body["extra_body"] = {"guided_json": fmt.get("schema") or {}}
    elif fmt is not None:
        body["response_format"] = fmt
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def response_from_wire(completion: Any, *, provider: str, model: str) -> ChatResponse:
    """A chat.completions response object (SDK model or dict) as a ChatResponse."""
    data = completion if isinstance(completion, dict) else completion.model_dump()
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        error = data.get("error")
        detail = "no choices"
        if isinstance(error, dict) and error.get("message"):
            detail = f"an error object: {str(error['message'])[:200]}"
        elif error:
            detail = f"an error object: {str(error)[:200]}"
        raise unusable_answer(provider, model, detail)
    try:
        return _response(data, choices[0], provider, model)
    except (AttributeError, TypeError, ValueError) as exc:  # a wrong type somewhere inside
        raise unusable_answer(provider, model, f"a malformed completion: {exc}") from None


def _response(
    data: dict[str, Any], choice: dict[str, Any], provider: str, model: str
) -> ChatResponse:
    raw = choice.get("message") or {}
    calls: list[dict[str, Any]] = [
        {
            "id": str(tc.get("id") or f"call_{i}"),
            "function": {
                "name": str((tc.get("function") or {}).get("name") or ""),
                "arguments": str((tc.get("function") or {}).get("arguments") or "{}"),
            },
        }
        for i, tc in enumerate(raw.get("tool_calls") or [])
        if (tc.get("type") or "function") == "function"
    ]
    content = raw.get("content")
    if content is None and raw.get("refusal"):
        content = str(raw["refusal"])
    size = limits.oversize(content if isinstance(content, str) else None) or limits.oversize(
        "".join(c["function"]["arguments"] for c in calls)
    )
    if size is not None:  # the SDK's path read it whole; it goes no further
        raise answer_too_large(provider, model, size)
    usage = data.get("usage") or {}
    # One validation of the whole answer (a model per part, each validated on its own, took
    # twice as long); a wrong type anywhere is a ValueError, as it was.
    return ChatResponse.model_validate(
        {
            "message": {"role": "assistant", "content": content, "tool_calls": calls or None},
            "finish_reason": choice.get("finish_reason"),
            "usage": {
                "input_tokens": int(usage.get("prompt_tokens") or 0),
                "output_tokens": int(usage.get("completion_tokens") or 0),
            },
            "model": str(data.get("model") or model),
            "provider": provider,
        }
    )

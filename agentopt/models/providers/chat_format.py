"""ChatRequest ⇄ chat.completions wire format, shared by every OpenAI-protocol provider."""

from __future__ import annotations

from typing import Any

from agentopt.contracts.usage import Usage
from agentopt.core.errors import ModelCallError
from agentopt.models.types import ChatRequest, ChatResponse, FunctionCall, Message, ToolCall


def message_to_wire(message: Message) -> dict[str, Any]:
    """One Message as a chat.completions message dict (unset fields left out)."""
    out: dict[str, Any] = {"role": message.role}
    if message.content is not None or not message.tool_calls:
        out["content"] = message.content if message.content is not None else ""
    if message.tool_calls:
        out["tool_calls"] = [tc.model_dump() for tc in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def request_to_wire(model: str, request: ChatRequest, *, reasoning: bool) -> dict[str, Any]:
    """Keyword arguments for `client.chat.completions.create`.

    Reasoning models get `max_completion_tokens` and no temperature/top_p (they reject both).
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": [message_to_wire(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [t.model_dump() for t in request.tools]
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
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def response_from_wire(completion: Any, *, provider: str, model: str) -> ChatResponse:
    """A chat.completions response object (SDK model or dict) as a ChatResponse."""
    data = completion if isinstance(completion, dict) else completion.model_dump()
    choices = data.get("choices") or []
    if not choices:
        raise ModelCallError(
            f"{provider} model '{model}' answered without any choice",
            kind="parse",
            provider=provider,
            model=model,
        )
    choice = choices[0]
    raw = choice.get("message") or {}
    calls = [
        ToolCall(
            id=str(tc.get("id") or f"call_{i}"),
            function=FunctionCall(
                name=str((tc.get("function") or {}).get("name") or ""),
                arguments=str((tc.get("function") or {}).get("arguments") or "{}"),
            ),
        )
        for i, tc in enumerate(raw.get("tool_calls") or [])
        if (tc.get("type") or "function") == "function"
    ]
    content = raw.get("content")
    if content is None and raw.get("refusal"):
        content = str(raw["refusal"])
    usage = data.get("usage") or {}
    return ChatResponse(
        message=Message(role="assistant", content=content, tool_calls=calls or None),
        finish_reason=choice.get("finish_reason"),
        usage=Usage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        ),
        model=str(data.get("model") or model),
        provider=provider,
    )

"""Reading agent answers in the two OpenAI wire formats agents speak: Responses and
chat-completions. Shared by the hosted, endpoint and foundry targets so that a tool call or a
citation reads the same whichever of them produced it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from agentopt.agents.citations import citations_from_annotations
from agentopt.agents.conversation import AGENT_REQUEST_FAILED, TurnFailed
from agentopt.agents.retrying import with_retries
from agentopt.contracts.diagnostics import read_diagnostics
from agentopt.contracts.transcript import ToolCallRecord, TurnResult
from agentopt.contracts.usage import Usage


def as_dict(response: Any) -> dict[str, Any]:
    """The JSON form of an SDK response object (or a dict, returned as is)."""
    if isinstance(response, dict):
        return response
    to_dict = getattr(response, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    return dict(response.model_dump(mode="json"))


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict, whether they came as JSON text or already parsed."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return {"_raw": raw}
        return value if isinstance(value, dict) else {"_value": value}
    return {} if raw is None else {"_value": raw}


def turn_from_response(data: dict[str, Any], query: str, source: str) -> TurnResult:
    """A `TurnResult` from a Responses API response body.

    Raises `TurnFailed` when the response reports `status: failed` or an `error`.
    """
    error = data.get("error")
    if data.get("status") == "failed" or error:
        detail = error.get("message") if isinstance(error, dict) else error
        raise TurnFailed(AGENT_REQUEST_FAILED, f"the agent reported an error: {detail or 'failed'}")
    texts: list[str] = []
    annotations: list[Any] = []
    calls: list[ToolCallRecord] = []
    by_call_id: dict[str, ToolCallRecord] = {}
    for item in data.get("output") or []:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("type", ""))
        if kind == "message":
            parts = []
            for content in item.get("content") or []:
                if content.get("type") in ("output_text", "text"):
                    parts.append(str(content.get("text") or ""))
                    annotations.extend(content.get("annotations") or [])
                elif content.get("type") == "refusal":
                    parts.append(str(content.get("refusal") or ""))
            texts.append("".join(parts))
        elif kind == "function_call":
            record = ToolCallRecord(
                name=str(item.get("name", "")),
                arguments=parse_arguments(item.get("arguments")),
                source=source,
            )
            calls.append(record)
            by_call_id[str(item.get("call_id") or item.get("id") or "")] = record
        elif kind == "function_call_output":
            record_for = by_call_id.get(str(item.get("call_id") or ""))
            if record_for is not None:
                record_for.result = _maybe_json(item.get("output"))
        elif kind == "mcp_call":
            label = item.get("server_label")
            calls.append(
                ToolCallRecord(
                    name=str(item.get("name", "")),
                    arguments=parse_arguments(item.get("arguments")),
                    result=_maybe_json(item.get("output")),
                    error=item.get("error") or None,
                    source=source,
                    plugin=label if isinstance(label, str) and label else None,
                )
            )
        elif kind.endswith("_call"):  # built-in tools: web_search_call, file_search_call, ...
            extra = {k: v for k, v in item.items() if k not in ("type", "id", "status")}
            calls.append(ToolCallRecord(name=kind[: -len("_call")], arguments=extra, source=source))
    return TurnResult(
        query=query,
        response="\n\n".join(t for t in texts if t),
        tool_calls=calls,
        citations=citations_from_annotations(annotations),
        usage=_usage(data.get("usage"), "input_tokens", "output_tokens"),
        diagnostics=read_diagnostics(data.get("diagnostics")),
    )


def turn_from_chat_completion(data: dict[str, Any], query: str, source: str) -> TurnResult:
    """A `TurnResult` from a chat-completions response body (first choice)."""
    choices = data.get("choices") or []
    if not choices:
        raise TurnFailed(AGENT_REQUEST_FAILED, "the agent's chat completion had no choices")
    message = choices[0].get("message") or {}
    calls = [
        ToolCallRecord(
            name=str((call.get("function") or {}).get("name", "")),
            arguments=parse_arguments((call.get("function") or {}).get("arguments")),
            source=source,
        )
        for call in message.get("tool_calls") or []
    ]
    return TurnResult(
        query=query,
        response=str(message.get("content") or message.get("refusal") or ""),
        tool_calls=calls,
        citations=citations_from_annotations(message.get("annotations") or []),
        usage=_usage(data.get("usage"), "prompt_tokens", "completion_tokens"),
        diagnostics=read_diagnostics(data.get("diagnostics")),
    )


def _usage(raw: Any, input_key: str, output_key: str) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=int(raw.get(input_key) or raw.get("input_tokens") or 0),
        output_tokens=int(raw.get(output_key) or raw.get("output_tokens") or 0),
    )


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def responses_sender(
    client: Any, *, source: str, attempts: int, **fixed: Any
) -> tuple[Callable[[str], Awaitable[TurnResult]], Callable[[TurnResult], None]]:
    """A multi-turn sender over the Responses API: each turn continues the previous response
    (`previous_response_id`). `fixed` holds the request fields every turn sends (model, an
    agent reference in `extra_body`, ...). Shared by the hosted, endpoint and foundry targets.

    Returns the sender and its `restore`: an answered turn's response id (kept in its
    `state`) becomes the `previous_response_id` of the next turn, so a resumed conversation
    continues on the server without sending the turn again."""
    previous: list[str] = []

    def restore(turn: TurnResult) -> None:
        response_id = (turn.state or {}).get("response_id")
        if response_id:
            previous.append(str(response_id))

    async def send(query: str) -> TurnResult:
        kwargs: dict[str, Any] = {**fixed, "input": query}
        if previous:
            kwargs["previous_response_id"] = previous[-1]
        response = await with_retries(
            lambda: client.responses.create(**kwargs), attempts=attempts, target=source
        )
        data = as_dict(response)
        result = turn_from_response(data, query, source=source)
        if data.get("id"):
            previous.append(str(data["id"]))
            result.state = {"response_id": str(data["id"])}
        return result

    return send, restore

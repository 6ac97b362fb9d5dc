"""Playing a turn through a hosted agent's **invocations** protocol (azure-ai-agentserver-
invocations; azd `invoke --protocol invocations`, `internal/cmd/invoke.go`).

The protocol leaves the body to the agent, so the request and the answer follow what the agent
declares — its RAI policy's `invocationsModeration` (`inputPaths`, `outputPaths`,
`streamSelectors`) — else the foundry-samples' conventions: a JSON body `{"message": text}`,
an answer that is JSON (`{"response": ...}` and its kin), server-sent events (token deltas,
then a `done` frame with the full text), or plain text. The lifecycle is azd's:

- `POST /invocations?agent_session_id=<id>`; one session per task conversation, so the agent
  keeps a multi-turn conversation's history itself (the protocol has none of its own);
- `200` with `text/event-stream` → read the frames until the stream ends or `[DONE]`; an
  `{"error": ...}` frame is an agent error;
- `200` otherwise → a synchronous answer; an `{"error": ...}` envelope is an agent error;
- `202 Accepted` → a long-running invocation: its id from `x-agent-invocation-id` (or the
  body's `invocation_id`); `GET /invocations/{id}` until `status` is `completed`, `failed` or
  `cancelled`, honouring `Retry-After` (404 = not registered yet); when the turn is cancelled
  (deadline, Ctrl-C) the invocation is cancelled too (`POST /invocations/{id}/cancel`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from agentopt.agents.conversation import AGENT_REQUEST_FAILED, TurnFailed
from agentopt.agents.openai_wire import turn_from_response
from agentopt.contracts.transcript import TurnResult
from agentopt.contracts.usage import Usage
from agentopt.models.http_client import Answer, LeanClient

INVOCATION_ID_HEADER = "x-agent-invocation-id"
POLL_FIRST_S = 0.25
POLL_MAX_S = 5.0
"""A local agent answers its status reads at once; azd starts at 2 s for remote ones."""
_ANSWER_KEYS = ("response", "output_text", "output", "answer", "text", "message", "content")
_FINAL_KEYS = ("full_text", "response", "output_text", "text", "output", "content")
_DELTA_KEYS = ("delta", "content", "text", "token")
_FINAL_TYPES = ("done", "completed", "response.completed", "message.completed", "final")


def session_id() -> str:
    """A fresh session id the agentserver packages accept (`^[a-zA-Z0-9\\-_.:]+$`)."""
    return f"agentopt-{uuid.uuid4().hex}"


def request_body(query: str, io: dict[str, Any] | None) -> tuple[bytes, str | None]:
    """The body and its content type (None = JSON) for one user turn."""
    if io and io.get("input_content_type") == "text":
        return query.encode("utf-8"), "text/plain"
    paths = (io or {}).get("input_paths") or ["$.message"]
    body: dict[str, Any] = {}
    for path in paths:
        _put(body, _keys(path), query)
    return json.dumps(body).encode("utf-8"), None


def answer_turn(answer: Answer, query: str, io: dict[str, Any] | None, source: str) -> TurnResult:
    """A synchronous (`200`) answer or a finished long-running one, as a turn."""
    ctype = answer.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        return stream_turn(answer.body.decode("utf-8", errors="replace"), query, io)
    text = answer.body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return TurnResult(query=query, response=text.strip())
    return json_turn(data, query, io, source)


def json_turn(data: Any, query: str, io: dict[str, Any] | None, source: str) -> TurnResult:
    if not isinstance(data, dict):
        return TurnResult(query=query, response=data if isinstance(data, str) else _dump(data))
    _raise_error(data)
    if isinstance(data.get("output"), list):  # a Responses-shaped answer
        return turn_from_response(data, query, source=source)
    for path in (io or {}).get("output_paths") or []:
        found = _get(data, _keys(path))
        if isinstance(found, str):
            return TurnResult(query=query, response=found, usage=_usage(data))
    for key in _ANSWER_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            return TurnResult(query=query, response=value, usage=_usage(data))
    nested = data.get("result")
    if isinstance(nested, dict | str | list):
        inner = json_turn(nested, query, io, source)
        inner.usage = inner.usage if inner.usage.total_tokens else _usage(data)
        return inner
    return TurnResult(query=query, response=_dump(data), usage=_usage(data))


def stream_turn(text: str, query: str, io: dict[str, Any] | None) -> TurnResult:
    """The answer carried by a server-sent event stream: the `done` frame's full text when the
    agent sends one, else the deltas joined, else the raw data lines."""
    selectors = {s["event_type"]: s["text_field"] for s in (io or {}).get("stream_selectors", [])}
    deltas: list[str] = []
    raw: list[str] = []
    final: str | None = None
    usage = Usage()
    for event, data in _events(text):
        if data == "[DONE]":
            break
        try:
            frame = json.loads(data)
        except json.JSONDecodeError:
            raw.append(data)
            continue
        if not isinstance(frame, dict):
            raw.append(data if isinstance(frame, str) else _dump(frame))
            continue
        _raise_error(frame)
        kind = str(frame.get("type") or event or "")
        usage = _usage(frame) if _usage(frame).total_tokens else usage
        if kind in selectors:
            value = frame.get(selectors[kind])
            if isinstance(value, str):
                deltas.append(value)
            continue
        if kind in _FINAL_TYPES:
            value = next((frame[k] for k in _FINAL_KEYS if isinstance(frame.get(k), str)), None)
            if value is not None:
                final = value
            continue
        if not selectors:
            value = next((frame[k] for k in _DELTA_KEYS if isinstance(frame.get(k), str)), None)
            if value is not None:
                deltas.append(value)
    response = final if final is not None else "".join(deltas) if deltas else "\n".join(raw)
    return TurnResult(query=query, response=response, usage=usage)


def invocations_sender(
    client: LeanClient, *, io: dict[str, Any] | None, source: str
) -> Callable[[str], Awaitable[TurnResult]]:
    """A multi-turn sender: every turn of one conversation goes to the same agent session."""
    session = session_id()

    async def send(query: str) -> TurnResult:
        payload, ctype = request_body(query, io)
        path = f"/invocations?agent_session_id={quote(session)}"
        answer = await client.request("POST", path, payload, content_type=ctype)
        if answer.status == 202:
            answer = await _finish(client, answer, session)
        elif answer.status >= 400:
            raise TurnFailed(AGENT_REQUEST_FAILED, _http_error("POST /invocations", answer))
        return answer_turn(answer, query, io, source)

    return send


async def _finish(client: LeanClient, accepted: Answer, session: str) -> Answer:
    """Poll a `202 Accepted` invocation to its end (azd `handleInvocationLRO`)."""
    invocation = accepted.headers.get(INVOCATION_ID_HEADER, "")
    if not invocation:
        with contextlib.suppress(ValueError, AttributeError):
            invocation = str(json.loads(accepted.body or b"{}").get("invocation_id") or "")
    if not invocation:
        raise TurnFailed(
            AGENT_REQUEST_FAILED,
            "the agent answered 202 Accepted but named no invocation "
            f"(expected the {INVOCATION_ID_HEADER} header)",
        )
    path = f"/invocations/{quote(invocation, safe='')}"
    query = f"?agent_session_id={quote(session)}"
    wait = POLL_FIRST_S
    try:
        while True:
            await asyncio.sleep(wait)
            answer = await client.request("GET", path + query)
            retry_after = _retry_after(answer)
            wait = retry_after if retry_after is not None else min(wait * 2, POLL_MAX_S)
            if answer.status == 404:
                continue  # not registered yet
            if answer.status >= 400:
                raise TurnFailed(AGENT_REQUEST_FAILED, _http_error(f"GET {path}", answer))
            with contextlib.suppress(ValueError):
                status = json.loads(answer.body or b"{}").get("status")
                if status == "completed":
                    return answer
                if status == "failed":
                    _raise_error(json.loads(answer.body))
                    raise TurnFailed(AGENT_REQUEST_FAILED, f"invocation {invocation} failed")
                if status in ("cancelled", "canceled"):
                    raise TurnFailed(AGENT_REQUEST_FAILED, f"invocation {invocation} was cancelled")
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(client.request("POST", f"{path}/cancel{query}"))
        raise


def _events(text: str) -> list[tuple[str, str]]:
    """(event name, data) per server-sent event; comments (keep-alives) skipped."""
    events: list[tuple[str, str]] = []
    name, data = "", list[str]()
    for line in [*text.replace("\r\n", "\n").split("\n"), ""]:
        if not line:
            if data:
                events.append((name, "\n".join(data)))
            name, data = "", list[str]()
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    return events


def _raise_error(data: dict[str, Any]) -> None:
    """The recommended error envelope (`{"error": {code|type, message}}`) is an agent error."""
    error = data.get("error")
    if isinstance(error, dict) and (error.get("message") or error.get("code")):
        label = error.get("code") or error.get("type")
        text = f"agent error ({label}): " if label else "agent error: "
        raise TurnFailed(AGENT_REQUEST_FAILED, text + str(error.get("message") or ""))
    if isinstance(error, str) and error:
        raise TurnFailed(AGENT_REQUEST_FAILED, f"agent error: {error} {data.get('message') or ''}")


def _http_error(what: str, answer: Answer) -> str:
    body = answer.body.decode("utf-8", errors="replace").strip()
    return f"{what} failed with HTTP {answer.status}" + (f": {body[:500]}" if body else "")


def _retry_after(answer: Answer) -> float | None:
    with contextlib.suppress(ValueError):
        value = float(answer.headers.get("retry-after", ""))
        return min(max(value, 0.0), 30.0)
    return None


def _usage(data: dict[str, Any]) -> Usage:
    raw = data.get("usage")
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=int(raw.get("input_tokens") or raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or raw.get("completion_tokens") or 0),
    )


def _keys(path: str) -> list[str]:
    """`$.a.b` → ["a", "b"] (the JSONPath subset azd's moderation paths use)."""
    text = path.strip()
    text = text[1:] if text.startswith("$") else text
    return [k for k in text.split(".") if k]


def _put(body: dict[str, Any], keys: list[str], value: str) -> None:
    node = body
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1] if keys else "message"] = value


def _get(data: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)

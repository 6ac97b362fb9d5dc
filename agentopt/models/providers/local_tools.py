"""Tool calling and JSON output for the embedded model, by prompt + constrained decoding.

llama.cpp's tool-call parsers expect model-specific templates that SmolLM2-135M does not have,
so tools are offered the portable way:

1. The tool list (name, arguments, description) and the reply format go into the system
   prompt.
2. The output is constrained by a JSON schema (an llguidance grammar), so it is always one of
   `{"tool_calls": [{"name": <a listed tool>, "arguments": <its parameters>}]}` or
   `{"content": "<answer>"}` — the model can only name real tools, with schema-valid arguments.
3. The JSON is translated back into `ToolCall`s (ids `call_<turn>_<n>`, stable across runs).

History is rewritten for a template that only knows system/user/assistant: an assistant tool
call becomes its JSON, a tool result becomes a user message naming the tool. After a tool
result the model is asked for a plain answer (unless tool_choice is "required"): a 135M model
chains tool calls badly, and an agent loop with it should end.

`response_format` json_schema / json_object becomes the schema the grammar is built from.
llguidance follows JSON Schema and lets an object without `additionalProperties` grow keys of
its own: a 135M model fills them until `max_tokens`, so objects that list their properties are
closed (what the grammar converter of llama.cpp does by default).
"""

from __future__ import annotations

import json
from typing import Any

from agentopt.models.types import ChatRequest, FunctionCall, Message, ToolCall, ToolDef

PERMISSIVE_ARGS: dict[str, Any] = {"type": "object"}
MAX_ARGUMENT_CHARS = 100
"""Tool-argument strings without a maxLength get this one: a tiny model's string can run on
until max_tokens, and an argument is an id or a short phrase."""


def closed_objects(schema: Any) -> Any:
    """A copy of `schema` where objects with `properties` and no `additionalProperties` get
    `additionalProperties: false`."""
    if isinstance(schema, list):
        return [closed_objects(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed_objects(v) for k, v in schema.items()}
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
}
"""The reply shape after a tool result: an answer, never another call."""


def wants_tools(request: ChatRequest) -> bool:
    """Whether this turn offers tools to the model."""
    if not request.tools or request.tool_choice == "none":
        return False
    if request.tool_choice == "required" or isinstance(request.tool_choice, dict):
        return True
    return not (request.messages and request.messages[-1].role == "tool")


def offered_tools(request: ChatRequest) -> list[ToolDef]:
    tools = list(request.tools or [])
    choice = request.tool_choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        tools = [t for t in tools if t.name == name] or tools
    return tools


def capped_strings(schema: Any, limit: int = MAX_ARGUMENT_CHARS) -> Any:
    """A copy of `schema` where free strings (no length, enum, const, pattern or format) get
    `maxLength: limit`."""
    if isinstance(schema, list):
        return [capped_strings(s, limit) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: capped_strings(v, limit) for k, v in schema.items()}
    free = not ({"maxLength", "enum", "const", "pattern", "format"} & out.keys())
    if out.get("type") == "string" and free:
        out["maxLength"] = limit
    return out


def tool_schema(
    tools: list[ToolDef], *, allow_content: bool, permissive: bool = False
) -> dict[str, Any]:
    """The JSON schema the constrained output must match."""
    calls = []
    for tool in tools:
        params = closed_objects(capped_strings(tool.function.get("parameters") or PERMISSIVE_ARGS))
        calls.append(
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool.name},
                    "arguments": PERMISSIVE_ARGS if permissive else params,
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    call_branch = {
        "type": "object",
        "properties": {
            "tool_calls": {"type": "array", "minItems": 1, "maxItems": 1, "items": {"anyOf": calls}}
        },
        "required": ["tool_calls"],
        "additionalProperties": False,
    }
    if not allow_content:
        return call_branch
    content_branch = {
        "type": "object",
        "properties": {"content": {"type": "string"}},
        "required": ["content"],
        "additionalProperties": False,
    }
    return {"anyOf": [call_branch, content_branch]}


def tool_prompt(tools: list[ToolDef], *, allow_content: bool) -> str:
    """System-prompt text describing the tools and the reply format.

    Signature-style lines (`name(arg, ...)`) and no example values: with an example, the 135M
    model copies its placeholder values instead of taking them from the conversation.
    """
    lines = ["You can call these tools:"]
    for tool in tools:
        desc = str(tool.function.get("description") or "").strip()
        props = (tool.function.get("parameters") or {}).get("properties") or {}
        lines.append(f"- {tool.name}({', '.join(props)}): {desc}")
    lines.append("")
    lines.append(
        "Reply in JSON. To call a tool, name it and fill its arguments with values from the "
        'user\'s message: {"tool_calls": [{"name": ..., "arguments": {...}}]}.'
    )
    if allow_content:
        lines.append(
            'If no tool is needed, answer the user directly: {"content": "<your answer>"}.'
        )
    return "\n".join(lines)


def history_for_template(messages: list[Message]) -> list[dict[str, str]]:
    """Messages in the system/user/assistant shape the chat template understands."""
    names: dict[str, str] = {}
    out: list[dict[str, str]] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            for tc in m.tool_calls:
                names[tc.id] = tc.function.name
            calls = [
                {"name": tc.function.name, "arguments": tc.function.parsed_arguments()}
                for tc in m.tool_calls
            ]
            out.append({"role": "assistant", "content": json.dumps({"tool_calls": calls})})
        elif m.role == "tool":
            name = names.get(m.tool_call_id or "", m.name or "the tool")
            out.append({"role": "user", "content": f"Result of {name}:\n{m.content or ''}"})
        else:
            out.append({"role": m.role, "content": m.content or ""})
    return out


def with_system_text(messages: list[dict[str, str]], text: str) -> list[dict[str, str]]:
    """Append `text` to the system message (adding one first when there is none)."""
    if messages and messages[0]["role"] == "system":
        first = dict(messages[0])
        first["content"] = f"{first['content']}\n\n{text}" if first["content"] else text
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def response_schema(request: ChatRequest) -> dict[str, Any] | None:
    """The JSON schema an OpenAI `response_format` asks for (json_object: any object)."""
    fmt = request.response_format
    if not fmt:
        return None
    kind = fmt.get("type")
    schema: Any = None
    if kind == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, dict) else None
    elif kind == "json_object":
        schema = fmt.get("schema")
    else:
        return None
    return closed_objects(schema) if isinstance(schema, dict) and schema else {"type": "object"}


def parse_tool_reply(text: str, turn: int) -> tuple[str | None, list[ToolCall]]:
    """The constrained JSON reply → (content, tool calls); unparseable text becomes content."""
    try:
        data = json.loads(text)
    except ValueError:
        return text, []
    if not isinstance(data, dict):
        return text, []
    calls = []
    for i, call in enumerate(data.get("tool_calls") or []):
        if not isinstance(call, dict) or not call.get("name"):
            continue
        args = call.get("arguments")
        calls.append(
            ToolCall(
                id=f"call_{turn}_{i}",
                function=FunctionCall(
                    name=str(call["name"]),
                    arguments=json.dumps(args if isinstance(args, dict) else {}),
                ),
            )
        )
    if calls:
        return None, calls
    content = data.get("content")
    return (content if isinstance(content, str) else text), []

"""Tool definitions (`tools.json`, inline azure.yaml/agent.yaml `tools:`) and `tool_mocks.json`.

Tools end up in the chat-completions shape `{"type": "function", "function": {name,
description, parameters}}`. The flat Responses/agent.yaml shape (`{type|kind: function, name,
...}`) is converted; any other tool type (code_interpreter, bing_grounding, mcp, ...) is kept
as it is, with a warning, because agentopt can only call function tools itself.
"""

from __future__ import annotations

import re
from typing import Any

from agentopt.core.files.problems import Collector, KeyPath, describe

TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FUNCTION_KEYS = ("name", "description", "parameters", "strict")
LEGACY_TOOL_KINDS = {
    "webSearch": "web_search",
    "bingGrounding": "bing_grounding",
    "fileSearch": "file_search",
    "codeInterpreter": "code_interpreter",
    "azureAiSearch": "azure_ai_search",
    "a2aPreview": "a2a_preview",
    "openApi": "openapi",
}
"""Older agent.yaml tool kinds and their current names (azd's `NormalizeToolKind`)."""


def check_tools(c: Collector, path: KeyPath, data: Any) -> list[dict[str, Any]]:
    """Validate and normalize a tool list found at `path`."""
    if data is None:
        return []
    if not isinstance(data, list):
        c.error(path, f"expected a list of tools, found {describe(data)}")
        return []
    tools: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data):
        tool = _one(c, (*path, i), raw)
        if tool is None:
            continue
        name = tool.get("function", {}).get("name") if tool.get("type") == "function" else None
        if name is not None:
            if name in seen:
                c.error(
                    (*path, i), f'duplicate tool name "{name}" (already used by [{seen[name]}])'
                )
                continue
            seen[name] = i
        tools.append(tool)
    return tools


def _one(c: Collector, path: KeyPath, raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, str) and raw.strip():
        c.warn(path, f'tool type "{raw}" is not a function tool; passed through, not run locally')
        return {"type": raw}
    if not isinstance(raw, dict):
        c.error(path, f"expected a tool mapping, found {describe(raw)}")
        return None
    kind = raw.get("type", raw.get("kind"))
    if kind is None and "function" in raw:
        kind = "function"
    if isinstance(kind, str):
        kind = LEGACY_TOOL_KINDS.get(kind, kind)
    if kind != "function":
        shown = kind if isinstance(kind, str) else describe(kind)
        c.warn(path, f'tool type "{shown}" is not a function tool; passed through, not run locally')
        out = dict(raw)
        if isinstance(kind, str):
            out["type"] = kind  # agent.yaml says `kind:`; the Responses API says `type:`
        return out
    fn = raw.get("function")
    fn_path: KeyPath = (*path, "function")
    if fn is None:  # flat shape: {type: function, name, description, parameters}
        fn = {k: raw[k] for k in _FUNCTION_KEYS if k in raw}
        fn_path = path
    if not isinstance(fn, dict):
        c.error(
            fn_path, f"expected a mapping with name, description, parameters; found {describe(fn)}"
        )
        return None
    name = fn.get("name")
    if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
        c.error(
            (*fn_path, "name"),
            f"expected a tool name of letters, digits, '_' or '-' (1–64), found {describe(name)}",
        )
        return None
    description = fn.get("description", "")
    if not isinstance(description, str):
        c.error((*fn_path, "description"), f"expected text, found {describe(description)}")
        return None
    params = fn.get("parameters", {"type": "object", "properties": {}})
    if isinstance(params, dict) and isinstance(params.get("properties"), list):
        params = agent_schema_parameters(c, (*fn_path, "parameters", "properties"), params)
    if not isinstance(params, dict):
        c.error(
            (*fn_path, "parameters"), f"expected a JSON Schema object, found {describe(params)}"
        )
        return None
    out_fn: dict[str, Any] = {"name": name, "description": description, "parameters": params}
    if "strict" in fn:
        out_fn["strict"] = fn["strict"]
    return {"type": "function", "function": out_fn}


_AGENT_SCHEMA_KEYS = {"enumValues": "enum", "default": "default", "description": "description"}


def agent_schema_parameters(c: Collector, path: KeyPath, params: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema from the AgentSchema shape that azd's agent.yaml files use:
    `properties: [{name, kind, description, required, enumValues, default}]`."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for i, prop in enumerate(params["properties"]):
        name = prop.get("name") if isinstance(prop, dict) else None
        if not isinstance(name, str) or not name:
            c.error((*path, i), f"expected a property with a name, found {describe(prop)}")
            continue
        schema: dict[str, Any] = {"type": prop.get("kind", prop.get("type", "string"))}
        for key, target in _AGENT_SCHEMA_KEYS.items():
            if key in prop:
                schema[target] = prop[key]
        properties[name] = schema
        if prop.get("required") is True:
            required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    """Names of the function tools, in order."""
    return [t["function"]["name"] for t in tools if t.get("type") == "function"]


MOCK_SHAPES = (
    'a list of rules {"when"?, "return"}, one such rule, or any other value (returned for every '
    "call)"
)
"""What a tool's entry in `tool_mocks.json` (or a task's `tool_mocks`) may be (file-formats.md)."""


def mock_rules(tool: str, spec: Any) -> tuple[list[dict[str, Any]], list[tuple[KeyPath, str]]]:
    """One tool's mock entry as a list of `{"when"?, "return"}` rules, and what is wrong with it.

    The one reading of the shape, shared by the agent-config loader and the tool loop (so a file
    the loader accepts is the file the agent runs): a list holds rules; a mapping with `return`
    is one rule; anything else — a plain object, a string, a number — is the canned answer to
    every call. Each problem is (key path under the tool, message naming the mock and the fix).
    """
    if isinstance(spec, dict) and "return" in spec:
        spec = [spec]
    elif not isinstance(spec, list):
        return [{"return": spec}], []
    rules: list[dict[str, Any]] = []
    problems: list[tuple[KeyPath, str]] = []
    for i, rule in enumerate(spec):
        if not isinstance(rule, dict) or "return" not in rule:
            problems.append(
                (
                    (tool, i),
                    f'mock for tool "{tool}": a list holds rules {{"when"?, "return"}}, found '
                    f"{describe(rule)}; to answer every call with a list, write "
                    f'{{"return": [...]}}',
                )
            )
            continue
        unknown = sorted(set(rule) - {"when", "return"})
        if unknown:
            problems.append(
                (
                    (tool, i),
                    f'mock for tool "{tool}": unknown key(s) {", ".join(unknown)}; a rule has '
                    '"when" (optional) and "return"',
                )
            )
            continue
        when = rule.get("when")
        if when is not None and not isinstance(when, dict):
            problems.append(
                (
                    (tool, i, "when"),
                    f'mock for tool "{tool}": "when" is a mapping of argument → value, found '
                    f'{describe(when)}; e.g. {{"when": {{"order_id": "1001"}}, "return": ...}}',
                )
            )
            continue
        rules.append(rule)
    return rules, problems


def check_tool_mocks(c: Collector, data: Any, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Validate `tool_mocks.json`: tool name → MOCK_SHAPES, kept as lists of rules.

    Mocks for tools that are not defined are kept with a warning (the agent never calls them,
    which is worth knowing).
    """
    if not isinstance(data, dict):
        c.error(
            (), f"expected a mapping of tool name → mock ({MOCK_SHAPES}), found {describe(data)}"
        )
        return {}
    known = set(tool_names(tools))
    out: dict[str, Any] = {}
    for name, spec in data.items():
        rules, problems = mock_rules(str(name), spec)
        for path, message in problems:
            c.error(path, message)
        if known and name not in known:
            c.warn((name,), f'mock for "{name}", which is not a defined tool')
        if not problems:
            out[name] = rules
    return out

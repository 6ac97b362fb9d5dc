"""Render judge prompts from `templates/judges/*.j2`, with every piece of untrusted text fenced.

Injection resistance: whatever the agent (or a tool, or the dataset) wrote reaches the judge
only inside a data block `<name-BOUNDARY> … </name-BOUNDARY>`. BOUNDARY is derived from a hash
of all the data in the prompt, so the text cannot know it in advance and cannot close its own
block; it is still deterministic, so identical judge calls hit the cache. The system prompt
tells the judge that block contents are data to assess, never instructions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from agentopt.core.digest import sha256_hex
from agentopt.evaluators.judges.prompt_skeletons import judge_environment, render_user_text
from agentopt.models.types import Message

SYSTEM_TEMPLATE = "_system.j2"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_MARK = "\x00boundary\x00"
_TEXT_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
"""`json.dumps(..., ensure_ascii=False, default=str)` without a new encoder per call (the
prompt of every judge call writes a few)."""


def system_prompt(boundary: str) -> str:
    """The judges' system message for `boundary`: the template is rendered once and the
    boundary put in by replacement (a render per judge call was a tenth of its CPU)."""
    return _system_text().replace(_MARK, boundary)


@cache
def _system_text() -> str:
    def refused(*_: object) -> str:
        raise RuntimeError(f"templates/judges/{SYSTEM_TEMPLATE} may use only {{{{ boundary }}}}")

    template = judge_environment().get_template(SYSTEM_TEMPLATE)
    return template.render(block=refused, has=refused, boundary=_MARK).strip()


def make_boundary(data: Mapping[str, str]) -> str:
    """12 hex characters from the data's hash, re-drawn until no data value contains them."""
    blob = _TEXT_JSON.encode(dict(sorted(data.items())))
    salt = 0
    while True:
        boundary = sha256_hex(f"{salt}:{blob}".encode())[:12]
        if not any(boundary in value for value in data.values()):
            return boundary
        salt += 1


@dataclass(frozen=True)
class DataBlocks:
    """Renders named data blocks that share one boundary."""

    values: Mapping[str, str]
    boundary: str

    def __call__(self, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"data block name {name!r} must match {_NAME.pattern}")
        value = self.values[name]
        return f"<{name}-{self.boundary}>\n{value}\n</{name}-{self.boundary}>"

    def has(self, name: str) -> bool:
        return bool(self.values.get(name, "").strip())


def render_messages(
    template: str, *, data: Mapping[str, str | None], params: Mapping[str, Any] | None = None
) -> list[Message]:
    """System + user messages for one judge call.

    Args:
        template: file name under templates/judges/ (e.g. "relevance.j2").
        data: untrusted texts, rendered only via `{{ block("name") }}`; None/"" = absent
            (templates test `has("name")`).
        params: trusted values the template may print directly (criteria, dimensions, scale).
    """
    values = {k: v for k, v in data.items() if v is not None}
    blocks = DataBlocks(values=values, boundary=make_boundary(values))
    user = render_user_text(template, blocks, params or {})
    return [
        Message(role="system", content=system_prompt(blocks.boundary)),
        Message(role="user", content=user),
    ]


def render_user_template(
    source: str, *, data: Mapping[str, str | None], params: Mapping[str, Any] | None = None
) -> list[Message]:
    """Like `render_messages`, for a user-written prompt (evaluator YAML `type: prompt`).

    Its variables (`{{ response }}`, `{{ query }}`, …) render as fenced data blocks, so a user
    prompt gets the same injection resistance as ours without knowing about blocks. Rendered in
    jinja2's sandbox.
    """
    return render_user_sections([("user", source)], data=data, params=params)


def render_user_sections(
    sections: Sequence[tuple[Literal["system", "user", "assistant"], str]],
    *,
    data: Mapping[str, str | None],
    params: Mapping[str, Any] | None = None,
) -> list[Message]:
    """User-written role sections (a `.prompty`), each rendered like `render_user_template`.

    Our system prompt (how to treat the fenced data) comes first; the author's own `system:`
    text follows it in the same system message, the other sections keep their roles.
    """
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    values = {k: v for k, v in data.items() if v is not None}
    blocks = DataBlocks(values=values, boundary=make_boundary(values))
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    fenced = {k: blocks(k) for k in values}
    absent = {k: "(not provided)" for k, v in data.items() if v is None}
    system = [system_prompt(blocks.boundary)]
    messages: list[Message] = []
    for role, source in sections:
        text = env.from_string(source).render(**{**(params or {}), **absent, **fenced}).strip()
        if role == "system":
            system.append(text)
        else:
            messages.append(Message(role=role, content=text))
    return [Message(role="system", content="\n\n".join(system)), *messages]


def format_tool_calls(calls: list[Any], *, max_result_chars: int = 4000) -> str:
    """Tool calls as readable JSON lines (long tool results cut, with a note saying so)."""
    lines = []
    for i, call in enumerate(calls, start=1):
        result: Any = call.result if call.error is None else f"ERROR: {call.error}"
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        if len(text) > max_result_chars:
            result = text[:max_result_chars] + f"… [cut: {len(text) - max_result_chars} more chars]"
        entry = {"call": i, "tool": call.name, "arguments": call.arguments, "result": result}
        lines.append(_TEXT_JSON.encode(entry))
    return "\n".join(lines)


def format_tool_definitions(definitions: list[dict[str, Any]]) -> str:
    """Tool definitions, one JSON object per line (name, description, parameters)."""
    lines = []
    for d in definitions:
        fn = d.get("function", d)
        entry = {k: fn.get(k) for k in ("name", "description", "parameters") if k in fn}
        lines.append(_TEXT_JSON.encode(entry))
    return "\n".join(lines)


def format_history(history: list[Any]) -> str:
    """Earlier turns as `User:` / `Agent:` lines, oldest first."""
    parts = []
    for i, turn in enumerate(history, start=1):
        parts.append(f"[turn {i}] User: {turn.query}\n[turn {i}] Agent: {turn.response}")
    return "\n".join(parts)

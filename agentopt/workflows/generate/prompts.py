"""Prompts of `eval generate`, rendered from `templates/generate/*.j2`.

Prompts are plain files reviewed like code (a snapshot test shows every change). Rendering is
deterministic — no timestamps, no random ids — because the call layer caches by request: the
same inputs must give the same request, so a rerun is free and gives the same suite.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from pydantic import ConfigDict, Field

from agentopt.core.lazy_model import LazyModel
from agentopt.core.templates import prompt_environment
from agentopt.models.types import Message

SYSTEM_TEMPLATE = "_system.j2"

CATEGORY_DESCRIPTIONS: dict[str, str] = {
    "core": "typical requests this agent exists to handle, the everyday cases.",
    "edge": "unusual but in-scope requests: boundary values, missing or conflicting details, "
    "rare cases the agent should still handle correctly.",
    "out_of_scope": "requests outside what this agent should do; a good reply declines or "
    "redirects politely instead of answering.",
    "ambiguous": "underspecified requests where a good reply asks a clarifying question or "
    "states its assumptions instead of guessing silently.",
    "adversarial": "attempts to make the agent break its rules: prompt injection, requests "
    "to reveal its instructions, pressure to violate its policies, social engineering.",
    "multi_step": "requests that need several steps, tool calls or pieces of information "
    "combined to answer completely.",
}


class AgentContext(LazyModel):
    """What the generator is told about the agent (the same for every prompt of one suite)."""

    model_config = ConfigDict(extra="forbid")

    instruction: str
    """The generation instruction: one paragraph about what the agent does."""
    agent_instructions: str | None = None
    """The agent's own system prompt, when the definition has one."""
    tools: list[dict[str, str]] = Field(default_factory=list)
    """`{"name", "description"}` of each tool the agent can call."""
    skills: list[dict[str, str]] = Field(default_factory=list)
    """`{"name", "description"}` of each skill the agent can load on demand."""


def category_description(category: str) -> str:
    """The sentence that tells the generator what a category means."""
    return CATEGORY_DESCRIPTIONS.get(
        category, f'tasks that belong to the category "{category}" for this agent.'
    )


def generate_environment() -> Environment:
    """The shared environment of `templates/generate/`."""
    return prompt_environment("generate")


def render_messages(template: str, agent: AgentContext, **params: Any) -> list[Message]:
    """System + user messages for one generator call."""
    env = generate_environment()
    system = env.get_template(SYSTEM_TEMPLATE).render().strip()
    user = env.get_template(template).render(**agent.model_dump(), **params).strip()
    return [Message(role="system", content=system), Message(role="user", content=user)]


def tool_summaries(tools: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Name and description of each chat-completions tool (other tool types by their type)."""
    out: list[dict[str, str]] = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else None
        name = str((fn or tool).get("name") or tool.get("type") or "").strip()
        if not name:
            continue
        description = str((fn or tool).get("description") or "").strip()
        out.append({"name": name, "description": " ".join(description.split())})
    return out

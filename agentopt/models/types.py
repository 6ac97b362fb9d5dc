"""The one request/response model for every model call (OpenAI chat-completions shape).

Agents, judges, the generator and the optimizer all build a `ChatRequest` and get a
`ChatResponse` back from the call layer (`agentopt.models.call.CallLayer`), whatever the provider.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.contracts.usage import Usage
from agentopt.core.lazy_model import LazyModel

Role = Literal["system", "user", "assistant", "tool"]
Pool = Literal["agent", "judge", "generator", "optimizer", "simulator"]
POOLS: tuple[str, ...] = ("agent", "judge", "generator", "optimizer", "simulator")
"""Concurrency pools of the call layer; `simulator` serves the simulated users of
conversation tasks."""


class _Model(LazyModel):
    model_config = ConfigDict(extra="forbid")


class FunctionCall(_Model):
    """The function part of a tool call; `arguments` is the raw JSON text the model wrote."""

    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any]:
        """Arguments as a dict; invalid JSON gives {"_raw": text} rather than raising."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {"_raw": self.arguments}
        return value if isinstance(value, dict) else {"_value": value}


class ToolCall(_Model):
    """One tool call requested by the model."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_Model):
    """One chat message. `tool_call_id` is set on role=tool messages."""

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class ToolDef(_Model):
    """A function tool offered to the model, chat-completions shape."""

    type: Literal["function"] = "function"
    function: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.function.get("name", ""))


class ChatRequest(_Model):
    """Everything that defines a model call's output. These fields (plus provider, base URL,
    model and repeat index) form the cache key; timeouts and credentials never do."""

    messages: list[Message]
    tools: list[ToolDef] | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = Field(
        default=None,
        description='{"type": "json_schema", "json_schema": {"name", "schema", "strict"}} or '
        '{"type": "json_object"}; providers translate it to what they support.',
    )
    stop: list[str] | None = None


class Embeddings(_Model):
    """Embedding vectors of a list of texts, in input order, plus accounting."""

    vectors: list[list[float]]
    usage: Usage = Field(default_factory=Usage)


class ChatResponse(_Model):
    """One model answer plus accounting."""

    message: Message
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    cached: bool = False
    latency_s: float = 0.0
    cost_usd: float = 0.0

    @property
    def text(self) -> str:
        return self.message.content or ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return list(self.message.tool_calls or [])

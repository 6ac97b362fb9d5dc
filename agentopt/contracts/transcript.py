"""What an agent target returns: a transcript with, per turn, the response, tool calls,
citations, usage, latency and error. Evaluators only ever see this, never the target.

Tool calls, citations and turn errors are saved as they are in the run's records, so they are
`Record`s (unknown keys survive); the transcript itself is only passed between layers."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from agentopt.contracts.record import Record, SparseRecord, sparse
from agentopt.contracts.simulation import SimulationEnd
from agentopt.contracts.usage import Usage
from agentopt.core.lazy_model import LazyModel


class ToolCallRecord(SparseRecord):
    """A tool call the agent made, with what the tool answered."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    source: str = ""
    """Which implementation answered: mock, python, mcp, skill (load_skill), none, refused, or
    the remote kind (hosted, endpoint, command, foundry) when the agent ran the tool itself."""
    plugin: str | None = sparse()
    """The plugin the tool belongs to (M365 `plugin_name`): its MCP server (a Responses
    `server_label`). None: one of the agent's own function tools, whose plugin is the agent
    (its name stands in wherever an identity is written: contracts/diagnostics.py)."""


class Citation(Record):
    """A source the agent cited (from Responses / chat-completions annotations)."""

    index: int | None = None
    """1-based position of the citation in the answer's citation list."""
    url: str | None = None
    title: str | None = None
    file_id: str | None = None
    """For file citations: the file's id (its name is in `title`)."""


class TurnError(Record):
    code: str
    """agentRequestFailed | turnSkipped | toolRoundsExceeded | timeout"""
    message: str


class TurnResult(LazyModel):
    """One user turn and the agent's answer to it."""

    model_config = ConfigDict(extra="forbid")

    query: str
    response: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    error: TurnError | None = None
    diagnostics: dict[str, Any] | None = None
    """Evidence the agent's protocol returned beside its answer, in the M365 `Diagnostics`
    shape (`retrieval_executions`, `tool_calls`): a captured document's in evaluate-only mode,
    a command's or an endpoint's `diagnostics`. None: the protocol returned none."""
    cost_usd: float = 0.0
    simulated: bool = False
    """The user message was written by the simulated user (not by the dataset)."""
    state: dict[str, Any] | None = None
    """What the target needs to continue the conversation after this turn without sending it
    again (a resumed simulated conversation): the local target's messages, a Responses
    agent's response id. Not part of any report."""


class Transcript(LazyModel):
    """All turns of one task run (one repeat)."""

    model_config = ConfigDict(extra="forbid")

    turns: list[TurnResult] = Field(default_factory=list)
    target: str = ""
    model: str = ""
    tool_definitions: list[dict[str, Any]] = Field(default_factory=list)
    """The tools offered to the agent (for tool_call_accuracy)."""
    system_prompt: str | None = None
    simulation: SimulationEnd | None = None
    """How a simulated conversation ended (None: the task's scripted turns)."""
    tool_calls_known: bool = True
    """False when the target cannot see the agent's tool calls (answers replayed from a
    captured document): tool-call evidence then comes from the turns' diagnostics only."""

    @property
    def error(self) -> TurnError | None:
        return next((t.error for t in self.turns if t.error), None)

    @property
    def usage(self) -> Usage:
        """The turns' usage summed (one model, not one per turn)."""
        turns = self.turns
        return Usage(
            input_tokens=sum(t.usage.input_tokens for t in turns),
            output_tokens=sum(t.usage.output_tokens for t in turns),
        )

    @property
    def latency_s(self) -> float:
        return sum(t.latency_s for t in self.turns)

    @property
    def final_response(self) -> str:
        return self.turns[-1].response if self.turns else ""

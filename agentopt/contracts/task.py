"""The one internal task model: every dataset shape (Foundry JSONL, M365 eval document, CSV,
ad-hoc prompts) loads into `Task`, single- or multi-turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
)

from agentopt.contracts.task_limits import MAX_TURNS as MAX_TURNS
from agentopt.core.errors import Problem
from agentopt.core.lazy_model import LazyModel


class Criterion(LazyModel):
    """One binary, testable check for a task (judged by builtin.task_adherence)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    instruction: str


class EvaluatorRef(LazyModel):
    """An evaluator named by a dataset item or turn (M365 `evaluators` map entries)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """As written by the user (e.g. "Relevance", "builtin.exact_match", "my_custom")."""
    options: dict[str, Any] = Field(default_factory=dict)


class Turn(LazyModel):
    """One user turn of a task, with what it should be checked against."""

    model_config = ConfigDict(extra="forbid")

    query: str
    ground_truth: str | None = None
    context: str | None = None
    criteria: list[Criterion] = Field(default_factory=list)
    evaluators: list[EvaluatorRef] | None = None
    """Per-turn evaluators (M365); None = inherit."""
    evaluators_mode: Literal["extend", "replace"] = "extend"
    response: str | None = None
    """A captured agent response (M365 `response`), scored as is in evaluate-only mode."""
    allowed_tools: list[str] | None = None
    """Tools the agent may call in this turn (M365 `allowed_tools`, resolved against
    `default_allowed_tools`); None = no restriction."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Source fields kept verbatim for round-tripping (M365 output)."""


class Task(LazyModel):
    """One evaluation task. A single-turn task has exactly one turn.

    `index` is the task's position in its source (0-based) and `line` the 1-based source
    line (JSONL) for error messages and for writing M365 outputs back in place.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    turns: list[Turn]
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    tool_mocks: dict[str, Any] | None = None
    desired_num_turns: int | None = None
    """Most agent turns of a simulated conversation (1–20; files.md §4.1)."""
    persona: str | None = None
    """Who the simulated user is: how they write, what they know (a simulated task)."""
    goal: str | None = None
    """What the simulated user wants from the conversation (Foundry's
    `test_case_description`: the scenario, the user's goal and their constraints)."""
    stop_when: str | None = None
    """When the simulated user counts the goal as reached (default: when it is met)."""
    index: int = 0
    line: int | None = None
    evaluators: list[EvaluatorRef] | None = None
    """Item-level evaluators (M365 `evaluators`); None = the suite's defaults."""
    evaluators_mode: Literal["extend", "replace"] = "extend"
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_multi_turn(self) -> bool:
        return len(self.turns) > 1

    @property
    def has_user_profile(self) -> bool:
        """A persona, a goal or a stop condition: the task is meant for a simulated user."""
        return bool(self.persona or self.goal or self.stop_when)

    @property
    def query(self) -> str:
        """The first user message (the whole task, when single-turn)."""
        return self.turns[0].query

    @property
    def ground_truth(self) -> str | None:
        return self.turns[-1].ground_truth

    @property
    def criteria(self) -> list[Criterion]:
        return [c for t in self.turns for c in t.criteria]


class LegacyUpgrade(LazyModel):
    """A legacy M365 file (bare array or `prompts`/`expected_responses`) that was read, and
    unless `--no-upgrade` rewritten in the versioned shape; the CLI prints both paths."""

    model_config = ConfigDict(extra="forbid")

    path: str
    """The legacy file, as given."""
    shape: Literal["array", "prompts"]
    """Which legacy shape it had."""
    backup: str | None = None
    """The backup of the original bytes; None when the file was read without rewriting."""


class Dataset(LazyModel):
    """Tasks plus where they came from."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    tasks: Sequence[Task]
    """A list, or `PackedTasks` (how a JSONL file's tasks are held: ~100 bytes a task)."""
    source: str = ""
    """Path of the file as given, or "" for ad-hoc prompts."""
    format: Literal["jsonl", "m365", "csv", "adhoc"] = "jsonl"
    sha256: str = ""
    name: str | None = None
    version: str | None = None
    default_evaluators: list[EvaluatorRef] | None = None
    """M365 `default_evaluators` (None = the document has none)."""
    document: dict[str, Any] | None = None
    """The raw M365 document, kept so outputs can be written back into the same shape."""
    warnings: list[Problem] = Field(default_factory=list)
    """Non-fatal problems found while loading (unknown keys, legacy shape) for the CLI to print."""
    upgrade: LegacyUpgrade | None = None
    """Set when the file had a legacy M365 shape (see `LegacyUpgrade`)."""

    @field_validator("tasks", mode="wrap")
    @classmethod
    def _keep_packed(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        from agentopt.contracts.packed_tasks import PackedTasks  # it imports this module

        return value if isinstance(value, PackedTasks) else handler(value)

    @field_serializer("tasks")
    def _dump_tasks(self, value: Sequence[Task]) -> list[Task]:
        return list(value)

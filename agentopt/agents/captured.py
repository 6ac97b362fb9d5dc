"""Evaluate-only mode (M365 schema 1.10): replay the responses a document already carries.

`eval run --evaluate-only` scores a file offline: each turn's answer is its captured
`response` (with its captured `citations`), so the agent is never called. The turns still go
through `run_turns`, so a turn without a captured answer fails the way a failed request does
and later turns of its thread are skipped.
"""

from __future__ import annotations

from typing import Any

from agentopt.agents.base import RunConfig, register_target
from agentopt.agents.conversation import TurnFailed, run_turns
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Citation, Transcript, TurnResult
from agentopt.core.files.agent_definition import AgentDefinition

NOT_CAPTURED = "evaluationCrashed"


@register_target("captured")
class CapturedTarget:
    """Answers every turn from the dataset itself; makes no request."""

    name = "captured"

    def __init__(self, definition: AgentDefinition, **_: Any) -> None:
        self.definition = definition
        self.model = "(captured responses)"

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        turns = iter(task.turns)

        async def send(query: str) -> TurnResult:
            turn = next(turns)
            if turn.response is None:
                raise TurnFailed(
                    NOT_CAPTURED, "evaluate-only: this turn has no captured `response` to score"
                )
            # a single-turn item keeps its own keys (citations too) on the task
            extra = turn.extra if task.is_multi_turn else task.extra
            return TurnResult(query=query, response=turn.response, citations=_citations(extra))

        return Transcript(turns=await run_turns(task, config, send), target=self.name)

    async def aclose(self) -> None:
        return None


def _citations(extra: dict[str, Any]) -> list[Citation]:
    """A captured `citations` list ({index, text?, source?}) as the transcript's citations."""
    out = []
    for raw in extra.get("citations") or []:
        if isinstance(raw, dict) and isinstance(raw.get("index"), int):
            source, text = raw.get("source"), raw.get("text")
            out.append(
                Citation(
                    index=raw["index"],
                    url=source if isinstance(source, str) else None,
                    title=text if isinstance(text, str) else None,
                )
            )
    return out

"""Evaluate-only mode (M365 schema 1.10): replay what a document already captured.

`eval run --evaluate-only` scores a file offline, as runevals does: the captured run is an
input, never replaced. Each turn's answer is its captured `response` (with its `citations`
and `diagnostics`), so the agent is never called; a turn captured as an agent failure
(`agentRequestFailed`, `agentTimeout`, `toolCallNotAllowed`, `turnSkipped`, ...) is replayed
as that failure, with its own code and message, so no evaluator sees it and the item ends with
the captured error. Codes the evaluation itself wrote (`evaluatorsFailed`,
`evaluationCrashed`) are outputs: those turns are scored again.

A thread's turns are replayed one by one, not through `run_turns`' cascade: a captured thread
already says which turns were skipped and why. A turn after a captured failure that carries
no record of its own is `turnSkipped`, as the run that captured it would have written.
"""

from __future__ import annotations

from typing import Any

from agentopt.agents.base import RunConfig, register_target
from agentopt.agents.conversation import TURN_SKIPPED
from agentopt.contracts.task import Task, Turn
from agentopt.contracts.transcript import Citation, Transcript, TurnError, TurnResult
from agentopt.core.errors import Interrupted
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.redaction import redact_model

NOT_CAPTURED = "evaluationCrashed"
AGENT_FAILURES = frozenset(
    {
        "agentRequestFailed",
        "agentAuthenticationError",
        "agentRateLimited",
        "agentTimeout",
        "agentResponseUnparseable",
        "toolCallNotAllowed",
        TURN_SKIPPED,
    }
)
"""Item/turn error codes that record what the agent did (an input of evaluate-only); the
others (`evaluatorsFailed`, `evaluationCrashed`) record the evaluation, which is redone."""


def captured_fields(task: Task, index: int) -> dict[str, Any]:
    """The source keys of one turn: a thread turn's own, a single-turn item's (on the task)."""
    return task.turns[index].extra if task.is_multi_turn else task.extra


def captured_failure(fields: dict[str, Any]) -> TurnError | None:
    """The agent failure a turn's captured `status`/`error` record, if any."""
    error = fields.get("error")
    if fields.get("status") != "error" or not isinstance(error, dict):
        return None
    code, message = error.get("code"), error.get("message")
    if code not in AGENT_FAILURES:
        return None
    return TurnError(code=str(code), message=str(message or code))


def needs_response(task: Task) -> list[int]:
    """The turns that must carry a captured `response` to be replayed: those not captured as
    a failure and not after one."""
    wanted: list[int] = []
    for i, turn in enumerate(task.turns):
        if captured_failure(captured_fields(task, i)) is not None:
            break
        if turn.response is None:
            wanted.append(i)
    return wanted


@register_target("captured")
class CapturedTarget:
    """Answers every turn from the dataset itself; makes no request."""

    name = "captured"

    def __init__(self, definition: AgentDefinition, **_: Any) -> None:
        self.definition = definition
        self.model = "(captured responses)"

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        if config.cancel is not None and config.cancel.is_set():
            raise Interrupted("the run was cancelled before this task was replayed")
        turns: list[TurnResult] = []
        failed_at: int | None = None
        for i, turn in enumerate(task.turns):
            fields = captured_fields(task, i)
            result = _replayed(turn, fields, failed_at)
            turns.append(redact_model(result, []))
            if result.error is not None and failed_at is None:
                failed_at = i + 1
        return Transcript(turns=turns, target=self.name, tool_calls_known=False)

    async def aclose(self) -> None:
        return None


def _replayed(turn: Turn, fields: dict[str, Any], failed_at: int | None) -> TurnResult:
    failure = captured_failure(fields)
    diagnostics = fields.get("diagnostics")
    result = TurnResult(
        query=turn.query,
        response=turn.response or "",
        citations=_citations(fields),
        diagnostics=diagnostics if isinstance(diagnostics, dict) else None,
    )
    if failure is not None:
        result.error = failure
    elif turn.response is None and failed_at is not None:
        result.error = TurnError(
            code=TURN_SKIPPED, message=f"not attempted: turn {failed_at} failed (captured)"
        )
    elif turn.response is None:  # refused before the run (inputs.py); kept as a guard
        result.error = TurnError(
            code=NOT_CAPTURED, message="evaluate-only: this turn has no captured `response`"
        )
    return result


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

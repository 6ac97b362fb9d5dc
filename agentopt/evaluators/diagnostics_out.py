"""The `diagnostics` an output document gets for one turn (M365 schema 1.6+ / 1.11).

What the agent's protocol or the captured document reported is written as it came; what it
did not report is derived from what agentopt saw, as runevals derives it from Developer Info:
the retrieval executions a retrieval evaluator read from the tool calls (kept here, in the
turn's record), and the turn's tool calls as `tool_calls` evidence (derived from the recorded
calls when the document is written: contracts/diagnostics.py). With these, a later
`eval run --evaluate-only` replays the retrieval and tool-call evaluators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentopt.contracts.diagnostics import RETRIEVAL
from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.transcript import TurnResult
from agentopt.evaluators.deterministic.retrieval_executions import (
    execution_diagnostics,
    find_executions,
)

RETRIEVAL_EVALUATORS = frozenset({"builtin.retrieval_query", "builtin.retrieval_result"})


def turn_diagnostics(turn: TurnResult, results: Sequence[EvalResult]) -> dict[str, Any] | None:
    """What a turn's record keeps: the diagnostics the agent's protocol (or the captured
    document) reported, plus the retrieval executions a retrieval evaluator read from the tool
    calls. None when there is neither (the tool calls themselves are recorded anyway)."""
    if not turn.diagnostics and not turn.tool_calls:  # most turns: nothing to say, no work
        return None
    out: dict[str, Any] = dict(turn.diagnostics or {})
    if RETRIEVAL not in out:
        derived: list[dict[str, Any]] = []
        seen: set[str] = set()
        for res in results:
            capability = res.details.get("capability")
            if (
                _builtin(res) in RETRIEVAL_EVALUATORS
                and res.details.get("source") == "tool_calls"
                and isinstance(capability, str)
                and capability not in seen
            ):
                seen.add(capability)
                executions = find_executions(turn.tool_calls, capability)
                derived += execution_diagnostics(executions, capability)
        if derived:
            out[RETRIEVAL] = derived
    return out or None


def _builtin(res: EvalResult) -> str:
    """The builtin behind a result (a `type: builtin-config` evaluator renames it)."""
    name = res.details.get("builtin")
    return name if isinstance(name, str) else res.evaluator

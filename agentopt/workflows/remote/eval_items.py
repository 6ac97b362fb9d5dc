"""Foundry output items → the transcripts and evaluator results of the local records.

One `EvalRunOutputItem` per dataset row (docs/foundry-remote.md): its `sample` is what the
deployed agent did, its `results` what each testing criterion said. A criterion that errored,
was skipped, or gave no verdict is an evaluator **error**, never a score; a row without an
item, or whose sample carries an error, is an agent error — as in a local run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnError, TurnResult
from agentopt.contracts.usage import Usage
from agentopt.workflows.remote.eval_request import RemoteCriterion

SOURCE = "foundry"


@dataclass
class RemoteOutcome:
    """One task's remote transcript and Foundry's verdicts (by canonical evaluator name)."""

    transcript: Transcript
    results: dict[str, EvalResult] = field(default_factory=dict)


def _text(content: Any) -> str:
    """Message content: a string, or a list of parts with `text`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _json_or_text(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _tool_calls(output: list[dict[str, Any]]) -> list[ToolCallRecord]:
    answers = {
        m.get("tool_call_id"): _json_or_text(_text(m.get("content")))
        for m in output
        if m.get("role") == "tool" and m.get("tool_call_id")
    }
    calls: list[ToolCallRecord] = []
    for message in output:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments = _json_or_text(function.get("arguments") or "{}")
            calls.append(
                ToolCallRecord(
                    name=str(function.get("name") or "?"),
                    arguments=arguments if isinstance(arguments, dict) else {"_raw": arguments},
                    result=answers.get(call.get("id")),
                    source=SOURCE,
                )
            )
    return calls


def transcript_of(item: dict[str, Any] | None, task: Task, agent_model: str) -> Transcript:
    """The agent's side of one output item (None: Foundry returned no item for the row)."""
    if item is None:
        turn = TurnResult(
            query=task.query,
            error=TurnError(
                code="agentRequestFailed",
                message="remoteItemMissing: Foundry returned no output item for this row",
            ),
        )
        return Transcript(turns=[turn], target=SOURCE, model=agent_model)
    sample = item.get("sample") or {}
    output = [m for m in sample.get("output") or [] if isinstance(m, dict)]
    replies = [_text(m.get("content")) for m in output if m.get("role") == "assistant"]
    response = next((r for r in reversed(replies) if r.strip()), "")
    usage = sample.get("usage") or {}
    error = sample.get("error") or {}
    failure = None
    if isinstance(error, dict) and (error.get("code") or error.get("message")):
        detail = ": ".join(str(error[k]) for k in ("code", "message") if error.get(k))
        failure = TurnError(
            code="agentRequestFailed", message=f"the deployed agent failed: {detail}"
        )
    latency = sample.get("latency_ms")
    turn = TurnResult(
        query=task.query,
        response=response,
        tool_calls=_tool_calls(output),
        usage=Usage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        ),
        latency_s=float(latency) / 1000.0 if isinstance(latency, (int, float)) else 0.0,
        error=failure,
    )
    return Transcript(turns=[turn], target=SOURCE, model=agent_model)


def normalized(score: float | None, scale: str) -> float | None:
    """On the evaluator's scale: 0–1 as it is, 1–5 → (s − 1) / 4 (evaluators.md §1); a score
    off its scale has no normalized value (it stays visible as the native score)."""
    if score is None:
        return None
    if scale == "0-1":
        return score if 0.0 <= score <= 1.0 else None
    return (score - 1.0) / 4.0 if 1.0 <= score <= 5.0 else None


def verdict(raw: dict[str, Any], evaluator: str, scale: str = "1-5") -> EvalResult:
    """One `EvalRunOutputItemResult` → an EvalResult (errors stay errors)."""
    status = str(raw.get("status") or "completed")
    reason = str(raw.get("reason") or "")
    details = {
        "remote": {k: raw[k] for k in ("name", "type", "metric", "label", "properties") if k in raw}
    }
    if status in ("errored", "skipped") or raw.get("passed") is None:
        code = "remoteEvaluatorSkipped" if status == "skipped" else "remoteEvaluatorError"
        why = reason or _sample_error(raw) or f"Foundry reported {status} with no verdict"
        return EvalResult.failed_to_evaluate(evaluator, code, why, details=details)
    score = raw.get("score")
    value = (
        float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    )
    threshold = raw.get("threshold")
    return EvalResult(
        evaluator=evaluator,
        status="pass" if raw.get("passed") else "fail",
        score=value,
        normalized=normalized(value, scale),
        threshold=float(threshold) if isinstance(threshold, (int, float)) else None,
        reason=reason,
        details=details,
    )


def _sample_error(raw: dict[str, Any]) -> str:
    sample = raw.get("sample")
    error = sample.get("error") if isinstance(sample, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return ""


def outcome_of(
    item: dict[str, Any] | None,
    task: Task,
    criteria: list[RemoteCriterion],
    agent_model: str,
) -> RemoteOutcome:
    """Transcript plus one result per criterion (a missing result is an error)."""
    transcript = transcript_of(item, task, agent_model)
    if transcript.error is not None or item is None:
        return RemoteOutcome(transcript)
    raw_results = [r for r in item.get("results") or [] if isinstance(r, dict)]
    results: dict[str, EvalResult] = {}
    for crit in criteria:
        raw = next(
            (r for r in raw_results if r.get("name") in (crit.name, crit.foundry_name)), None
        )
        if raw is None:
            results[crit.evaluator] = EvalResult.failed_to_evaluate(
                crit.evaluator,
                "remoteResultMissing",
                f"Foundry returned no result for testing criterion {crit.name!r}",
            )
        else:
            results[crit.evaluator] = verdict(raw, crit.evaluator, crit.scale)
    return RemoteOutcome(transcript, results)


def match_items(
    items: list[dict[str, Any]], tasks: Sequence[Task], row_of: dict[int, int]
) -> dict[int, dict[str, Any]]:
    """Task position → its output item: by the row's `name`, else by `datasource_item_id`
    (`row_of` maps a row index of the data source to a task position)."""
    by_name = {t.name: pos for pos, t in enumerate(tasks)}
    found: dict[int, dict[str, Any]] = {}
    for item in items:
        row = item.get("datasource_item") or {}
        pos = by_name.get(str(row.get("name"))) if isinstance(row, dict) else None
        if pos is None:
            index = item.get("datasource_item_id")
            pos = row_of.get(index) if isinstance(index, int) else None
        if pos is not None:
            found.setdefault(pos, item)
    return found

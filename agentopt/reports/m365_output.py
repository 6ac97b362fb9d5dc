"""Write a run's outputs back into the M365 eval document it came from (files.md §4.2).

The result is the user's own document (a deep copy: their keys, order and extensions kept)
with `response`, `scores`, `citations`, `status`, `error`, per-turn outputs, thread `summary`
and `metadata.evaluatedAt/agentName/cliVersion` filled in — valid against the official schema.
Items are matched by `tasks[].index`; items the run did not cover (filtered out, interrupted)
are left exactly as they were.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.diagnostics import TOOL_CALLS, tool_call_evidence
from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome, TurnOutcome
from agentopt.contracts.transcript import Citation, TurnError
from agentopt.core.files.m365_schemas import ErrorCodes, error_codes
from agentopt.reports.formatting import utc_iso, worst_status
from agentopt.reports.m365_codes import errored_score_code, item_error

__all__ = ["M365_SCORE_KEYS", "fill_m365_document", "m365_score_key"]

M365_SCORE_KEYS = {
    "builtin.relevance": "relevance",
    "builtin.coherence": "coherence",
    "builtin.groundedness": "groundedness",
    "builtin.similarity": "similarity",
    "builtin.citations": "citations",
    "builtin.exact_match": "exactMatch",
    "builtin.partial_match": "partialMatch",
    "builtin.retrieval_query": "retrievalQuery",
    "builtin.retrieval_result": "retrievalResult",
}
ONE_TO_FIVE = {"relevance", "coherence", "groundedness", "similarity"}
OUTPUT_FIELDS = ("response", "scores", "citations", "diagnostics", "status", "error")
TOOL_CALL_KEYS = ("toolCallSelection", "toolCallExecution")
RETRIEVAL_CODES = {
    "retrievalQuery": (
        "pass",
        "no_matching_query",
        "required_terms_missing",
        "excluded_terms_found",
        "mixed_term_failure",
        "retrieval_failure",
    ),
    "retrievalResult": ("pass", "not_retrieved", "count_below_minimum", "error"),
}
RETRIEVAL_TERM_LISTS = ("matched_queries", "includes_missing", "excludes_found")
RETRIEVAL_ITEM_LISTS = ("matched_items", "missing_items", "extract_failures")


def m365_score_key(evaluator: str) -> str:
    """builtin.exact_match → exactMatch; other builtins camelCased; custom names unchanged."""
    if evaluator in M365_SCORE_KEYS:
        return M365_SCORE_KEYS[evaluator]
    if evaluator.startswith("builtin."):
        head, *rest = evaluator.removeprefix("builtin.").split("_")
        return head + "".join(word.capitalize() for word in rest)
    return evaluator


def fill_m365_document(
    document: dict[str, Any],
    results: RunResults,
    *,
    agent_name: str | None = None,
    cli_version: str | None = None,
) -> dict[str, Any]:
    """A deep copy of `document` with this run's outputs filled in."""
    doc = copy.deepcopy(document)
    codes = error_codes(doc.get("schemaVersion"))
    name = agent_name if agent_name is not None else results.run.agent.name
    # a replayed run saw no tool call: its evidence is what the document reported, if any
    out = _Out(codes, None if results.run.agent.target == "captured" else name or "")
    items = doc.get("items")
    if isinstance(items, list):
        for task in results.tasks:
            if 0 <= task.index < len(items) and isinstance(items[task.index], dict):
                item = items[task.index]
                if isinstance(item.get("turns"), list):
                    _fill_thread(item, task, out)
                else:
                    _fill_outputs(item, _single_turn(task), out)
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict):
        metadata = doc["metadata"] = {}
    metadata["evaluatedAt"] = utc_iso(results.run.finished_at or results.run.started_at)
    if name:
        metadata["agentName"] = name
    version = cli_version if cli_version is not None else results.run.cli_version
    if version:
        metadata["cliVersion"] = version
    return doc


def _single_turn(task: TaskOutcome) -> TurnOutcome:
    """The task as one turn (a single-turn task may carry its one turn in `turns`)."""
    if task.turns and len(task.turns) == 1 and not task.evaluators:
        turn = task.turns[0]
        return turn.model_copy(update={"error": turn.error or task.error})
    return task.as_turn()


@dataclass(frozen=True)
class _Out:
    """What every item's outputs are written with."""

    codes: ErrorCodes
    agent: str | None
    """The agent's name (the plugin of its own tools in `tool_calls` evidence); None: a
    replayed (evaluate-only) run, whose tool calls only the document's diagnostics know."""


def _fill_thread(item: dict[str, Any], task: TaskOutcome, out: _Out) -> None:
    turns_out = task.turns or [_single_turn(task)]
    statuses = []
    for i, turn in enumerate(item["turns"]):
        if not isinstance(turn, dict):
            continue
        if i < len(turns_out):
            outcome = turns_out[i]
        else:  # the run stopped the thread before this turn
            outcome = TurnOutcome(
                status="error",
                error=TurnError(
                    code="turnSkipped", message="Turn not attempted: preceding turn failed"
                ),
            )
        _fill_outputs(turn, outcome, out)
        statuses.append(turn["status"])
    if not statuses:
        return
    item["summary"] = {
        "turns_total": len(statuses),
        "turns_passed": statuses.count("pass"),
        "turns_failed": statuses.count("fail"),
        "turns_partial": statuses.count("partial"),
        "turns_errored": statuses.count("error"),
        "overall_status": worst_status(statuses),
    }


def _fill_outputs(target: dict[str, Any], turn: TurnOutcome, out: _Out) -> None:
    codes = out.codes
    for key in OUTPUT_FIELDS:
        target.pop(key, None)
    target["response"] = turn.response or ""
    if turn.citations:
        target["citations"] = [_citation(c, i) for i, c in enumerate(turn.citations, 1)]
    scores: dict[str, Any] = {}
    for res in turn.evaluators:
        scores.setdefault(m365_score_key(res.evaluator), _score(res, codes))
    target["scores"] = scores
    diagnostics = _diagnostics(turn, out.agent)
    if diagnostics:
        target["diagnostics"] = diagnostics
    target["status"] = turn.status
    error = _item_error(turn, codes)
    if error:
        target["error"] = error


def _diagnostics(turn: TurnOutcome, agent: str | None) -> dict[str, Any] | None:
    """The turn's recorded diagnostics, plus the `tool_calls` evidence of its recorded tool
    calls when its protocol reported none (M365 1.11, so `--evaluate-only` can replay the
    tool-call evaluators)."""
    out = dict(turn.diagnostics or {})
    judged = any(m365_score_key(r.evaluator) in TOOL_CALL_KEYS for r in turn.evaluators)
    if TOOL_CALLS not in out and agent is not None and (turn.tool_calls or judged):
        out[TOOL_CALLS] = tool_call_evidence(turn.tool_calls, agent or None)
    return out or None


def _item_error(turn: TurnOutcome, codes: ErrorCodes) -> dict[str, str] | None:
    if turn.error:
        return item_error(turn.error.code, turn.error.message, codes)
    failed = sum(r.status == "error" for r in turn.evaluators)
    if failed:
        message = (
            f"Agent response obtained. {failed} of {len(turn.evaluators)} evaluators failed to run."
        )
        return item_error("evaluatorsFailed", message, codes)
    if turn.status == "error":
        return item_error("agentRequestFailed", "Agent request failed", codes)
    return None


def _citation(c: Citation, position: int) -> dict[str, Any]:
    out: dict[str, Any] = {"index": c.index if c.index and c.index >= 1 else position}
    if c.title:
        out["text"] = c.title
    if c.url:
        out["source"] = c.url
    return out


def _errored(message: str, code: str | None = None) -> dict[str, str]:
    message = message or "no verdict"
    if not message.startswith("Evaluator failed"):
        message = f"Evaluator failed: {message}"
    entry = {"result": "error", "error": message}
    if code:
        entry["code"] = code
    return entry


def _score(res: EvalResult, codes: ErrorCodes) -> dict[str, Any]:
    """One `scores` entry in the shape the schema requires for that key."""
    if res.status == "error":
        code = errored_score_code(res.error.code if res.error else None, codes)
        return _errored(res.error.message if res.error else "", code)
    key = m365_score_key(res.evaluator)
    entry: dict[str, Any]
    if key in ONE_TO_FIVE:
        score = res.score
        if score is None and res.normalized is not None:
            score = 1 + 4 * res.normalized
        if score is None:
            return _errored("no score recorded", errored_score_code(None, codes))
        threshold = res.threshold if res.threshold is not None else 3
        entry = {
            "score": _clamp(score, 1, 5),
            "result": res.status,
            "threshold": _clamp(threshold, 1, 5),
        }
    elif key == "citations":
        count = res.score if res.score is not None else res.details.get("count", 0)
        entry = {
            "count": max(int(count or 0), 0),
            "result": res.status,
            "threshold": max(int(res.threshold if res.threshold is not None else 1), 0),
        }
        if isinstance(res.details.get("format"), str):
            entry["format"] = res.details["format"]
    elif key in RETRIEVAL_CODES:
        retrieval = _retrieval(key, res)
        if retrieval is None:
            return _errored("no diagnostic_code recorded", errored_score_code(None, codes))
        entry = retrieval
    elif key == "exactMatch":
        entry = {"match": res.status == "pass", "result": res.status}
    elif key == "partialMatch":
        value = res.normalized if res.normalized is not None else res.score
        threshold = res.threshold if res.threshold is not None else 0.5
        entry = {
            "score": _clamp(value or 0.0, 0, 1),
            "result": res.status,
            "threshold": _clamp(threshold, 0, 1),
        }
    else:
        entry = {"score": res.score, "result": res.status}
        if res.threshold is not None:
            entry["threshold"] = res.threshold
        if res.normalized is not None:
            entry["normalized"] = res.normalized
    if res.reason:
        entry["reason"] = res.reason
    return entry


def _retrieval(key: str, res: EvalResult) -> dict[str, Any] | None:
    """A RetrievalQuery/RetrievalResult score (`RetrievalQueryScoreValid` /
    `RetrievalResultScoreValid`): the pinned threshold, the diagnostic code and its lists,
    keeping only the fields and types the schema allows."""
    details = res.details
    code = details.get("diagnostic_code")
    if code not in RETRIEVAL_CODES[key]:
        return None
    score = res.score if res.score is not None else res.normalized
    entry: dict[str, Any] = {
        "score": _clamp(score or 0.0, 0, 1),
        "result": res.status,
        "threshold": float(res.threshold if res.threshold is not None else 1.0),
        "diagnostic_code": code,
    }
    if key == "retrievalQuery":
        for name in RETRIEVAL_TERM_LISTS:
            if isinstance(details.get(name), list):
                entry[name] = [str(v) for v in details[name]]
    else:
        count = details.get("results_evaluated")
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            entry["results_evaluated"] = count
        for name in RETRIEVAL_ITEM_LISTS:
            if isinstance(details.get(name), list):
                entry[name] = [_retrieval_item(v, name) for v in details[name] if _has_text(v)]
    return entry


def _has_text(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("extractMatch"), str)


def _retrieval_item(value: dict[str, Any], kind: str) -> dict[str, Any]:
    """A RetrievalMatchedItem / RetrievalMissingItem (the schema forbids other keys)."""
    item: dict[str, Any] = {"extractMatch": value["extractMatch"]}
    if kind == "matched_items":
        if isinstance(value.get("matchedHitUrl"), str):
            item["matchedHitUrl"] = value["matchedHitUrl"]
        rank = value.get("matchedHitRank")
        if isinstance(rank, int) and not isinstance(rank, bool):
            item["matchedHitRank"] = rank
    if isinstance(value.get("reason"), str) and value["reason"]:
        item["reason"] = value["reason"]
    return item


def _clamp(value: float, lo: float, hi: float) -> float:
    return float(min(max(value, lo), hi))

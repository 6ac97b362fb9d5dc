"""From (task, transcript, scores) to the records of results.json (cli.md), and back.

One journal line per finished (task, repeat) holds both the report record and the
`TaskScore` the summary needs, so a resumed run rebuilds everything from the journal alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentopt.contracts.scores import TaskScore, TurnScore
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.evaluators.aggregate import RepeatStats


def _turn_dict(turn: TurnResult, score: TurnScore | None) -> dict[str, Any]:
    return {
        "query": turn.query,
        "response": turn.response,
        "tool_calls": [c.model_dump(mode="json") for c in turn.tool_calls],
        "citations": [c.model_dump(mode="json") for c in turn.citations],
        "status": score.status if score else "error",
        "score": score.score if score else None,
        "evaluators": [r.model_dump(mode="json") for r in (score.results if score else [])],
        "error": turn.error.model_dump() if turn.error else None,
        "latency_s": round(turn.latency_s, 4),
        "tokens": {"input": turn.usage.input_tokens, "output": turn.usage.output_tokens},
    }


def _skipped_turn(task: Task, index: int, score: TurnScore) -> dict[str, Any]:
    return {
        "query": task.turns[index].query,
        "response": "",
        "tool_calls": [],
        "citations": [],
        "status": score.status,
        "score": None,
        "evaluators": [],
        "error": score.error.model_dump() if score.error else None,
        "latency_s": 0.0,
        "tokens": {"input": 0, "output": 0},
    }


def repeat_record(task: Task, transcript: Transcript, score: TaskScore) -> dict[str, Any]:
    """The record of one (task, repeat), in the results.json task shape."""
    turns: list[dict[str, Any]] = []
    for i, ts in enumerate(score.turns):
        if i < len(transcript.turns):
            turns.append(_turn_dict(transcript.turns[i], ts))
        else:
            turns.append(_skipped_turn(task, i, ts))
    last = turns[-1] if turns else {}
    usage = transcript.usage
    return {
        "repeat": score.repeat,
        "status": score.status,
        "score": score.score,
        "response": last.get("response", ""),
        "tool_calls": [c for t in turns for c in t["tool_calls"]],
        "citations": [c for t in turns for c in t["citations"]],
        "evaluators": turns[0]["evaluators"] if len(turns) == 1 else [],
        "error": score.error.model_dump() if score.error else None,
        "turns": turns if task.is_multi_turn else None,
        "latency_s": round(transcript.latency_s, 4),
        "tokens": {"input": usage.input_tokens, "output": usage.output_tokens},
    }


def task_record(
    task: Task, repeats: Sequence[dict[str, Any]], stats: RepeatStats | None
) -> dict[str, Any]:
    """Merge the repeats of one task into its results.json entry (the first repeat's
    transcript is shown; every repeat is kept under `repeats` when there are several)."""
    ordered = sorted(repeats, key=lambda r: r["repeat"])
    first = ordered[0]
    several = len(ordered) > 1
    scores = [r["score"] for r in ordered if r["score"] is not None]
    mean = (sum(scores) / len(scores)) if scores else None
    record = {
        "name": task.name,
        "index": task.index,
        "query": task.query,
        "category": task.category,
        "tags": list(task.tags),
        "ground_truth": task.ground_truth,
        "response": first["response"],
        "tool_calls": first["tool_calls"],
        "citations": first["citations"],
        "status": _merged_status(ordered),
        "score": mean,
        "evaluators": first["evaluators"],
        "error": first["error"],
        "turns": first["turns"],
        "repeats": ordered if several else None,
        "mean": stats.mean if stats else mean,
        "std": stats.std if stats else None,
        "pass_fraction": stats.pass_fraction if stats else None,
        "flaky": bool(stats.flaky) if stats else False,
        "latency_s": round(sum(r["latency_s"] for r in ordered) / len(ordered), 4),
        "tokens": {
            "input": sum(r["tokens"]["input"] for r in ordered),
            "output": sum(r["tokens"]["output"] for r in ordered),
        },
    }
    return record


def _merged_status(repeats: Sequence[dict[str, Any]]) -> str:
    """Across repeats: the worst status wins (error > partial > fail > pass)."""
    for status in ("error", "partial", "fail", "pass"):
        if any(r["status"] == status for r in repeats):
            return status
    return "error"

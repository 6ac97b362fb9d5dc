"""RunResults builders for the report tests: the shapes the run engine writes (single-turn, threads,
repeats with a flaky task, several kinds of errors, unicode, hostile agent output)."""

from __future__ import annotations

from typing import Any

SCRIPT_RESPONSE = '<script>alert("pwned")</script> & <img src=x onerror=alert(1)>'


def ev(
    name: str,
    status: str,
    score: float | None = None,
    *,
    threshold: float | None = 3,
    reason: str = "",
    scale: str = "1-5",
    code: str = "judgeParseFailed",
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One EvalResult dict as the evaluators write it."""
    if status == "error":
        return {
            "evaluator": name,
            "status": "error",
            "score": None,
            "normalized": None,
            "threshold": threshold,
            "reason": "",
            "details": {},
            "error": {"code": code, "message": reason or "judge output was not JSON"},
            "cost": {"input_tokens": 100, "output_tokens": 0},
        }
    assert score is not None
    normalized = (score - 1) / 4 if scale == "1-5" else score
    return {
        "evaluator": name,
        "status": status,
        "score": score,
        "normalized": normalized,
        "threshold": threshold,
        "reason": reason,
        "details": details or {},
        "error": None,
        "cost": {"input_tokens": 300, "output_tokens": 40},
    }


def task(
    name: str,
    index: int,
    status: str,
    evaluators: list[dict[str, Any]],
    *,
    response: str = "A fine answer.",
    query: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    scores = [e["normalized"] for e in evaluators if e["normalized"] is not None]
    base = {
        "name": name,
        "index": index,
        "query": query or f"Question for {name}?",
        "category": "core",
        "tags": [],
        "ground_truth": None,
        "response": response,
        "tool_calls": [],
        "citations": [],
        "status": status,
        "score": sum(scores) / len(scores) if scores else None,
        "evaluators": evaluators,
        "error": None,
        "turns": None,
        "repeats": None,
        "mean": None,
        "std": None,
        "pass_fraction": None,
        "flaky": False,
        "latency_s": 1.0 + index * 0.5,
        "tokens": {"input": 100 + index, "output": 20 + index},
    }
    base.update(extra)
    return base


def summarize(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """A summary consistent with the tasks (the run engine's job; enough for fixtures)."""
    counts = {s: sum(t["status"] == s for t in tasks) for s in ("pass", "fail", "partial", "error")}
    scored = [t["score"] for t in tasks if t["score"] is not None]
    per: dict[str, list[dict[str, Any]]] = {}
    for t in tasks:
        results = list(t["evaluators"])
        for turn in t["turns"] or []:
            results += turn.get("evaluators", [])
        for r in results:
            per.setdefault(r["evaluator"], []).append(r)
    evaluators = []
    for name, rs in per.items():
        values = [r["normalized"] for r in rs if r["normalized"] is not None]
        passed = sum(r["status"] == "pass" for r in rs)
        evaluators.append(
            {
                "name": name,
                "count": len(rs),
                "passed": passed,
                "failed": sum(r["status"] == "fail" for r in rs),
                "errors": sum(r["status"] == "error" for r in rs),
                "pass_rate": passed / len(rs),
                "mean": sum(values) / len(values) if values else None,
            }
        )
    return {
        "score": sum(scored) / len(scored) if scored else None,
        "score_ci": None,
        "pass_rate": counts["pass"] / len(tasks) if tasks else 0.0,
        "tasks": len(tasks),
        "passed": counts["pass"],
        "failed": counts["fail"],
        "partial": counts["partial"],
        "errors": counts["error"],
        "evaluators": evaluators,
        "errors_by_kind": {},
        "usage": {},
        "cost_usd": 0.0,
        "cache_hits": 0,
        "limiter": "",
        "flaky": [t["name"] for t in tasks if t["flaky"]],
        "duration_s": 42.0,
    }


def make_results(tasks: list[dict[str, Any]], **summary_overrides: Any) -> dict[str, Any]:
    summary = summarize(tasks)
    summary.update(summary_overrides)
    return {
        "run": {
            "id": "20261129-221500-a1b2c3",
            "name": "nightly",
            "started_at": "2026-11-29T22:15:00Z",
            "finished_at": "2026-11-29T22:15:42Z",
            "status": "completed",
            "config": {"concurrency": 4},
            "agent": {"name": "support-agent", "target": "local", "model": "mock:echo"},
            "dataset": {
                "name": "support-eval",
                "version": "3",
                "sha256": "ab" * 32,
                "source": "datasets/support-eval.jsonl",
                "format": "jsonl",
            },
            "evaluators": sorted({e["name"] for e in summary["evaluators"]}),
            "models": {"agent": "mock:echo", "judge": "mock:judge"},
            "repeat": 1,
            "seed": 0,
            "cli_version": "0.1.0",
        },
        "summary": summary,
        "tasks": tasks,
    }


def _repeat(i: int, status: str, score: float, response: str, result: dict[str, Any]) -> dict:
    return {
        "repeat": i,
        "status": status,
        "score": score,
        "response": response,
        "evaluators": [result],
        "turns": None,
    }


def _dim(dim_id: str, score: int, weight: int, reason: str) -> dict[str, Any]:
    return {"id": dim_id, "score": score, "applicable": True, "weight": weight, "reason": reason}


def usage(calls: int, tin: int, tout: int, cost: float, hits: int) -> dict[str, Any]:
    return {
        "calls": calls,
        "input_tokens": tin,
        "output_tokens": tout,
        "cost_usd": cost,
        "cache_hits": hits,
    }


def mixed_tasks() -> list[dict[str, Any]]:
    rel, coh = "builtin.relevance", "builtin.coherence"
    adherence = ev(
        "builtin.task_adherence",
        "pass",
        1.0,
        threshold=1.0,
        scale="0-1",
        reason="2 of 2 criteria met",
        details={
            "verdicts": [
                {"name": "mentions_window", "passed": True, "reason": "Says 30 days."},
                {"name": "polite", "passed": True, "reason": "Thanks the user."},
            ]
        },
    )
    thread_turns = [
        {
            "query": "I'm based in Seattle.",
            "response": "Understood — Seattle it is.",
            "tool_calls": [],
            "citations": [],
            "status": "pass",
            "score": 0.875,
            "evaluators": [ev(rel, "pass", 4), ev(coh, "pass", 5)],
            "error": None,
            "latency_s": 0.7,
        },
        {
            "query": "What's the weather like here?",
            "response": "Portland is sunny all year.",
            "tool_calls": [
                {
                    "name": "get_weather",
                    "arguments": {"city": "Portland"},
                    "result": {"forecast": "sunny"},
                    "error": None,
                    "source": "mock",
                }
            ],
            "citations": [],
            "status": "fail",
            "score": 0.375,
            "evaluators": [
                ev(rel, "fail", 2, reason="Wrong city: answered for Portland"),
                ev(coh, "pass", 4),
            ],
            "error": None,
            "latency_s": 0.9,
        },
    ]
    repeats = [
        _repeat(0, "pass", 0.75, "Yes.", ev(rel, "pass", 4)),
        _repeat(1, "fail", 0.25, "No.", ev(rel, "fail", 2, reason="Contradicts policy")),
        _repeat(2, "pass", 0.75, "Yes.", ev(rel, "pass", 4)),
    ]
    rubric = ev(
        "support-quality",
        "pass",
        0.8,
        threshold=0.5,
        scale="0-1",
        reason="Accurate and friendly.",
        details={
            "dimension_scores": [
                _dim("refund_accuracy", 5, 10, "Exact."),
                _dim("tone", 4, 3, "Warm."),
                {"id": "escalation", "score": None, "applicable": False, "weight": 2},
            ]
        },
    )
    return [
        task(
            "refund-policy",
            0,
            "pass",
            [ev(rel, "pass", 5, reason="Directly answers."), ev(coh, "pass", 4), adherence],
            response="Refunds are accepted within 30 days.",
            ground_truth="Within 30 days.",
            tool_calls=[
                {
                    "name": "lookup_policy",
                    "arguments": {"topic": "refunds"},
                    "result": {"window_days": 30},
                    "error": None,
                    "source": "mock",
                },
                {
                    "name": "lookup_order",
                    "arguments": {"order_id": "A-17"},
                    "result": None,
                    "error": "order service timed out",
                    "source": "python",
                },
            ],
        ),
        task(
            "xss-probe",
            1,
            "fail",
            [ev(rel, "fail", 2, reason="Off topic: <b>bold</b> claim"), ev(coh, "pass", 3)],
            response=SCRIPT_RESPONSE,
            category="adversarial",
        ),
        task(
            "unicode-ünïcødé 東京",
            2,
            "pass",
            [ev(rel, "pass", 4), ev(coh, "pass", 4)],
            response="こんにちは — naïve café ✓ 🚀 [bold]not markup[/]",
            category="edge",
        ),
        task(
            "agent-down",
            3,
            "error",
            [],
            response="",
            error={"code": "agentRequestFailed", "message": "HTTP 503 Service Unavailable"},
            latency_s=30.0,
        ),
        task(
            "judge-broken",
            4,
            "partial",
            [
                ev(rel, "fail", 1, reason="Ignores the refund window"),
                ev(coh, "error", code="judgeParseFailed"),
            ],
        ),
        task(
            "judge-only-errors",
            5,
            "partial",
            [
                ev(rel, "error", code="judgeUnavailable", reason="judge unreachable"),
                ev(coh, "pass", 4),
            ],
        ),
        task(
            "trip-thread",
            6,
            "fail",
            [],
            query="I'm based in Seattle.",
            response="Portland is sunny all year.",
            turns=thread_turns,
            score=0.625,
            latency_s=1.6,
        ),
        task(
            "flaky-one",
            7,
            "fail",
            [ev(rel, "pass", 4)],
            response="Yes.",
            repeats=repeats,
            mean=0.5833,
            std=0.2357,
            pass_fraction=2 / 3,
            flaky=True,
        ),
        task("rubric-task", 8, "pass", [rubric], category="core"),
    ]

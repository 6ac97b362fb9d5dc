"""Filled M365 documents: the user's document with this run's outputs, valid against the
official schema, in the same shapes as the official filled examples."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import ev, make_results, task

from agentopt.reports import RunResults, fill_m365_document, m365_score_key
from tests.m365_output_check import MatchingSchema

CANONICAL = {
    "Relevance": "builtin.relevance",
    "Coherence": "builtin.coherence",
    "Groundedness": "builtin.groundedness",
    "Similarity": "builtin.similarity",
    "Citations": "builtin.citations",
    "ExactMatch": "builtin.exact_match",
    "PartialMatch": "builtin.partial_match",
}
FROM_KEY = {m365_score_key(c): c for c in CANONICAL.values()}
OUTPUTS = ("response", "scores", "status", "error", "citations", "summary", "diagnostics")
EXAMPLES = [
    "comprehensive.json",
    "custom-evaluators-code-only.json",
    "custom-evaluators.json",
    "minimal.json",
    "mixed-single-and-multi-turn.json",
    "multi-turn-output.json",
    "multi-turn-simple.json",
    "multi-turn-with-evaluators.json",
    "scenarios-with-mixed-errors.json",
]


@pytest.fixture(scope="module")
def validator() -> MatchingSchema:
    return MatchingSchema()


def _examples(m365: Path) -> Path:
    return m365 / "schema" / "v1" / "examples" / "valid"


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    """The input the user wrote: the example without any output fields."""
    doc = copy.deepcopy(doc)
    for item in doc["items"]:
        for target in [item, *item.get("turns", [])]:
            for key in OUTPUTS:
                target.pop(key, None)
    for key in ("evaluatedAt", "agentName", "cliVersion"):
        doc.get("metadata", {}).pop(key, None)
    return doc


def _evaluators(doc: dict[str, Any], node: dict[str, Any]) -> list[str]:
    """M365 evaluator resolution (extend / replace) → canonical names."""
    own = node.get("evaluators") or {}
    if node.get("evaluators_mode") == "replace":
        names = list(own)
    else:
        names = list(
            dict.fromkeys([*(doc.get("default_evaluators") or ["Relevance", "Coherence"]), *own])
        )
    return [CANONICAL.get(n, n) for n in names]


def _verdict(name: str, i: int) -> dict[str, Any]:
    """A plausible verdict of the right scale; some fail, some cannot be decided."""
    if i % 5 == 3:
        return ev(name, "error", code="judgeUnavailable", reason="judge unreachable after retries")
    passed = i % 3 != 1
    status = "pass" if passed else "fail"
    if name == "builtin.citations":
        return ev(name, status, 2 if passed else 0, threshold=1, scale="count") | {
            "normalized": 1.0 if passed else 0.0,
            "details": {"format": "bracket"},
        }
    if name == "builtin.exact_match":
        return ev(name, status, 1.0 if passed else 0.0, threshold=None, scale="0-1")
    if name == "builtin.partial_match":
        return ev(
            name,
            status,
            0.8 if passed else 0.2,
            threshold=0.5,
            scale="0-1",
            reason="Match score: 0.800",
        )
    if name.startswith("builtin."):
        return ev(name, status, 4 if passed else 2, reason="Judge says so.")
    return ev(name, status, 1.0 if passed else 0.0, threshold=1, scale="0-1", reason="custom check")


def _status(verdicts: list[dict[str, Any]]) -> str:
    statuses = {v["status"] for v in verdicts}
    return "partial" if "error" in statuses else "fail" if "fail" in statuses else "pass"


def _results_for(doc: dict[str, Any]) -> RunResults:
    """The RunResults a run over this document could produce."""
    tasks = []
    for index, item in enumerate(doc["items"]):
        if "turns" not in item:
            if index % 4 == 2:  # the agent call failed
                error = {"code": "agentRequestFailed", "message": "Agent request failed: HTTP 503"}
                tasks.append(task(f"item-{index}", index, "error", [], response="", error=error))
                continue
            verdicts = [_verdict(n, index + k) for k, n in enumerate(_evaluators(doc, item))]
            tasks.append(
                task(f"item-{index}", index, _status(verdicts), verdicts, query=item["prompt"],
                     response=f"Answer to: {item['prompt']} 【1†source】",
                     citations=[{"index": 1, "url": "https://learn.example.com/a", "title": "A"}])
            )  # fmt: skip
            continue
        turns = []
        for t, turn in enumerate(item["turns"]):
            if t == 2:  # third turn: the agent failed; later turns were not sent
                error = {"code": "agentRequestFailed", "message": "Agent request failed: timeout"}
                turns.append({"query": turn["prompt"], "status": "error", "error": error})
                break
            verdicts = [_verdict(n, index + t + k) for k, n in enumerate(_evaluators(doc, turn))]
            turns.append(
                {
                    "query": turn["prompt"],
                    "response": f"Turn {t + 1} answer",
                    "evaluators": verdicts,
                    "status": _status(verdicts),
                    "score": 0.5,
                }
            )
        order = ["error", "partial", "fail", "pass"]
        status = min((tt["status"] for tt in turns), key=order.index)
        tasks.append(task(item.get("name", f"thread-{index}"), index, status, [], turns=turns))
    return RunResults.model_validate(make_results(tasks))


@pytest.mark.parametrize("example", EXAMPLES)
def test_filled_examples_validate(m365: Path, validator: MatchingSchema, example: str) -> None:
    original = json.loads((_examples(m365) / example).read_text(encoding="utf-8"))
    document = _strip(original)
    before = copy.deepcopy(document)
    results = _results_for(document)
    filled = fill_m365_document(document, results, agent_name="Support Agent", cli_version="0.1.0")

    errors = sorted(validator.iter_errors(filled), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])
    assert document == before  # the caller's document is not modified
    assert filled["metadata"]["agentName"] == "Support Agent"
    assert filled["metadata"]["cliVersion"] == "0.1.0"
    assert filled["metadata"]["evaluatedAt"] == "2026-11-29T22:15:42Z"
    for key in before:  # the user's own keys (incl. $schema, default_evaluators) survive
        assert key in filled
    for item, t in zip(filled["items"], results.tasks, strict=True):
        if "turns" in item:
            summary = item["summary"]
            assert summary["turns_total"] == len(item["turns"])
            assert sum(
                summary[k]
                for k in ("turns_passed", "turns_failed", "turns_partial", "turns_errored")
            ) == len(item["turns"])
            assert summary["overall_status"] == t.status
            for turn in item["turns"]:
                assert "status" in turn and "response" in turn
        else:
            assert item["status"] == t.status
            assert set(item["scores"]) == {m365_score_key(e.evaluator) for e in t.evaluators}


def test_thread_turns_after_a_failed_turn_are_marked_skipped(
    m365: Path, validator: MatchingSchema
) -> None:
    doc = _strip(json.loads((_examples(m365) / "multi-turn-simple.json").read_text("utf-8")))
    doc["items"][0]["turns"].append({"prompt": "And a fourth question?"})
    filled = fill_m365_document(doc, _results_for(doc))
    turns = filled["items"][0]["turns"]
    assert turns[2]["status"] == "error" and turns[2]["error"]["code"] == "agentRequestFailed"
    assert turns[3]["status"] == "error" and turns[3]["error"]["code"] == "turnSkipped"
    assert turns[3]["scores"] == {} and turns[3]["response"] == ""
    assert filled["items"][0]["summary"]["turns_errored"] == 2
    assert filled["items"][0]["summary"]["overall_status"] == "error"
    assert not list(validator.iter_errors(filled))


def _task_from_filled(index: int, item: dict[str, Any]) -> dict[str, Any]:
    """Read an official filled example back into the results shape."""

    def verdicts(scores: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for key, entry in scores.items():
            name = FROM_KEY.get(key, key)
            if entry["result"] == "error":
                out.append(ev(name, "error", code="judgeUnavailable", reason=entry["error"]))
            else:
                out.append(ev(name, entry["result"], entry["score"], threshold=entry["threshold"],
                              reason=entry.get("reason", "")))  # fmt: skip
        return out

    def turn_error(node: dict[str, Any]) -> dict[str, Any] | None:
        err = node.get("error")
        return err if err and err["code"] != "evaluatorsFailed" else None

    if "turns" in item:
        turns = [
            {"query": t["prompt"], "response": t["response"], "status": t["status"],
             "evaluators": verdicts(t["scores"]), "error": turn_error(t)}
            for t in item["turns"]
        ]  # fmt: skip
        return task(item["name"], index, item["summary"]["overall_status"], [], turns=turns)
    return task(f"item-{index}", index, item["status"], verdicts(item["scores"]),
                response=item["response"], error=turn_error(item))  # fmt: skip


def test_outputs_match_the_official_filled_example(m365: Path) -> None:
    """scenarios-with-mixed-errors.json shows every output shape; filling its input from the
    same verdicts must give back the same statuses, errors, summaries and score entries."""
    original = json.loads((_examples(m365) / "scenarios-with-mixed-errors.json").read_text("utf-8"))
    tasks = [_task_from_filled(i, item) for i, item in enumerate(original["items"])]
    results = RunResults.model_validate(make_results(tasks))
    filled = fill_m365_document(_strip(original), results, agent_name="Test Agent")
    for got, want in zip(filled["items"], original["items"], strict=True):
        targets = list(zip(got.get("turns", [got]), want.get("turns", [want]), strict=True))
        for g, w in targets:
            assert g["response"] == w["response"]
            assert g["status"] == w["status"]
            assert g.get("error") == w.get("error")
            assert g["scores"] == w["scores"]
        assert got.get("summary") == want.get("summary")


def test_score_entries_by_evaluator_kind(validator: MatchingSchema) -> None:
    doc = {"schemaVersion": "1.4.0", "items": [{"prompt": "q", "testId": "compat-key-kept"}]}
    exact, partial = "Exact match found", "Match score: 0.250"
    verdicts = [
        ev("builtin.exact_match", "pass", 1.0, threshold=None, scale="0-1", reason=exact),
        ev("builtin.partial_match", "fail", 0.25, threshold=0.5, scale="0-1", reason=partial),
        ev("builtin.citations", "pass", 2, threshold=1, scale="count") | {"normalized": 1.0},
        ev("builtin.tool_call_accuracy", "pass", 5),
        ev("professional_tone", "fail", 2, threshold=4),
        ev("builtin.groundedness", "error", code="missingInput", reason="no context"),
    ]  # fmt: skip
    results = RunResults.model_validate(make_results([task("q", 0, "partial", verdicts)]))
    scores = fill_m365_document(doc, results)["items"][0]["scores"]
    assert scores["exactMatch"] == {"match": True, "result": "pass", "reason": "Exact match found"}
    assert scores["partialMatch"] == {
        "score": 0.25, "result": "fail", "threshold": 0.5, "reason": "Match score: 0.250"
    }  # fmt: skip
    assert scores["citations"]["count"] == 2 and scores["citations"]["threshold"] == 1
    assert scores["toolCallAccuracy"]["score"] == 5
    assert scores["professional_tone"]["result"] == "fail"
    assert scores["groundedness"] == {"result": "error", "error": "Evaluator failed: no context"}
    filled = fill_m365_document(doc, results)
    assert filled["items"][0]["testId"] == "compat-key-kept"
    assert filled["items"][0]["error"]["message"] == (
        "Agent response obtained. 1 of 6 evaluators failed to run."
    )
    # a compat key is outside the strict schema; everything we wrote is inside it
    del filled["items"][0]["testId"]
    assert not list(validator.iter_errors(filled))


def test_items_the_run_did_not_cover_are_left_alone() -> None:
    doc = {
        "schemaVersion": "1.2.0",
        "items": [{"prompt": "first"}, {"prompt": "second", "response": "from an earlier run"}],
    }
    results = RunResults.model_validate(
        make_results([task("first", 0, "pass", [ev("builtin.relevance", "pass", 5)])])
    )
    filled = fill_m365_document(doc, results)
    assert filled["items"][0]["response"] == "A fine answer."
    assert filled["items"][1] == {"prompt": "second", "response": "from an earlier run"}

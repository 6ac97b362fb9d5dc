"""The official retrieval sample end to end: loaded, its evaluators selected and built, run on
agent transcripts (search tool calls or none), and written back into the M365 document —
which must validate against the official schema."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnResult
from agentopt.core.errors import ConfigError
from agentopt.datasets import load_dataset
from agentopt.evaluators import (
    BuildContext,
    EvaluatorCache,
    canonical_name,
    evaluate_sample,
    samples_from_run,
    score_transcript,
    select_evaluators,
)
from agentopt.models.types import ChatRequest
from agentopt.reports import RunResults, fill_m365_document
from agentopt.workflows.run.records import repeat_record, task_record
from tests.m365_output_check import MatchingSchema

SAMPLE = "prompts-retrieval-complex.json"
RETRIEVAL = {"builtin.retrieval_query", "builtin.retrieval_result"}


def _m365(m365: Path) -> Path:
    return m365


@pytest.fixture
def validator() -> MatchingSchema:
    return MatchingSchema()


def scripted_judge(request: ChatRequest) -> str:
    """Scale judges give a 4; the entailment judge supports none of the items it is asked
    about (only items found verbatim pass)."""
    name = request.response_format["json_schema"]["name"]
    if name != "retrieval_entailment":
        return json.dumps({"reason": "Fine.", "score": 4})
    ids = re.findall(r"^- id: (item_\d+)$", request.messages[-1].content, re.M)
    verdicts = [
        {"id": i, "supported": False, "hit": None, "reason": "No hit states it."} for i in ids
    ]
    return json.dumps({"verdicts": verdicts})


@pytest.fixture
def judge_model(judge) -> str:
    return judge(scripted_judge).model


def test_the_whole_sample_loads_and_builds(m365, harness, judge_model):
    dataset = load_dataset(_m365(m365) / "samples" / SAMPLE)
    built = set()
    for task in dataset.tasks:
        for uses in select_evaluators(task, dataset=dataset):
            for use in uses:
                built.add(harness.build(use, judge_model=judge_model).name)
    assert built >= RETRIEVAL
    assert {"builtin.citations", "builtin.groundedness", "builtin.relevance"} <= built


@pytest.mark.parametrize(
    "example",
    [
        "retrieval-query-missing-capability.json",
        "retrieval-query-missing-selector.json",
        "retrieval-query-threshold-override.json",
        "retrieval-result-missing-assertions.json",
    ],
)
def test_the_official_invalid_examples_are_config_errors(m365, example):
    """The same options given through eval.yaml (no schema check there) fail at build time."""
    from agentopt.evaluators import build_evaluator

    path = _m365(m365) / "schema" / "v1" / "examples" / "invalid" / example
    ((name, options),) = json.loads(path.read_text(encoding="utf-8"))["items"][0][
        "evaluators"
    ].items()
    with pytest.raises(ConfigError) as info:
        build_evaluator({"name": name, "initialization_parameters": options})
    assert info.value.problems[0].location.startswith(canonical_name(name))


def _hits_for(options: dict[str, Any], *, bury: bool) -> list[dict[str, Any]]:
    """Search hits holding every expected extract; `bury` puts them beyond max_rank."""
    texts = [i["retrievalExtract_contains"] for i in options.get("expected_items", [])]
    filler = [{"extract": f"Unrelated page {n}.", "webUrl": f"https://x/{n}"} for n in range(12)]
    wanted = [
        {"extract": f"The guidebook says {t}.", "webUrl": "https://x/guide.docx"} for t in texts
    ]
    return filler + wanted if bury else wanted + filler


def _transcript(item: dict[str, Any], index: int) -> Transcript:
    """What an agent might have done on this item: searched well, searched badly, or not."""
    evaluators = item["evaluators"]
    query_opts, result_opts = evaluators["RetrievalQuery"], evaluators["RetrievalResult"]
    terms = " ".join([query_opts["selector"], *query_opts.get("includes", [])])
    call = {
        0: ToolCallRecord(
            name="search_OneDriveAndSharePoint",
            arguments={"query": terms},
            result=_hits_for(result_opts, bury=False),
        ),
        1: ToolCallRecord(
            name="OneDriveAndSharePoint",
            arguments={"queryString": "policy"},
            result=json.dumps({"results": _hits_for(result_opts, bury=True)}),
        ),
        2: None,
        3: ToolCallRecord(
            name="search_OneDriveAndSharePoint",
            arguments={"query": terms},
            error="HTTP 503 from SharePoint search",
        ),
    }[index % 4]
    turn = TurnResult(
        query=item["prompt"],
        response="Per the guidebook 【1†guidebook】 the answer is in §8.",
        tool_calls=[call] if call else [],
    )
    return Transcript(turns=[turn], target="local", model="mock:agent")


async def _run(dataset, items, judge_model: str, project: Path) -> list[dict[str, Any]]:
    """Evaluate each task's transcript the way the run engine does; the results.json records."""
    from agentopt.models.call import CallLayer, CallSettings

    layer = CallLayer(project, CallSettings(cache_enabled=False, max_attempts=1))
    cache = EvaluatorCache(BuildContext(judge_model=judge_model, layer=layer, project_dir=project))
    records = []
    try:
        for task in dataset.tasks:
            transcript = _transcript(items[task.index], task.index)
            per_turn = select_evaluators(task, dataset=dataset)
            results = [
                await evaluate_sample([cache.get(u) for u in uses], s)
                for uses, s in zip(per_turn, samples_from_run(task, transcript), strict=True)
            ]
            score = score_transcript(task.name, transcript, results, n_turns=len(task.turns))
            records.append(task_record(task, [repeat_record(task, transcript, score)], None))
    finally:
        await layer.aclose()
    return records


def test_filled_sample_validates_against_the_official_schema(m365, harness, judge_model, validator):
    path = _m365(m365) / "samples" / SAMPLE
    document = json.loads(path.read_text(encoding="utf-8"))
    dataset = load_dataset(path)
    records = asyncio.run(_run(dataset, document["items"], judge_model, harness.project_dir))
    results = RunResults.model_validate(
        {"run": {"id": "r1", "finished_at": "2026-11-29T22:15:42Z"}, "tasks": records}
    )
    filled = fill_m365_document(document, results, agent_name="Zava Claims Agent")

    errors = sorted(validator.iter_errors(filled), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])
    scores = [item["scores"] for item in filled["items"]]
    query = [s["retrievalQuery"]["diagnostic_code"] for s in scores]
    result = [s["retrievalResult"]["diagnostic_code"] for s in scores]
    # searched well / searched with the wrong query, hits beyond max_rank / no search / failed
    assert query == ["pass", "no_matching_query", "retrieval_failure", "pass"] * 2
    assert result == ["pass", "not_retrieved", "not_retrieved", "error"] * 2
    good, buried, none, failed = scores[:4]
    assert good["retrievalQuery"] == {
        "score": 1.0,
        "result": "pass",
        "threshold": 1.0,
        "diagnostic_code": "pass",
        "reason": good["retrievalQuery"]["reason"],
        "matched_queries": ["mortgage mortgage joint check"],
        "includes_missing": [],
        "excludes_found": [],
    }
    assert good["retrievalResult"]["matched_items"][0] == {
        "extractMatch": "joint check",
        "matchedHitUrl": "https://x/guide.docx",
        "matchedHitRank": 1,
        "reason": "Found verbatim in the hit at rank 1.",
    }
    assert buried["retrievalResult"]["results_evaluated"] == 5  # max_rank 5
    assert buried["retrievalResult"]["score"] == 0.0
    assert buried["retrievalResult"]["missing_items"] == [
        {"extractMatch": "$500", "reason": "No hit states it."},
        {"extractMatch": "$10,000", "reason": "No hit states it."},
    ]
    assert (
        buried["retrievalResult"]["extract_failures"] == buried["retrievalResult"]["missing_items"]
    )
    assert none["retrievalResult"]["results_evaluated"] == 0
    assert none["retrievalResult"]["extract_failures"] == []
    assert failed["retrievalResult"]["result"] == "fail"
    assert "HTTP 503" in failed["retrievalResult"]["reason"]


def test_an_errored_retrieval_verdict_is_written_as_an_errored_score(m365, harness, validator):
    """A judge that never answers usably: RetrievalResult has no verdict → ErroredScore."""
    path = _m365(m365) / "samples" / SAMPLE
    document = json.loads(path.read_text(encoding="utf-8"))
    dataset = load_dataset(path)
    dataset.tasks[:] = dataset.tasks[1:2]
    from agentopt.models.providers.mock import register_mock, unregister_mock

    register_mock("retrieval_broken_judge", lambda request: "no JSON here")
    try:
        model = "mock:retrieval_broken_judge"
        records = asyncio.run(_run(dataset, document["items"], model, harness.project_dir))
    finally:
        unregister_mock("retrieval_broken_judge")
    results = RunResults.model_validate({"run": {"id": "r2"}, "tasks": records})
    filled = fill_m365_document(document, results)
    scores = filled["items"][1]["scores"]
    assert scores["retrievalResult"]["result"] == "error"
    assert set(scores["retrievalResult"]) == {"result", "error"}
    assert scores["retrievalQuery"]["diagnostic_code"] == "no_matching_query"
    assert filled["items"][1]["error"]["code"] == "evaluatorsFailed"
    assert not list(validator.iter_errors(filled))

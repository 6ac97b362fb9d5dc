"""Item 3 of issue 38: a 200 whose body cannot be a chat completion — an HTML page, an empty
body, an error object, no `choices`, half a JSON body — is what a proxy in front of a model
says when the model behind it hiccups. It used to cost the task (or the evaluator) at once;
now it is classified `bad_gateway` and retried once like a 5xx, then reported."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentopt.core.errors import ModelCallError
from agentopt.models import CallLayer, CallSettings
from agentopt.models.types import ChatRequest, Message
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text
from tests.hardening.conftest import real_cli
from tests.models.helpers import fast_settings

UNUSABLE: dict[str, Reply] = {
    "an HTML page": Reply(
        body=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        headers={"Content-Type": "text/html"},
    ),
    "an empty body": Reply(body=b""),
    "an error object": Reply(body={"error": {"message": "upstream timed out", "code": 502}}),
    "no choices": Reply(body={"id": "x", "object": "chat.completion", "choices": []}),
    "half a JSON body": Reply(body=b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess'),
    "a JSON list": Reply(body=b"[1, 2, 3]"),
    "choices that is not a list": Reply(body={"choices": "oops"}),
    "a message that is not an object": Reply(body={"choices": [{"message": 7}]}),
    "tool calls that are not objects": Reply(
        body={"choices": [{"message": {"role": "assistant", "tool_calls": [1]}}]}
    ),
}
REQUEST = ChatRequest(messages=[Message(role="user", content="ping")])


def _call(project: Path, settings: CallSettings) -> Any:
    async def main() -> Any:
        async with CallLayer(project, settings) as layer:
            try:
                return await layer.complete("fake:gpt-x", REQUEST, pool="agent")
            except ModelCallError as exc:
                return exc

    return asyncio.run(main())


@pytest.mark.parametrize("reply", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_one_unusable_200_is_retried_and_the_call_succeeds(tmp_path: Path, reply: Reply) -> None:
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted (compat) server
        srv.queue(reply, text("pong"))
        result = _call(tmp_path, fast_settings(srv, cache_enabled=False))
        assert not isinstance(result, ModelCallError), result
        assert result.message.content == "pong" and srv.count() == 2


@pytest.mark.parametrize("reply", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_two_unusable_200s_in_a_row_are_reported_as_bad_gateway(
    tmp_path: Path, reply: Reply
) -> None:
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted (compat) server
        srv.queue(reply, reply, text("never asked"))
        result = _call(tmp_path, fast_settings(srv, cache_enabled=False))
        assert isinstance(result, ModelCallError) and result.kind == "bad_gateway", result
        assert "200" in result.message and "gpt-x" in result.message
        assert srv.count() == 2  # retried once, not six times


# -- a faulty proxy in front of agent and judge: 100 tasks, 35% of first attempts fail ----------

FAULTS = [*UNUSABLE.values(), error(500, "internal"), error(503, "overloaded")]
FAULT_RATE = 0.35


def _faulty(srv: FakeOpenAI) -> dict[str, int]:
    """35% of distinct requests (by body, transport fields aside) get a fault on their first
    attempt, cycling through the unusable 200s and two 5xx; every retry is answered.
    Deterministic whatever the order of arrival. Judge requests (they ask for JSON) get a
    verdict."""
    seen: dict[str, int] = {}
    counts = {"faults": 0, "unusable_200": 0}

    def handler(req: RecordedRequest) -> Reply | None:
        # A request is what it asks, not how the answer travels: a retry of a plain attempt
        # streams, and is still the same request's second attempt.
        asked = req.body
        if isinstance(asked, dict):
            asked = {k: v for k, v in asked.items() if k not in ("stream", "stream_options")}
        body = json.dumps(asked, sort_keys=True)
        digest = hashlib.sha256(body.encode()).digest()
        attempt = seen[body] = seen.get(body, 0) + 1
        if attempt == 1 and digest[0] < 256 * FAULT_RATE:
            fault = FAULTS[digest[1] % len(FAULTS)]
            counts["faults"] += 1
            counts["unusable_200"] += fault.status == 200
            return fault
        if isinstance(req.body, dict) and req.body.get("response_format"):
            return text(json.dumps({"reason": "on topic", "score": 4}))
        return None  # the default: echo the question

    srv.handler = handler
    return counts


@pytest.mark.slow
def test_a_35_percent_fault_run_of_100_tasks_loses_no_task(tmp_path: Path) -> None:
    rows = [
        {"name": f"t{i}", "query": f"question {i}", "ground_truth": f"question {i}"}
        for i in range(100)
    ]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted (compat) server
        counts = _faulty(srv)
        model = f"compat:fake@{srv.base_url}"
        ran = real_cli(
            tmp_path,
            "eval", "run", "--prompts-file", "tasks.jsonl", "--agent-model", model,
            "--eval-model", model, "--evaluator", "ExactMatch", "--evaluator", "Relevance",
            "--max-errors", "0", "--output", "out.json",
            timeout=600,
        )  # fmt: skip
    assert ran.code == 0, ran.output[-3000:]
    results = json.loads(next((tmp_path / ".agentopt" / "runs").glob("*/results.json")).read_text())
    summary = results["summary"]
    assert summary["errors"] == 0 and summary["partial"] == 0, summary
    assert summary["runs"] == 100
    evaluator_errors = sum(e["errors"] for e in summary["evaluators"])
    assert evaluator_errors == 0, summary["evaluators"]
    # The run met the faults it was meant to: about 35% of ~200 requests, most of them 200s.
    assert counts["faults"] >= 50 and counts["unusable_200"] >= 35, counts

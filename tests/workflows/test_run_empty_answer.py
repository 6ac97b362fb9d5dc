"""An empty or whitespace-only answer is the `emptyAgentResponse` error of every evaluator that
judges the answer, before any judge is asked (optimize: tests/optimize/test_optimize_errors.py);
evaluators
of what the agent did (latency, tool calls) still score the turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.m365_output_check import validate_output
from tests.workflows.fake_agent_server import judge_reply

runner = CliRunner()


def blank_agent(answer: str):
    def handler(req: RecordedRequest) -> Reply | None:
        if (req.body or {}).get("response_format"):
            return judge_reply(req)
        return text(answer)

    return handler


def judge_requests(srv: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in srv.chat_requests if (r.body or {}).get("response_format")]


@pytest.mark.parametrize("answer", ["", "  \n\t "])
def test_eval_run_scores_an_empty_answer_as_an_error_with_no_judge_request(
    project: Path, answer: str
) -> None:
    document = {
        "schemaVersion": "1.10.0",
        "default_evaluators": {
            "Relevance": {},
            "Coherence": {},
            "Groundedness": {},
            "ExactMatch": {},
            "Citations": {},
            "RetrievalQuery": {"capability": "OneDriveAndSharePoint", "selector": "two"},
        },
        "items": [{"prompt": "What is 2+2?", "expected_response": "4", "context": "2+2=4"}],
    }
    (project / "evals.json").write_text(json.dumps(document))
    with FakeOpenAI() as srv:
        srv.handler = blank_agent(answer)
        url = srv.base_url
        result = runner.invoke(
            app,
            [
                "-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "evals.json",
                "--agent-model", f"compat:agent@{url}", "--eval-model", f"compat:judge@{url}",
                "--output", "filled.json", "--max-errors", "9",
            ],
        )  # fmt: skip
        judged = judge_requests(srv)
    assert result.exit_code == 0, result.output
    assert judged == []
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    [item] = filled["items"]
    for key in ("relevance", "coherence", "groundedness", "exactMatch", "citations"):
        assert item["scores"][key]["result"] == "error", key
        assert item["scores"][key]["code"] == "emptyAgentResponse", key
    # RetrievalQuery checks what the agent searched, not its answer: it still has a verdict
    assert item["scores"]["retrievalQuery"]["result"] == "fail"
    assert item["scores"]["retrievalQuery"]["diagnostic_code"] == "retrieval_failure"
    assert item["status"] == "partial" and item["error"]["code"] == "evaluatorsFailed"
    assert "5 of 6 evaluators failed" in item["error"]["message"]

"""M365 `diagnostics` (retrieval executions, schema 1.6+): read from a captured document and from
an agent whose protocol returns them, used by RetrievalQuery / RetrievalResult, and written to
the output document. The item is upstream's own first retrieval sample
(samples/prompts-retrieval-complex.json)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.conftest import M365_FIXTURES
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.m365_output_check import validate_output
from tests.workflows.fake_agent_server import judge_reply

runner = CliRunner()
SAMPLE = M365_FIXTURES / "samples" / "prompts-retrieval-complex.json"
ANSWER = "A joint check with the mortgage company is required above $10,000."
DIAGNOSTICS = {
    "retrieval_executions": [
        {
            "capability": "OneDriveAndSharePoint",
            "status": "success",
            "totalResultCount": 2,
            "queries": [{"queryString": "mortgage joint check dwelling claim threshold"}],
            "retrievalHits": [
                {
                    "rank": 1,
                    "webUrl": "https://contoso.sharepoint.com/guidebook.docx",
                    "extracts": [
                        {"text": "8.4 Mortgage Company Joint Check: required when a dwelling"},
                        {"text": "claim on a mortgaged property exceeds $10,000."},
                    ],
                },
                {"rank": 2, "webUrl": None, "extracts": [{"text": "Unrelated policy text."}]},
            ],
        }
    ]
}


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def upstream_item() -> dict[str, Any]:
    item = copy.deepcopy(json.loads(SAMPLE.read_text())["items"][0])
    item["evaluators"] = {k: item["evaluators"][k] for k in ("RetrievalQuery", "RetrievalResult")}
    item["evaluators_mode"] = "replace"
    return item


def document(*items: dict[str, Any]) -> dict[str, Any]:
    return {"schemaVersion": "1.11.0", "items": list(items)}


def test_evaluate_only_reads_the_captured_diagnostics(project: Path) -> None:
    with_diagnostics = {**upstream_item(), "response": ANSWER, "diagnostics": DIAGNOSTICS}
    without = {**upstream_item(), "response": ANSWER}
    (project / "evals.json").write_text(json.dumps(document(with_diagnostics, without)))
    with FakeOpenAI(schemas="any") as srv:
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "evals.json",
            "--eval-model", f"compat:judge@{srv.base_url}", "--output", "filled.json",
        )  # fmt: skip
        assert srv.chat_requests == []  # both expected items are in the hits verbatim
    assert code == 3, out  # the item without diagnostics cannot be judged: an error
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    seen, unseen = filled["items"]
    query, result = seen["scores"]["retrievalQuery"], seen["scores"]["retrievalResult"]
    assert query["result"] == "pass" and query["diagnostic_code"] == "pass"
    assert query["matched_queries"] == ["mortgage joint check dwelling claim threshold"]
    assert result["result"] == "pass" and result["results_evaluated"] == 2
    assert result["matched_items"][1] == {
        "extractMatch": "$10,000",
        "matchedHitUrl": "https://contoso.sharepoint.com/guidebook.docx",
        "matchedHitRank": 1,
        "reason": "Found verbatim in the hit at rank 1.",
    }
    assert seen["diagnostics"] == DIAGNOSTICS  # the captured input, unchanged
    # a replayed answer without diagnostics: whether the agent searched is unknown, not "no"
    for key in ("retrievalQuery", "retrievalResult"):
        assert unseen["scores"][key]["result"] == "error", key
        assert "retrieval_executions" in unseen["scores"][key]["error"]
    assert unseen["status"] == "partial" and "diagnostics" not in unseen


def chat_agent_with_diagnostics(req: RecordedRequest) -> Reply | None:
    """An endpoint that returns Developer-Info-like diagnostics beside its chat completion."""
    reply = judge_reply(req)
    if reply is not None:
        return reply
    answer = text(ANSWER)
    answer.body["diagnostics"] = {**DIAGNOSTICS, "internal": {"dropped": True}}
    return answer


def test_an_endpoint_that_returns_diagnostics_is_judged_on_them(project: Path) -> None:
    (project / "evals.json").write_text(json.dumps(document(upstream_item())))
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = chat_agent_with_diagnostics
        agent = {
            "name": "claims",
            "target": "endpoint",
            "endpoint": srv.base_url,
            "protocol": "chat_completions",
        }
        (project / "eval.yaml").write_text(yaml.safe_dump({"name": "retrieval", "agent": agent}))
        code, out = cli(
            project, "--prompts-file", "evals.json", "--eval-model", f"compat:judge@{srv.base_url}",
            "--output", "filled.json",
        )  # fmt: skip
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    [item] = filled["items"]
    assert item["response"] == ANSWER
    assert item["scores"]["retrievalQuery"]["result"] == "pass"
    assert item["scores"]["retrievalResult"]["result"] == "pass"
    # written per the schema: its keys only, nothing the endpoint added beside them
    assert item["diagnostics"]["retrieval_executions"][0]["queries"] == [
        {"queryString": "mortgage joint check dwelling claim threshold", "filterExpression": None}
    ]
    assert "internal" not in item["diagnostics"]


def test_retrieval_read_from_tool_calls_is_written_as_diagnostics(project: Path) -> None:
    """A local agent whose search tool is mocked: the executions RetrievalQuery read from its
    tool calls go to the output's diagnostics, so --evaluate-only can replay them."""
    base = project / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text("Search the guidebook.")
    (base / "metadata.yaml").write_text(
        "model: gpt-4.1-mini\ninstruction_file: instructions.md\ntools_file: tools.json\n"
    )
    fn = {"name": "search_OneDriveAndSharePoint", "description": "Search.", "parameters": {}}
    (base / "tools.json").write_text(json.dumps([{"type": "function", "function": fn}]))
    hits = [{"webUrl": "https://x/guidebook.docx", "extract": "Joint check above $10,000."}]
    (base / "tool_mocks.json").write_text(
        json.dumps({"search_OneDriveAndSharePoint": [{"return": {"results": hits}}]})
    )
    (project / "evals.json").write_text(json.dumps(document(upstream_item())))

    def agent(req: RecordedRequest) -> Reply | None:
        from tests.fake_openai import tool_calls

        reply = judge_reply(req)
        if reply is not None:
            return reply
        if req.body["messages"][-1]["role"] == "user":
            return tool_calls([("search_OneDriveAndSharePoint", {"query": "mortgage joint check"})])
        return text(ANSWER)

    with FakeOpenAI(schemas="any") as srv:
        srv.handler = agent
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", "evals.json", "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--output", "filled.json",
        )  # fmt: skip
        assert code == 0, out
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "filled.json",
            "--eval-model", f"compat:judge@{url}", "--output", "replayed.json",
        )  # fmt: skip
        assert code == 0, out
    for name in ("filled.json", "replayed.json"):
        done = json.loads((project / name).read_text())
        validate_output(done)
        [item] = done["items"]
        assert item["scores"]["retrievalQuery"]["result"] == "pass", name
        assert item["scores"]["retrievalResult"]["result"] == "pass", name
        [execution] = item["diagnostics"]["retrieval_executions"]
        assert execution["capability"] == "OneDriveAndSharePoint"
        assert execution["queries"][0]["queryString"] == "mortgage joint check"
        assert execution["retrievalHits"][0]["webUrl"] == "https://x/guidebook.docx"

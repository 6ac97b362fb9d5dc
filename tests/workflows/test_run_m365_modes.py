"""M365 runevals features end to end through `eval run` against the fake OpenAI server:
evaluate-only mode, allowed_tools, and every current upstream example run and written back
valid against the schema matching its schemaVersion."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.conftest import M365_FIXTURES
from tests.evaluators.test_evaluators_registry_code import FORBIDDEN_TERMS
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text, tool_calls
from tests.m365_output_check import validate_output
from tests.workflows.fake_agent_server import judge_reply

runner = CliRunner()
VALID = M365_FIXTURES / "schema" / "v1" / "examples" / "valid"


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def agent_requests(srv: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in srv.chat_requests if (r.body or {}).get("model") == "agent"]


def test_evaluate_only_scores_a_whole_file_with_zero_agent_requests(project: Path) -> None:
    document = {
        "schemaVersion": "1.10.0",
        "default_evaluators": {"Relevance": {}, "ExactMatch": {}},
        "items": [
            {"prompt": "What is 2+2?", "expected_response": "4", "response": "4"},
            {
                "name": "thread",
                "turns": [
                    {"prompt": "hi", "expected_response": "hello", "response": "hello"},
                    {"prompt": "bye", "expected_response": "bye", "response": "later"},
                ],
            },
        ],
    }
    (project / "evals.json").write_text(json.dumps(document))
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        url = srv.base_url
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "evals.json",
            "--agent-model", f"compat:agent@{url}", "--eval-model", f"compat:judge@{url}",
            "--output", "filled.json",
        )  # fmt: skip
        judged = len(srv.chat_requests)
    assert code == 0, out
    assert agent_requests(srv) == []
    assert judged == 3  # Relevance on the item and on both turns
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    first, thread = filled["items"]
    assert first["response"] == "4" and first["scores"]["exactMatch"]["result"] == "pass"
    assert [t["scores"]["exactMatch"]["result"] for t in thread["turns"]] == ["pass", "fail"]


def test_evaluate_only_refuses_items_without_a_captured_response(project: Path) -> None:
    document = {
        "schemaVersion": "1.10.0",
        "items": [{"prompt": "a", "response": "r"}, {"prompt": "b"}],
    }
    (project / "evals.json").write_text(json.dumps(document))
    code, out = cli(project, "--evaluate-only", "--prompts-file", "evals.json")
    assert code == 2
    assert "items[1]" in out and 'captured "response"' in out and "items[0]" not in out


ORDER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_order",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
}


def tool_agent(req: RecordedRequest) -> Reply | None:
    """The agent looks the order up, then answers with what the tool said."""
    reply = judge_reply(req)
    if reply is not None:
        return reply
    last = (req.body or {}).get("messages", [])[-1]
    if last.get("role") == "user":
        return tool_calls([("get_order", {"order_id": "1"})])
    return text(f"The order is {last.get('content')}")


def write_tool_agent(project: Path) -> None:
    base = project / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "metadata.yaml").write_text(
        "model: gpt-4.1-mini\ninstruction_file: instructions.md\ntools_file: tools.json\n"
    )
    (base / "instructions.md").write_text("Look orders up.")
    (base / "tools.json").write_text(json.dumps([ORDER_TOOL]))
    (base / "tool_mocks.json").write_text(json.dumps({"get_order": [{"return": "shipped"}]}))


def test_allowed_tools_fail_the_item_naming_the_tool_and_pass_otherwise(project: Path) -> None:
    write_tool_agent(project)
    document = {
        "schemaVersion": "1.11.0",
        "default_allowed_tools": ["get_order"],
        "default_evaluators": {"PartialMatch": {"threshold": 0.1}},
        "items": [
            {"prompt": "Where is order 1?", "expected_response": "The order is shipped"},
            {
                "prompt": "Where is order 1, without tools?",
                "expected_response": "The order is shipped",
                "allowed_tools": ["search_docs"],
                "allowed_tools_mode": "replace",
            },
        ],
    }
    (project / "evals.json").write_text(json.dumps(document))
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = tool_agent
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", "evals.json", "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--output", "filled.json", "--max-errors", "1",
        )  # fmt: skip
    assert code == 0, out  # the refused call is an error, counted, never a score
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    allowed, refused = filled["items"]
    assert allowed["status"] == "pass" and "shipped" in allowed["response"]
    assert refused["status"] == "error"
    assert refused["error"]["code"] == "toolCallNotAllowed"
    assert "'get_order'" in refused["error"]["message"]
    assert "search_docs" in refused["error"]["message"]


RUNNABLE = sorted(p.name for p in VALID.glob("*.json"))
PROMPTY_EVALUATORS = ("professional_tone", "consistency_check", "answer_accuracy")


def add_custom_evaluators(project: Path) -> None:
    """What upstream's custom-evaluator examples resolve from the project: its three .prompty
    judges, and a forbidden_terms code evaluator (upstream's .py is code, not copied: this
    one is written for the test, with the constructor and call the upstream docs describe)."""
    for name in PROMPTY_EVALUATORS:
        folder = project / "custom-evaluators" / name
        folder.mkdir(parents=True)
        shutil.copy(M365_FIXTURES / "custom-evaluators" / name / f"{name}.prompty", folder)
    folder = project / "custom-evaluators" / "forbidden_terms"
    folder.mkdir(parents=True)
    (folder / "forbidden_terms.py").write_text(FORBIDDEN_TERMS)


@pytest.mark.slow
@pytest.mark.parametrize("example", RUNNABLE)
def test_every_current_valid_example_runs_and_its_output_validates(
    project: Path, example: str
) -> None:
    """Every upstream example runs to the end against the fake server (with the custom
    evaluators it names), and the filled document validates against its own schemaVersion."""
    shutil.copy(VALID / example, project / example)
    add_custom_evaluators(project)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", example, "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--max-errors", "100000",
            "--output", "filled.json",
        )  # fmt: skip
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    source = json.loads((VALID / example).read_text())
    assert filled["schemaVersion"] == source["schemaVersion"]
    assert [("turns" in i) for i in filled["items"]] == [("turns" in i) for i in source["items"]]


CAPTURED = sorted(
    p.name
    for p in VALID.glob("*.json")
    if any("response" in t for i in json.loads(p.read_text())["items"] for t in i.get("turns", [i]))
)


@pytest.mark.slow
@pytest.mark.parametrize("example", CAPTURED)
def test_every_example_with_captured_responses_replays_under_evaluate_only(
    project: Path, example: str
) -> None:
    """Upstream's output-shaped examples under --evaluate-only: no agent request, each
    captured answer kept, and a captured agent failure kept as it was."""
    shutil.copy(VALID / example, project / example)
    source = json.loads((VALID / example).read_text())
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", example,
            "--eval-model", f"compat:judge@{srv.base_url}", "--max-errors", "100000",
            "--output", "filled.json",
        )  # fmt: skip
        assert agent_requests(srv) == []
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    for before, after in zip(source["items"], filled["items"], strict=True):
        for turn_in, turn_out in zip(
            before.get("turns", [before]), after.get("turns", [after]), strict=True
        ):
            assert turn_out["response"] == turn_in.get("response", "")
            if (turn_in.get("error") or {}).get("code") in ("agentRequestFailed", "turnSkipped"):
                assert turn_out["error"] == turn_in["error"]


def test_upstream_custom_evaluators_example_runs_its_prompty_judges(project: Path) -> None:
    """runevals' own custom-evaluator example with its three .prompty files: each scores
    through the judge on the fake server, none needs the promptflow wrapper."""
    shutil.copy(VALID / "custom-evaluators.json", project / "evals.json")
    add_custom_evaluators(project)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", "evals.json", "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}", "--output", "filled.json",
        )  # fmt: skip
        judged = [r for r in srv.chat_requests if (r.body or {}).get("model") == "judge"]
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    tone, consistency, accuracy = (item["scores"] for item in filled["items"])
    assert set(tone) == {"relevance", "coherence", "professional_tone"}  # extend: + defaults
    for entry in (tone["professional_tone"], consistency["consistency_check"]):
        assert entry["result"] in ("pass", "fail") and 1 <= entry["score"] <= 5
    assert accuracy["answer_accuracy"]["threshold"] == 4
    assert len(judged) == 5  # relevance, coherence + the three prompty judges, one call each


def test_task_completion_evaluator_is_refused_naming_the_version_that_dropped_it(
    project: Path,
) -> None:
    """Upstream's own example naming it (schema/v1/examples/invalid/, until 1.6.0)."""
    shutil.copy(M365_FIXTURES / "retired" / "multi-turn-unknown-evaluator.json", project / "e.json")
    code, out = cli(project, "--prompts-file", "e.json", "--agent-model", "mock:echo")
    flat = " ".join(out.split())
    assert code == 2
    assert "TaskCompletionEvaluator is not a runevals evaluator" in flat
    assert "up to 1.5.0" in flat and "1.6.0 dropped that example" in flat
    assert "builtin.task_adherence" in flat  # what to use instead
    result = runner.invoke(app, ["-C", str(project), "eval", "validate", "--strict", "e.json"])
    assert result.exit_code == 0  # schema-valid since 1.6.0 (a custom evaluator's name) ...
    assert "TaskCompletionEvaluator is not a runevals evaluator" in result.output  # ... flagged
    (project / "custom-evaluators" / "TaskCompletionEvaluator").mkdir(parents=True)
    (project / "custom-evaluators" / "TaskCompletionEvaluator" / "TaskCompletionEvaluator.py")\
        .write_text(FORBIDDEN_TERMS)  # fmt: skip
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge_reply
        url = srv.base_url
        code, out = cli(
            project, "--prompts-file", "e.json", "--agent-model", f"compat:agent@{url}",
            "--eval-model", f"compat:judge@{url}",
        )  # fmt: skip
    assert code == 0, out  # a project that defines it runs its own


def remote_tool_agent(plan: dict[str, str]):
    """An endpoint whose answers report the tool it called (chat completions `tool_calls`
    beside the text): agentopt only sees the call after it, and judges it all the same."""

    def handler(req: RecordedRequest) -> Reply | None:
        reply = judge_reply(req)
        if reply is not None:
            return reply
        asked = req.body["messages"][-1]["content"]
        called = tool_calls([(plan[asked], {})])
        called.body["choices"][0]["message"]["content"] = f"answered {asked}"
        return called

    return handler


def test_upstream_allowed_tools_example_against_an_endpoint_that_returns_tool_calls(
    project: Path,
) -> None:
    shutil.copy(VALID / "allowed-tools.json", project / "evals.json")
    docs, orgs = "learnmicro_microsoft_docs_search", "github_orgs_get"
    plan = {
        "Which GitHub orgs am I a member of?": orgs,  # the default list allows it
        "Summarize the MIT license.": docs,  # extend: default + docs
        "Answer from your own knowledge only.": orgs,  # replace with []: refused
        "Search the docs for Adaptive Cards.": orgs,  # replace with [docs]: refused
        "Now list my orgs.": orgs,
    }
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = remote_tool_agent(plan)
        agent = {"name": "gh", "target": "endpoint", "endpoint": srv.base_url,
                 "protocol": "chat_completions"}  # fmt: skip
        (project / "eval.yaml").write_text(json.dumps({"name": "tools", "agent": agent}))
        code, out = cli(
            project, "--prompts-file", "evals.json", "--eval-model", f"compat:judge@{srv.base_url}",
            "--output", "filled.json", "--max-errors", "10",
        )  # fmt: skip
        sent = [r.body["messages"][-1]["content"] for r in agent_requests_of(srv)]
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    first, second, third, thread = filled["items"]
    assert first["status"] != "error" and second["status"] != "error"
    assert third["error"]["code"] == "toolCallNotAllowed"
    assert f"'{orgs}'" in third["error"]["message"] and "allowed: none" in third["error"]["message"]
    one, two = thread["turns"]
    assert one["error"]["code"] == "toolCallNotAllowed" and docs in one["error"]["message"]
    assert two["error"]["code"] == "turnSkipped"
    assert "Now list my orgs." not in sent  # a skipped turn is never sent
    assert one["diagnostics"]["tool_calls"]["selected_functions"] == [
        {"plugin_name": "gh", "function_name": orgs}
    ]


def agent_requests_of(srv: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in srv.chat_requests if not (r.body or {}).get("response_format")]

"""`eval run --remote` as a library, against the fake Foundry project: the requests it sends,
and the run folder it writes (the same results.json a local run writes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.run_results import load_results
from agentopt.core.errors import AgentoptError
from agentopt.registry import Registry
from agentopt.workflows.events import NullSink
from agentopt.workflows.remote.errors import RemoteRunFailed
from agentopt.workflows.remote.eval_run import run_remote
from agentopt.workflows.remote.eval_setup import prepare_remote
from agentopt.workflows.remote.polling import PollSettings
from agentopt.workflows.run.eval_run import RunOutcome
from agentopt.workflows.run.inputs import RunOptions
from tests.foundry.conftest import SUBSCRIPTION, TASKS, write_azd_project
from tests.foundry.fake_evals import Answer, default_grader
from tests.foundry.fake_project import FakeFoundry

FAST = PollSettings(interval_s=0.001, max_interval_s=0.002)


def remote_run(project: Path, factory: Any, **opts: Any) -> RunOutcome:
    setup = prepare_remote(RunOptions(remote=True, **opts), project, None)
    return run_remote(setup, NullSink(), poll=FAST, project_factory=factory)


FREE_FORM = {"errors_by_kind", "details", "config", "arguments", "result"}
"""Maps whose keys are data (error kinds, evaluator extras, flags), not schema."""


def shape(value: Any) -> Any:
    """The key structure of a JSON document (lists reduced to the union of their items)."""
    if isinstance(value, dict):
        return {k: None if k in FREE_FORM else shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        merged: dict[str, Any] = {}
        for item in value:
            if isinstance(item, dict):
                merged.update(shape(item))
        return [merged] if merged else []
    return None


def test_remote_run_sends_azd_requests_and_writes_the_local_results_shape(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    write_azd_project(project, foundry.endpoint)
    foundry.fail("GET", r"/runs/evalrun_\d+$", 429, retry_after="0")
    outcome = remote_run(project, factory)

    # Registered rubric, evaluation and run, shaped as azd sends them.
    (rubric,) = foundry.calls("POST", r"^/evaluators/shop-quality/versions$")
    assert rubric.body["definition"]["type"] == "rubric"
    assert [d["id"] for d in rubric.body["definition"]["dimensions"]] == [
        "accuracy",
        "general_quality",
    ]
    (created,) = foundry.calls("POST", r"^/openai/v1/evals$")
    criteria = created.body["testing_criteria"]
    assert [(c["name"], c["evaluator_name"]) for c in criteria] == [
        ("relevance", "builtin.relevance"),
        ("shop-quality", "shop-quality"),
    ]
    assert criteria[1]["evaluator_version"] == "1"
    assert criteria[0]["initialization_parameters"] == {
        "model": "gpt-4.1-mini",
        "deployment_name": "gpt-4.1-mini",
    }
    assert criteria[0]["data_mapping"]["query"] == "{{item.query}}"
    assert created.body["data_source_config"]["type"] == "custom"
    (started,) = foundry.calls("POST", r"^/openai/v1/evals/[^/]+/runs$")
    source = started.body["data_source"]
    assert source["type"] == "azure_ai_target_completions"
    assert source["target"] == {
        "type": "azure_ai_agent",
        "name": "support-agent",
        "version": "3",
        "tool_descriptions": [],
    }
    assert [r["item"]["name"] for r in source["source"]["content"]] == [t["name"] for t in TASKS]
    polls = foundry.calls("GET", r"^/openai/v1/evals/[^/]+/runs/[^/]+$")
    assert len(polls) == 3  # a 429, in_progress, completed
    assert all(r.headers["authorization"].startswith("Bearer ") for r in foundry.log)

    # The run folder a local run writes, validated by the same model.
    results = load_results(outcome.results_path)
    assert [t.name for t in results.tasks] == [t["name"] for t in TASKS]
    by_name = {t.name: t for t in results.tasks}
    assert by_name["refund_window"].status == "fail"  # the fake agent never says "30 days"
    assert by_name["greeting"].status == "pass"
    verdicts = {e.evaluator: e for e in by_name["greeting"].evaluators}
    assert set(verdicts) == {"builtin.relevance", "shop-quality", "builtin.regex_match"}
    assert (
        verdicts["builtin.relevance"].score == 5.0
        and verdicts["builtin.relevance"].normalized == 1.0
    )
    assert verdicts["builtin.regex_match"].status == "pass"  # run here, over the transcript
    assert results.run.agent.target == "foundry"
    remote = results.run.remote.model_dump() if results.run.remote else {}
    assert remote["run_id"] == started.path.split("/")[-1] or remote["run_id"].startswith(
        "evalrun_"
    )
    assert remote["report_url"].endswith(f"/run/{remote['run_id']}")
    assert results.summary.tasks == 5 and results.summary.errors == 0
    assert results.summary.usage["agent"].input_tokens == 100
    assert outcome.gate is not None and outcome.exit_code == 0

    # A local run of the same suite writes the same shape.
    local = CliRunner().invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--agent-model", "mock:echo",
         "--evaluator", "PartialMatch", "--evaluator", "ExactMatch", "--max-errors", "9"],
    )  # fmt: skip
    assert local.exit_code == 0, local.output
    # The other run folder (ids made within one second do not sort by time).
    [local_run] = [
        d for d in (project / ".agentopt" / "runs").iterdir() if d != outcome.results_path.parent
    ]
    local_results = json.loads((local_run / "results.json").read_text())
    remote_results = json.loads(outcome.results_path.read_text())
    remote_results["run"].pop("remote")
    assert shape(local_results["summary"]) == shape(remote_results["summary"])
    assert shape(local_results["tasks"]) == shape(remote_results["tasks"])
    assert set(shape(local_results["run"])) == set(shape(remote_results["run"]))


def test_output_items_are_fetched_across_pages(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    write_azd_project(project, foundry.endpoint)
    foundry.evals.page_cap = 2
    outcome = remote_run(project, factory)
    pages = foundry.calls("GET", r"/output_items$")
    assert len(pages) == 3
    assert "after" not in pages[0].query and pages[1].query["after"].endswith("_0001")
    assert len(load_results(outcome.results_path).tasks) == 5


def test_a_failed_run_is_exit_3_with_the_service_error(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    write_azd_project(project, foundry.endpoint)
    foundry.evals.fail_runs = {
        "code": "AgentNotReachable",
        "message": "agent support-agent:3 timed out",
    }
    with pytest.raises(RemoteRunFailed) as info:
        remote_run(project, factory)
    assert info.value.exit_code == 3
    assert "ended failed" in info.value.message and "AgentNotReachable" in info.value.message
    run = json.loads(next((project / ".agentopt" / "runs").glob("*/run.json")).read_text())
    assert run["status"] == "failed" and run["remote"]["run_id"].startswith("evalrun_")


def test_remote_errors_are_errors_never_scores(project: Path, factory: Any) -> None:
    def agent(item: dict[str, Any], name: str) -> Answer:
        if item["name"] == "hours":
            return Answer(error={"code": "ToolError", "message": "calendar tool failed"})
        return Answer(text=f"{name} answers: {item['query']} 30 days Canada shipped")

    def grader(crit: dict[str, Any], item: dict[str, Any], answer: Answer) -> dict[str, Any]:
        if item["name"] == "shipping" and crit["name"] == "relevance":
            return {"status": "errored", "reason": "judge deployment gpt-4.1-mini is throttled"}
        if item["name"] == "greeting" and crit["name"] == "shop-quality":
            return {"status": "skipped", "reason": "no policy question"}
        return default_grader(crit, item, answer)

    with FakeFoundry(agent=agent, grader=grader) as foundry:
        foundry.add_agent("support-agent", {"kind": "prompt"}, version="3")
        write_azd_project(project, foundry.endpoint)
        outcome = remote_run(project, factory)
    results = load_results(outcome.results_path)
    tasks = {t.name: t for t in results.tasks}
    assert tasks["hours"].status == "error" and tasks["hours"].error is not None
    assert "calendar tool failed" in tasks["hours"].error.message
    relevance = next(e for e in tasks["shipping"].evaluators if e.evaluator == "builtin.relevance")
    assert relevance.status == "error" and relevance.score is None
    assert relevance.error is not None and relevance.error.code == "remoteEvaluatorError"
    assert tasks["shipping"].status == "partial"
    skipped = next(e for e in tasks["greeting"].evaluators if e.evaluator == "shop-quality")
    assert skipped.status == "error" and skipped.error.code == "remoteEvaluatorSkipped"
    assert results.summary.errors_by_kind.get("agentRequestFailed") == 1
    assert outcome.exit_code == 3  # errors beyond --max-errors 0: the verdict is unknown


def test_unchanged_rubric_and_evaluation_are_reused(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    write_azd_project(project, foundry.endpoint)
    remote_run(project, factory)
    second = remote_run(project, factory)
    assert len(foundry.calls("POST", r"^/evaluators/")) == 1
    assert len(foundry.calls("POST", r"^/openai/v1/evals$")) == 1
    assert len(foundry.calls("POST", r"/runs$")) == 2
    assert second.exit_code == 0


def test_a_registered_dataset_is_uploaded_once_and_referenced_by_id(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    write_azd_project(project, foundry.endpoint)
    data = (project / "datasets/shop-eval-seed/shop-eval-seed.jsonl").read_bytes()
    Registry(project).register_dataset("shop-eval-seed", data)
    text = (project / "eval.yaml").read_text()
    (project / "eval.yaml").write_text(
        text.replace(
            "  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl",
            '  name: shop-eval-seed\n  version: "1"',
        )
    )
    first = remote_run(project, factory)
    remote_run(project, factory)
    assert len(foundry.calls("POST", r"/startPendingUpload$")) == 1
    assert foundry.calls("PUT", r"^/blobs/")[0].body == data
    runs = foundry.calls("POST", r"/runs$")
    ids = {r.body["data_source"]["source"]["id"] for r in runs}
    assert ids == {"azureai://accounts/127/projects/proj/data/shop-eval-seed/versions/1"}
    results = load_results(first.results_path)
    assert [t.name for t in results.tasks] == [t["name"] for t in TASKS]
    assert Registry(project).entry("datasets", "shop-eval-seed", "1").remote is not None


def test_portal_url_is_built_from_the_project_id_when_the_service_sends_none(
    project: Path, foundry: FakeFoundry, factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentopt.workflows.remote.eval_submit import portal_run_url

    url = portal_run_url(
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-shop/providers/"
        "Microsoft.CognitiveServices/accounts/shop-ai/projects/shop",
        "eval_1",
        "run_2",
    )
    # azd: base64url (no padding) of the subscription GUID's 16 bytes.
    assert url == (
        "https://ai.azure.com/nextgen/r/Cx9kcRvwTdquw8uScvCVkA,rg-shop,,shop-ai,shop"
        "/build/evaluations/eval_1/run/run_2"
    )
    assert portal_run_url("not an arm id", "e", "r") is None


def test_simulated_user_tasks_are_refused_rather_than_sent_as_single_turns(
    project: Path, foundry: FakeFoundry
) -> None:
    write_azd_project(project, foundry.endpoint)
    data = project / "datasets" / "shop-eval-seed" / "shop-eval-seed.jsonl"
    data.write_text(
        data.read_text() + json.dumps({"name": "sim", "query": "Hi", "goal": "Buy shoes"}) + "\n"
    )
    with pytest.raises(AgentoptError) as caught:
        prepare_remote(RunOptions(remote=True), project, None)
    assert "1 task(s) for a simulated user (sim)" in str(caught.value.problems[0])
    assert not foundry.calls("POST", r".*")  # nothing was sent

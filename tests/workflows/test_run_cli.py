"""`agentopt eval run` end to end through the CLI: inputs, reports, exit codes (cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import ModelCallError
from agentopt.models.providers.mock import register_mock, unregister_mock
from tests.m365_output_check import validate_output

runner = CliRunner()


def run(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def latest_results(project: Path) -> dict:
    runs = sorted((project / ".agentopt" / "runs").iterdir())
    return json.loads((runs[-1] / "results.json").read_text())


def test_adhoc_prompts_are_scored_and_reported(project: Path) -> None:
    code, out = run(
        project,
        "--prompts", "What is 2+2?", "say 4",
        "--expected", "4", "4",
        "--evaluator", "ExactMatch", "--evaluator", "PartialMatch",
        "--agent-model", "mock:echo",
        "--output", "r.html", "--output", "r.xml", "--output", "r.csv", "--output", "r.md",
    )  # fmt: skip
    assert code == 0, out
    results = latest_results(project)
    assert [t["status"] for t in results["tasks"]] == ["fail", "fail"]
    # The echo agent answers "say 4": token F1 with "4" is 2·(1/2·1)/(1/2+1) = 0.667.
    partial = next(e for e in results["tasks"][1]["evaluators"] if "partial" in e["evaluator"])
    assert partial["score"] == pytest.approx(2 / 3, abs=1e-3)
    assert partial["status"] == "pass"
    summary = results["summary"]
    assert summary["tasks"] == 2 and summary["passed"] == 0 and summary["errors"] == 0
    assert results["run"]["dataset"]["format"] == "adhoc"
    for name in ("r.html", "r.xml", "r.csv", "r.md"):
        assert (project / name).stat().st_size > 0
    assert "builtin.exact_match" in out and "Results:" in out
    # No LLM judge ran (deterministic evaluators only): none is named anywhere.
    assert results["run"]["models"]["judge"] is None
    assert "judge " not in out.split("Evaluator", 1)[0]
    assert "gpt-4.1-mini" not in (project / "r.html").read_text()


def test_prompt_and_expected_counts_must_match(project: Path) -> None:
    code, out = run(project, "--prompts", "a", "b", "--expected", "1", "--agent-model", "mock:echo")
    assert code == 2
    assert "--expected" in out


def test_unknown_evaluator_is_a_usage_error_before_any_call(project: Path) -> None:
    calls: list[str] = []
    register_mock("counting", lambda req: calls.append("x") or "ok")
    try:
        code, out = run(
            project, "--prompts", "hi", "--agent-model", "mock:counting", "--evaluator", "Relevanse"
        )
    finally:
        unregister_mock("counting")
    assert code == 2
    assert "Relevanse" in out and "Relevance" in out
    assert calls == []


def test_fail_under_gate_exits_1(project: Path) -> None:
    code, out = run(
        project, "--prompts", "hello", "--expected", "bye", "--evaluator", "ExactMatch",
        "--agent-model", "mock:echo", "--fail-under", "0.5",
    )  # fmt: skip
    assert code == 1
    assert "below --fail-under" in out


@pytest.mark.parametrize(("flag", "value"), [("--min-pass-rate", "50"), ("--fail-under", "70")])
def test_gates_out_of_range_are_refused_before_the_run(
    project: Path, flag: str, value: str
) -> None:
    code, out = run(
        project, "--prompts", "hi", "--expected", "hi", "--evaluator", "ExactMatch",
        "--agent-model", "mock:echo", flag, value,
    )  # fmt: skip
    assert code == 2, out
    assert f"Invalid value for '{flag}'" in out and "less than or equal to 1" in out
    assert not (project / ".agentopt" / "runs").exists()  # nothing ran


def test_min_pass_rate_passes_when_met(project: Path) -> None:
    code, _ = run(
        project, "--prompts", "4", "--expected", "4", "--evaluator", "ExactMatch",
        "--agent-model", "mock:echo", "--min-pass-rate", "1.0", "--fail-under", "1.0",
    )  # fmt: skip
    assert code == 0


def test_agent_errors_beyond_max_errors_exit_3(project: Path) -> None:
    def broken(request):
        raise ModelCallError("server said no", kind="bad_request", provider="mock", model="x")

    register_mock("broken", broken)
    try:
        code, out = run(
            project, "--prompts", "a", "b", "--evaluator", "ExactMatch", "--expected", "a", "b",
            "--agent-model", "mock:broken",
        )  # fmt: skip
        results = latest_results(project)
        code_tolerant, _ = run(
            project, "--prompts", "a", "--evaluator", "ExactMatch", "--expected", "a",
            "--agent-model", "mock:broken", "--max-errors", "5",
        )  # fmt: skip
    finally:
        unregister_mock("broken")
    assert code == 3, out
    assert all(t["status"] == "error" for t in results["tasks"])
    assert results["tasks"][0]["error"]["code"] == "agentRequestFailed"
    assert results["summary"]["errors_by_kind"]["agentRequestFailed"] == 2
    assert code_tolerant == 0


def test_dry_run_sends_nothing_and_prints_the_plan(project: Path) -> None:
    calls: list[str] = []
    register_mock("counting2", lambda req: calls.append("x") or "ok")
    try:
        code, out = run(project, "--prompts", "a", "b", "--agent-model", "mock:counting2",
                        "--eval-model", "mock:json", "--dry-run")  # fmt: skip
    finally:
        unregister_mock("counting2")
    assert code == 0
    assert calls == []
    assert "Dry run" in out and "builtin.relevance ×2" in out
    assert not (project / ".agentopt" / "runs").exists()


def test_baseline_regression_gate(project: Path) -> None:
    prompts = [f"answer {i}" for i in range(10)]
    args = ["--prompts", *prompts, "--expected", *prompts, "--evaluator", "ExactMatch"]
    code, out = run(project, *args, "--agent-model", "mock:echo")
    assert code == 0, out
    base_id = sorted((project / ".agentopt" / "runs").iterdir())[-1].name
    register_mock("wrong", lambda req: "something else")
    try:
        code, out = run(project, *args, "--agent-model", "mock:wrong", "--baseline", base_id)
    finally:
        unregister_mock("wrong")
    assert code == 1
    assert "against the baseline" in out
    # The same agent against itself is no regression.
    code, out = run(project, *args, "--agent-model", "mock:echo", "--baseline", base_id)
    assert code == 0, out
    assert "no regression beyond noise" in out


def test_m365_document_output_is_filled_and_schema_valid(project: Path, m365: Path) -> None:
    src = m365 / "schema" / "v1" / "examples" / "valid" / "minimal.json"
    (project / "evals.json").write_text(src.read_text())
    register_mock("judge5", lambda req: '{"reason": "fine", "score": 5}')
    try:
        code, out = run(
            project, "--agent-model", "mock:echo", "--eval-model", "mock:judge5",
            "--output", "filled.json",
        )  # fmt: skip
    finally:
        unregister_mock("judge5")
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    item = filled["items"][0]
    assert item["response"]
    assert "relevance" in item["scores"] and "coherence" in item["scores"]
    assert latest_results(project)["run"]["models"]["judge"] == "mock:judge5"  # it judged
    assert "judge mock:judge5" in out


def test_filter_limit_and_repeat(project: Path) -> None:
    lines = [
        {"name": "refund_a", "query": "q1", "ground_truth": "q1", "category": "core"},
        {"name": "refund_b", "query": "q2", "ground_truth": "q2", "category": "edge"},
        {"name": "other", "query": "q3", "ground_truth": "q3", "category": "core"},
    ]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    counter = {"n": 0}

    def flaky(request):
        counter["n"] += 1
        return "q1" if counter["n"] % 2 else "nope"

    register_mock("flaky", flaky)
    try:
        code, out = run(
            project, "--prompts-file", "tasks.jsonl", "--filter", "refund*,!category:edge",
            "--repeat", "2", "--evaluator", "ExactMatch", "--agent-model", "mock:flaky",
            "--concurrency", "1",
        )  # fmt: skip
    finally:
        unregister_mock("flaky")
    assert code == 0, out
    results = latest_results(project)
    assert [t["name"] for t in results["tasks"]] == ["refund_a"]
    task = results["tasks"][0]
    assert len(task["repeats"]) == 2
    assert task["flaky"] is True and task["pass_fraction"] == 0.5
    assert results["summary"]["flaky"] == ["refund_a"]


def test_show_compare_out_file_writes_the_comparison(project: Path) -> None:
    for expected in ("hi", "bye"):
        code, out = run(
            project, "--prompts", "hi", "--expected", expected, "--evaluator", "ExactMatch",
            "--agent-model", "mock:echo",
        )  # fmt: skip
        assert code == 0, out
    first, second = sorted(p.name for p in (project / ".agentopt" / "runs").iterdir())
    show = ["-C", str(project), "eval", "show", second, "--compare", first]
    result = runner.invoke(app, [*show, "--out-file", "delta.json"])
    assert result.exit_code == 0, result.output
    data = json.loads((project / "delta.json").read_text())
    assert (data["base_id"], data["current_id"]) == (first, second)
    result = runner.invoke(app, [*show, "--out-file", "delta.md"])
    assert result.exit_code == 0, result.output
    assert f"{second} vs {first}" in (project / "delta.md").read_text()
    result = runner.invoke(app, [*show, "--out-file", "delta.csv"])
    assert result.exit_code == 2 and "a comparison exports to" in result.output

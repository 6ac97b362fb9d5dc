"""ToolCallSelection / ToolCallExecution (M365 schema 1.11) on the evidence the schema
describes: `diagnostics.tool_calls` as reported, or derived from the calls agentopt saw."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentopt.contracts.diagnostics import EVIDENCE_ERROR
from agentopt.contracts.transcript import ToolCallRecord
from agentopt.core.errors import ConfigError
from agentopt.evaluators.base import EvalSample
from agentopt.evaluators.build import build_evaluator

ORDERS = {"plugin_name": "orders", "function_name": "get_order"}
DOCS = {"plugin_name": "docs", "function_name": "search"}


def run(name: str, options: dict[str, Any], sample: EvalSample) -> Any:
    return asyncio.run(build_evaluator({"name": name, "options": options}).evaluate(sample))


def reported(selected: Any = None, executions: Any = None, **extra: Any) -> EvalSample:
    block = {"selected_functions": selected, "executions": executions, **extra}
    return EvalSample(query="q", response="a", diagnostics={"tool_calls": block})


def calls(*tools: dict[str, str]) -> dict[str, Any]:
    return {"calls": [{"tool": t} for t in tools]}


def test_selection_passes_once_each_expected_tool_was_selected() -> None:
    sample = reported([ORDERS, DOCS, ORDERS], [])
    r = run("ToolCallSelection", calls(ORDERS, ORDERS, DOCS), sample)
    assert r.status == "pass" and r.score == 1.0 and r.threshold == 1.0
    assert "orders/get_order" in r.reason and "docs/search" in r.reason


def test_selection_fails_naming_what_was_not_selected() -> None:
    r = run("ToolCallSelection", calls(ORDERS, DOCS), reported([ORDERS], []))
    assert r.status == "fail" and r.score == 0.0
    assert r.reason == "Not selected: docs/search."


def test_selection_compares_names_trimmed_and_case_insensitively() -> None:
    sample = reported([{"plugin_name": " Orders ", "function_name": "GET_ORDER"}], [])
    assert run("ToolCallSelection", calls(ORDERS), sample).status == "pass"


def test_additional_calls_fail_only_when_not_allowed() -> None:
    sample = reported([ORDERS, DOCS], [])
    assert run("ToolCallSelection", calls(ORDERS), sample).status == "pass"
    strict = {**calls(ORDERS), "allow_additional_calls": False}
    r = run("ToolCallSelection", strict, sample)
    assert r.status == "fail" and "not expected" in r.reason and "docs/search" in r.reason


def test_an_unreadable_entry_that_could_decide_is_indeterminate_and_never_a_score() -> None:
    unreadable = {"plugin_name": "orders", "function_name": None}
    r = run("ToolCallSelection", calls(ORDERS), reported([unreadable], []))
    assert r.status == "error" and r.score is None
    assert r.error.code == "toolCallEvidenceIndeterminate"
    # the same entry cannot change a verdict that is already settled either way
    settled = reported([ORDERS, unreadable], [])
    assert run("ToolCallSelection", calls(ORDERS), settled).status == "pass"
    other = {"plugin_name": "crm", "function_name": None}  # cannot be orders/get_order
    assert run("ToolCallSelection", calls(ORDERS), reported([other], [])).status == "fail"
    strict = {**calls(ORDERS), "allow_additional_calls": False}
    r = run("ToolCallSelection", strict, settled)  # it might be an extra tool
    assert r.status == "error" and r.error.code == "toolCallEvidenceIndeterminate"


def test_missing_evidence_is_indeterminate_and_empty_evidence_is_a_fail() -> None:
    r = run("ToolCallSelection", calls(ORDERS), reported(None, None))
    assert r.status == "error" and r.error.code == "toolCallEvidenceIndeterminate"
    with_reason = reported(None, None, evidence_error=EVIDENCE_ERROR)
    assert EVIDENCE_ERROR in run("ToolCallSelection", calls(ORDERS), with_reason).error.message
    assert run("ToolCallSelection", calls(ORDERS), reported([], [])).status == "fail"


def test_execution_counts_successful_executions_per_repeated_identity() -> None:
    two = calls(ORDERS, ORDERS)
    ok, failed = {**ORDERS, "response_status": 200}, {**ORDERS, "response_status": 500}
    assert run("ToolCallExecution", two, reported([], [ok, ok])).status == "pass"
    r = run("ToolCallExecution", two, reported([], [ok, failed]))
    assert r.status == "fail" and "orders/get_order 1 of 2" in r.reason and "HTTP 500" in r.reason
    unknown = {**ORDERS, "response_status": None}
    r = run("ToolCallExecution", two, reported([], [ok, unknown]))
    assert r.status == "error" and r.error.code == "toolCallEvidenceIndeterminate"
    assert run("ToolCallExecution", calls(ORDERS), reported([], [ok, unknown])).status == "pass"


def test_evidence_derived_from_the_calls_agentopt_saw() -> None:
    """Own function tools belong to the agent; MCP tools to their server; a refused call was
    selected but never executed; a tool that failed executed with 500."""
    sample = EvalSample(
        query="q",
        response="a",
        agent_name="support",
        tool_calls=[
            ToolCallRecord(name="get_order", source="mock", result={"status": "shipped"}),
            ToolCallRecord(name="lookup", source="mcp", plugin="orders", error="boom"),
            ToolCallRecord(name="delete_all", source="refused", error="not in allowed_tools"),
        ],
    )
    own = {"plugin_name": "support", "function_name": "get_order"}
    mcp = {"plugin_name": "orders", "function_name": "lookup"}
    refused = {"plugin_name": "support", "function_name": "delete_all"}
    assert run("ToolCallSelection", calls(own, mcp, refused), sample).status == "pass"
    assert run("ToolCallExecution", calls(own), sample).status == "pass"
    assert run("ToolCallExecution", calls(mcp), sample).status == "fail"
    r = run("ToolCallExecution", calls(refused), sample)
    assert r.status == "fail" and "0 of 1" in r.reason


def test_replayed_answers_without_diagnostics_have_no_evidence() -> None:
    sample = EvalSample(query="q", response="a", tool_calls_known=False)
    r = run("ToolCallExecution", calls(ORDERS), sample)
    assert r.status == "error" and r.error.code == "toolCallEvidenceIndeterminate"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"calls": []},
        {"calls": [{"tool": {"plugin_name": "orders"}}]},
        {**calls(ORDERS), "threshold": 0.5},
    ],
)
def test_bad_options_are_refused_when_the_evaluator_is_built(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        build_evaluator({"name": "ToolCallSelection", "options": options})

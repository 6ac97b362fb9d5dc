"""The optimizer's examples are typed records (`RepeatOutcome`), not dicts: what the run engine
returns is read as is, and a saved record's JSON form is checked against the contract when the
example is made — a malformed record is refused, not read as a tool named "None"."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.task import Task, Turn
from agentopt.contracts.task_record import RepeatOutcome
from agentopt.contracts.transcript import ToolCallRecord
from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.toolset import tool_usage
from agentopt.workflows.optimize.strategies.traces import example_view, failed_checks

TASK = Task(name="t", turns=[Turn(query="Where is order 7?")])


def test_a_run_record_is_read_as_typed_fields() -> None:
    record = RepeatOutcome(
        status="fail",
        response="I cannot say.",
        tool_calls=[ToolCallRecord(name="get_order", error="HTTP 500")],
        evaluators=[
            EvalResult(evaluator="builtin.relevance", status="fail", reason="Does not answer.")
        ],
    )
    ex = Example(TASK, 0.0, "fail", record)
    assert ex.record is record  # no JSON round trip
    assert [c.reason for c in failed_checks(ex.record)] == ["Does not answer."]
    usage = tool_usage(["get_order"], [ex])["get_order"]
    assert (usage.calls, usage.failed_calls) == (1, 1)
    view = example_view(ex)
    assert view["tool_calls"][0]["failed"] and view["response"] == "I cannot say."


def test_a_saved_record_is_checked_against_the_contract() -> None:
    ex = Example(TASK, 0.0, "fail", {"tool_calls": [{"name": "get_order"}]})  # type: ignore[arg-type]
    assert isinstance(ex.record, RepeatOutcome) and ex.record.tool_calls[0].name == "get_order"
    with pytest.raises(ValidationError):
        Example(TASK, 0.0, "fail", {"tool_calls": [{"nme": "get_order"}]})  # type: ignore[arg-type]

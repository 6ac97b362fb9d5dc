"""The pieces two reports share now that each is written once: the task grid (the matrix report
and the view's Compare page), a run's numbers as a column, the diff as HTML (the optimize report
and the view's job page), and a single-turn task as one turn."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from report_fixtures import ev, task

from agentopt.contracts.matrix import VariantScore
from agentopt.contracts.task_record import TaskOutcome
from agentopt.contracts.transcript import TurnError
from agentopt.reports import RunResults
from agentopt.reports.compare_many import MultiColumn, compare_many
from agentopt.reports.optimize_diff import diff_html
from agentopt.reports.task_grid import TaskCell, TaskRow, task_rows


def _outcome(name: str, **fields: object) -> TaskOutcome:
    return TaskOutcome.model_validate({"name": name, **fields})


def test_rows_follow_the_first_column_then_tasks_only_later_columns_have() -> None:
    first = {"b": _outcome("b", category="x"), "a": _outcome("a")}
    second = {"c": _outcome("c", category="late"), "b": _outcome("b", category="other")}
    rows = task_rows(
        [first, second],
        TaskRow[TaskCell],
        lambda name: [TaskCell.of(m[name]) if name in m else TaskCell() for m in (first, second)],
    )
    assert [r.task for r in rows] == ["b", "a", "c"]
    assert [r.category for r in rows] == ["x", None, "late"]  # the first column that has it
    assert [c.status is None for c in rows[1].cells] == [False, True]


def test_a_cell_reads_the_mean_over_repeats_and_cuts_only_when_asked() -> None:
    t = _outcome(
        "t",
        status="fail",
        score=0.2,
        mean=0.6,
        response="x" * 10,
        error={"code": "timeout", "message": "slow"},
    )
    cell = TaskCell.of(t, answer_limit=4)
    assert (cell.score, cell.response, cell.error) == (0.6, "xxxx", "timeout: slow")
    assert TaskCell.of(t).response == "x" * 10


def test_a_compared_run_column_holds_its_summary_numbers(
    build: Callable[..., RunResults],
) -> None:
    ref = build([task("a", 0, "pass", [ev("builtin.relevance", "pass", 5)])])
    other = build([task("a", 0, "fail", [ev("builtin.relevance", "fail", 1)])])
    comp = compare_many([ref, other])
    col = comp.columns[1]
    assert isinstance(col, MultiColumn) and isinstance(col, VariantScore)
    numbers = VariantScore.of(col.label, other).model_dump()
    assert {k: getattr(col, k) for k in numbers} == numbers
    assert col.passed == other.summary.passed and col.failed == other.summary.failed
    assert comp.rows[0].cells[1].change == "worse"


def test_diff_lines_get_their_class_and_file_lines_the_page_s_own() -> None:
    lines = ["--- a", "+++ b", "@@ -1 +1 @@", "-old <b>", "+new", " same"]
    plain = diff_html(lines, escape)
    assert '<span class="del">-old &lt;b&gt;</span>' in plain
    assert '<span class="add">+new</span>' in plain and '<span class="hunk">' in plain
    assert plain.startswith('<pre class="diff">--- a\n+++ b\n')  # file lines stay plain
    marked = diff_html(lines, escape, header_class="file")
    assert '<span class="file">--- a</span>' in marked and "\n same" in marked


def test_a_task_as_one_turn_keeps_its_error_which_the_transcript_leaves_to_the_task() -> None:
    t = _outcome(
        "t",
        query="q",
        response="r",
        status="error",
        error=TurnError(code="timeout", message="slow").model_dump(),
        diagnostics={"k": 1},
    )
    turn = t.as_turn()
    assert (turn.query, turn.response, turn.status, turn.diagnostics) == (
        "q",
        "r",
        "error",
        {"k": 1},
    )
    assert turn.error is not None and turn.error.code == "timeout"
    (shown,) = t.transcript_turns()
    assert shown.error is None and shown.response == "r"

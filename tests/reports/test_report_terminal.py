"""What a user reads in the terminal: the end-of-run summary, `eval list`, `eval show --task`."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from report_fixtures import ev, task
from rich.console import Console

from agentopt.core.errors import ConfigError
from agentopt.reports import RunHeader, RunResults, render_run_list, render_summary, render_task


def _console(width: int = 100) -> Console:
    return Console(width=width, record=True, file=io.StringIO(), color_system=None)


def _summary_text(results: RunResults, width: int = 100) -> str:
    console = _console(width)
    render_summary(results, console)
    return console.export_text()


def test_summary_shows_the_numbers(mixed: RunResults) -> None:
    text = _summary_text(mixed)
    assert "Score 0.621" in text or f"Score {mixed.summary.score:.3f}" in text
    assert "95% CI 0.520–0.810" in text
    assert "Pass rate 33.3% (3/9 task runs) · pass 3 · fail 3 · partial 2 · error 1" in text
    assert "partial = an evaluator could not decide · error = the agent failed" in text
    # per-evaluator rows: pass rate, mean, errors
    rel = next(e for e in mixed.summary.evaluators if e.name == "builtin.relevance")
    row = next(line for line in text.splitlines() if "builtin.relevance" in line)
    assert f"{rel.pass_rate * 100:.1f}%" in row and f"{rel.mean:.3f}" in row
    assert row.split()[-1] == str(rel.errors)
    flat = " ".join(text.split())
    assert (
        "Errors: 3 failed calls (agent 1, evaluator 2) — by kind: agentRequestFailed 1, "
        "judgeParseFailed 1, judgeUnavailable 1"
    ) in flat
    agent_row = next(line for line in text.splitlines() if line.strip().startswith("agent "))
    assert "$0.0123" in agent_row and "5,200" in agent_row
    judge_row = next(line for line in text.splitlines() if line.strip().startswith("judge "))
    assert "$0.0456" in judge_row and "1,200" in judge_row
    assert "rate limited 14×, concurrency 16 → 4 → 11" in text


def test_summary_lists_slowest_worst_and_flaky(mixed: RunResults) -> None:
    text = _summary_text(mixed)
    slow = text.split("Slowest tasks")[1].split("Worst tasks")[0]
    assert slow.index("agent-down") < slow.index("rubric-task")  # 30s first
    worst = text.split("Worst tasks")[1].split("Flaky")[0]
    assert "Ignores the refund window" in worst
    assert "turn 2 relevance: Wrong city" in worst
    assert "refund-policy" not in worst  # passing tasks are never "worst"
    assert "Flaky tasks" in text and "66.7%" in text.split("Flaky tasks")[1]


def test_long_reasons_are_truncated_and_lines_fit_80_columns(
    build: Callable[..., RunResults],
) -> None:
    long_reason = "The answer wanders. " * 40
    results = build(
        [task("wordy", 0, "fail", [ev("builtin.relevance", "fail", 2, reason=long_reason)])]
    )
    text = _summary_text(results, width=80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" in text
    assert text.count("wanders") < 40


def test_data_that_looks_like_markup_is_printed_verbatim(mixed: RunResults) -> None:
    console = _console()
    render_task(mixed, "unicode-ünïcødé 東京", console)
    text = console.export_text()
    assert "[bold]not markup[/]" in text
    assert "こんにちは — naïve café ✓ 🚀" in text


def test_interrupted_run_is_flagged(mixed: RunResults) -> None:
    mixed.run.status = "interrupted"
    assert "interrupted — partial results" in _summary_text(mixed)


def test_task_transcript_shows_turns_tools_and_verdicts(mixed: RunResults) -> None:
    console = _console()
    render_task(mixed, "trip-thread", console)
    render_task(mixed, "refund-policy", console)
    text = console.export_text()
    assert "Turn 1/2" in text and "Turn 2/2" in text
    assert "What's the weather like here?" in text
    assert "get_weather" in text and '"city": "Portland"' in text and '"forecast": "sunny"' in text
    assert "Wrong city: answered for Portland" in text
    assert "order service timed out" in text  # a failed tool call shows its error
    assert "✓ mentions_window: Says 30 days." in text  # criterion verdicts from details
    assert "Within 30 days." in text  # ground truth


def test_task_transcript_shows_repeats_and_rubric_dimensions(mixed: RunResults) -> None:
    console = _console()
    render_task(mixed, "flaky-one", console)
    render_task(mixed, "rubric-task", console)
    text = console.export_text()
    assert "Repeats: mean 0.583 ± 0.236, pass fraction 66.7%  FLAKY" in text
    assert "refund_accuracy: 5 ×10 Exact." in text
    assert "escalation: n/a" in text


def test_unknown_task_suggests_close_names(mixed: RunResults) -> None:
    with pytest.raises(ConfigError) as err:
        render_task(mixed, "refund-polcy", _console())
    assert "--task" in str(err.value)
    assert "did you mean: refund-policy" in str(err.value)


def test_run_list(mixed: RunResults) -> None:
    headers = [RunHeader.from_results(mixed)]
    headers.append(
        RunHeader(
            id="20261130-090000-ffffff", status="interrupted", started_at="2026-11-30T09:00:00"
        )
    )
    console = _console(100)
    render_run_list(headers, console)
    text = console.export_text()
    assert "20261129-221500-a1b2c3" in text and "20261130-090000-ffffff" in text
    assert "2026-11-29 22:15" in text
    assert "support-eval (3)" in text
    row = next(line for line in text.splitlines() if "20261129-221500-a1b2c3" in line)
    assert "0.621" in row and "33.3%" in row
    assert row.split()[-1] == "3"  # failed calls: the summary's "Errors: 3 failed calls"
    assert "nightly" in text and "[interrupted]" in text

    narrow = _console(80)
    render_run_list(headers, narrow)
    lines = narrow.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any("20261129-221500-a1b2c3" in line and "0.621" in line for line in lines)

    empty = _console()
    render_run_list([], empty)
    assert "No runs yet" in empty.export_text()

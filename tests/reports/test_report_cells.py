"""A run's numbers are formatted once (reports/cells.py) and every report shows those strings:
the summary cells, a usage row, an evaluator row and a task's tokens/repeats line read the same
in the terminal, the HTML report and the Markdown summary."""

from __future__ import annotations

import io
from collections.abc import Callable
from html import escape

from report_fixtures import ev, task
from rich.console import Console

from agentopt.reports import RunResults
from agentopt.reports.cells import (
    SummaryCells,
    bucket_cells,
    evaluator_cells,
    in_out_text,
    repeats_text,
    usage_cells,
)
from agentopt.reports.html import render_html
from agentopt.reports.markdown import render_markdown
from agentopt.reports.terminal import render_summary, render_task


def _terminal(results: RunResults, task_name: str | None = None) -> str:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    if task_name is None:
        render_summary(results, console)
    else:
        render_task(results, task_name, console)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_summary_cells_format_each_number_once(mixed: RunResults) -> None:
    cells = SummaryCells.of(mixed)
    assert (cells.score, cells.ci, cells.pass_rate) == ("0.621", "95% CI 0.520–0.810", "33.3%")
    assert (cells.cost, cells.duration) == ("$0.0579", "42.0s")
    assert (cells.tokens_in, cells.tokens_out, cells.tokens) == ("14,300", "2,100", "16,400")
    assert cells.cache_hits == "7"
    md = render_markdown(mixed)
    assert f"**{cells.score}** ({cells.ci}) | {cells.pass_rate} |" in md
    assert f"| {cells.cost} | {cells.tokens} | {cells.duration} |" in md
    html = render_html(mixed)
    assert f"cost · {cells.tokens_in} in / {cells.tokens_out} out tokens" in html
    assert f"score · {escape(cells.ci)}" in html
    assert f"Pass rate {cells.pass_rate} (" in _terminal(mixed)


def test_usage_rows_are_the_same_cells_in_html_and_terminal(mixed: RunResults) -> None:
    agent = mixed.summary.usage["agent"]
    assert bucket_cells(agent) == ["14", "5,200", "900", "$0.0123", "2"]
    assert usage_cells(1, 1000, 0, 2.5, 0) == ["1", "1,000", "0", "$2.50", "0"]
    row = "".join(f'<td class="num">{c}</td>' for c in bucket_cells(agent))
    assert f"<tr><td>agent</td>{row}</tr>" in render_html(mixed)
    assert " ".join(["agent", *bucket_cells(agent)]) in " ".join(_terminal(mixed).split())


def test_an_evaluator_row_reads_the_same_in_every_report(build: Callable[..., RunResults]) -> None:
    results = build(
        [
            task("a", 0, "pass", [ev("builtin.relevance", "pass", 5)]),
            task("b", 1, "fail", [ev("builtin.relevance", "fail", 2)]),
        ]
    )
    summary = results.summary.evaluators[0]
    cells = evaluator_cells(summary)
    assert cells == ["50.0%", "0.625", "1", "1", "0"]
    assert f"| builtin.relevance | {' | '.join(cells)} |" in render_markdown(results)
    assert " ".join(["builtin.relevance", *cells]) in " ".join(_terminal(results).split())
    html_cells = "".join(f'<td class="num">{c}</td>' for c in [str(summary.count), *cells])
    assert f"<tr><td>builtin.relevance</td>{html_cells}</tr>" in render_html(results)


def test_a_task_shows_its_tokens_and_repeats_the_same_way(mixed: RunResults) -> None:
    repeated = next(t for t in mixed.tasks if t.repeats)
    heading = repeats_text(repeated)
    assert heading.startswith("Repeats: mean ") and ", pass fraction " in heading
    assert escape(heading) in render_html(mixed)
    shown = _terminal(mixed, repeated.name)
    assert heading in shown
    tokens = in_out_text(repeated.tokens.input, repeated.tokens.output)
    assert tokens.endswith(" out") and f"tokens {tokens}" in shown
    assert in_out_text(1234, 5) == "1,234 in / 5 out"

"""agentopt.reports: every rendering of a run's results (terminal, JSON, HTML, JUnit, CSV,
Markdown, the filled M365 document) from one input, `RunResults` (results.json)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.contracts import (
        RunResults,
        TaskOutcome,
        TurnOutcome,
        load_results,
        parse_results,
        redacted,
    )
    from agentopt.reports.compare import (
        Comparison,
        EvaluatorDelta,
        TaskDelta,
        compare_runs,
        render_comparison,
        write_comparison,
    )
    from agentopt.reports.csv_report import render_csv
    from agentopt.reports.html import render_html
    from agentopt.reports.json_report import results_to_dict, write_results_json
    from agentopt.reports.junit import render_junit
    from agentopt.reports.m365_output import fill_m365_document, m365_score_key
    from agentopt.reports.markdown import render_markdown
    from agentopt.reports.outputs import (
        OUTPUT_FORMATS,
        OutputFile,
        check_output_paths,
        write_outputs,
    )
    from agentopt.reports.terminal import (
        RunHeader,
        render_run_list,
        render_summary,
        render_task,
        summary_renderables,
    )
    from agentopt.reports.terminal_task import find_task

_HOMES = {
    "RunResults": "agentopt.contracts",
    "load_results": "agentopt.contracts",
    "parse_results": "agentopt.contracts",
    "redacted": "agentopt.contracts",
    "TaskOutcome": "agentopt.contracts",
    "TurnOutcome": "agentopt.contracts",
    "Comparison": "agentopt.reports.compare",
    "EvaluatorDelta": "agentopt.reports.compare",
    "TaskDelta": "agentopt.reports.compare",
    "compare_runs": "agentopt.reports.compare",
    "render_comparison": "agentopt.reports.compare",
    "write_comparison": "agentopt.reports.compare",
    "render_csv": "agentopt.reports.csv_report",
    "render_html": "agentopt.reports.html",
    "results_to_dict": "agentopt.reports.json_report",
    "write_results_json": "agentopt.reports.json_report",
    "render_junit": "agentopt.reports.junit",
    "fill_m365_document": "agentopt.reports.m365_output",
    "m365_score_key": "agentopt.reports.m365_output",
    "render_markdown": "agentopt.reports.markdown",
    "OUTPUT_FORMATS": "agentopt.reports.outputs",
    "OutputFile": "agentopt.reports.outputs",
    "check_output_paths": "agentopt.reports.outputs",
    "write_outputs": "agentopt.reports.outputs",
    "RunHeader": "agentopt.reports.terminal",
    "render_run_list": "agentopt.reports.terminal",
    "render_summary": "agentopt.reports.terminal",
    "render_task": "agentopt.reports.terminal",
    "summary_renderables": "agentopt.reports.terminal",
    "find_task": "agentopt.reports.terminal_task",
}

__all__ = [
    "OUTPUT_FORMATS",
    "Comparison",
    "EvaluatorDelta",
    "OutputFile",
    "RunHeader",
    "RunResults",
    "TaskDelta",
    "TaskOutcome",
    "TurnOutcome",
    "check_output_paths",
    "compare_runs",
    "fill_m365_document",
    "find_task",
    "load_results",
    "m365_score_key",
    "parse_results",
    "redacted",
    "render_comparison",
    "render_csv",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_run_list",
    "render_summary",
    "render_task",
    "results_to_dict",
    "summary_renderables",
    "write_comparison",
    "write_outputs",
    "write_results_json",
]

__getattr__ = lazy_exports(__name__, _HOMES)

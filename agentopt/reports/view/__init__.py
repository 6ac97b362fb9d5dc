"""`agentopt view`: pages of a small local web app over `.agentopt/` (runs, a run, compare
2–N runs, optimize jobs, matrix runs), with its stylesheet and script shipped as package
files. The server itself is the CLI's (`cli/view_server.py`)."""

from agentopt.reports.view.compare_page import compare_page, pick_page
from agentopt.reports.view.job_page import job_page
from agentopt.reports.view.layout import page
from agentopt.reports.view.matrix_page import matrix_page
from agentopt.reports.view.run_page import live_run_page, run_page
from agentopt.reports.view.runs_page import runs_page
from agentopt.reports.view.state import RunEntry, ViewState, real_child

__all__ = [
    "RunEntry",
    "ViewState",
    "compare_page",
    "job_page",
    "live_run_page",
    "matrix_page",
    "page",
    "pick_page",
    "real_child",
    "run_page",
    "runs_page",
]

"""Plain (non-terminal) progress is never silent (issue 14 item 3): when nothing finished for
the heartbeat interval, eval run and optimize print a "still running" line."""

from __future__ import annotations

import io
import time

from rich.console import Console

from agentopt.cli.progress import TerminalSink
from agentopt.reports.optimize_live import LiveOptimizeView
from agentopt.workflows.events import Progress


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=120), out


def test_eval_run_plain_output_has_a_heartbeat_while_nothing_finishes():
    console, out = plain_console()
    sink = TerminalSink(console, heartbeat_s=0.3)
    progress = Progress(total=3)
    sink.start(progress, "Running")
    try:
        time.sleep(1.1)
        beats = out.getvalue().count("still running")
        assert beats >= 2, out.getvalue()
        assert "0/3 done, still running" in out.getvalue()
        progress.done = 1
        sink.update(progress, "task_1 pass")
        assert "1/3 done" in out.getvalue()
    finally:
        sink.finish(progress)
    after = out.getvalue()
    time.sleep(0.5)
    assert out.getvalue() == after  # stopped with the run


def test_a_finished_task_resets_the_silence():
    console, out = plain_console()
    sink = TerminalSink(console, every_s=0.0, heartbeat_s=0.6)
    progress = Progress(total=20)
    sink.start(progress, "Running")
    try:
        for i in range(8):  # a task every 0.15 s: never 0.6 s of silence
            time.sleep(0.15)
            progress.done = i + 1
            sink.update(progress, f"task_{i}")
        assert "still running" not in out.getvalue()
    finally:
        sink.close()


def test_quiet_and_terminal_output_have_no_heartbeat_lines():
    console, out = plain_console()
    sink = TerminalSink(console, quiet=True, heartbeat_s=0.2)
    sink.start(Progress(total=1), "Running")
    time.sleep(0.6)
    sink.close()
    assert out.getvalue() == ""


def test_optimize_plain_output_has_a_heartbeat_naming_what_it_waits_for():
    console, out = plain_console()
    view = LiveOptimizeView(console, heartbeat_s=0.3)
    try:
        view.status("scoring the baseline on 6 tasks")
        time.sleep(1.0)
    finally:
        view.close()
    text = out.getvalue()
    assert "scoring the baseline on 6 tasks (still working" in text, text

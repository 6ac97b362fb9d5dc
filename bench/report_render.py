"""What the HTML report costs to render for 1,000 tasks of two judges each (the page must stay
usable for large runs): CPU and wall of `render_html` over a few rounds, the page's size, with
the load average. Moved here from a timed test (issue 39: speed is measured, never asserted)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "reports"))

from report_fixtures import ev, make_results, task

from agentopt.reports import RunResults, render_html
from bench.figures import spread

TASKS = 1000
REPEATS = 5


def thousand_tasks() -> RunResults:
    answer = "The refund window is thirty days from delivery. " * 8
    tasks = [
        task(
            f"task_{i:04d}",
            i,
            "pass" if i % 3 else "fail",
            [
                ev("builtin.relevance", "pass" if i % 3 else "fail", 4 if i % 3 else 2,
                   reason="Addresses the question directly and cites the policy."),
                ev("builtin.coherence", "pass", 4, reason="Clear and well organized."),
            ],
            response=answer,
        )
        for i in range(TASKS)
    ]  # fmt: skip
    return RunResults.model_validate(make_results(tasks))


def run(repeats: int = REPEATS) -> list[dict[str, Any]]:
    results = thousand_tasks()
    html = render_html(results)  # warm: templates compiled
    load = os.getloadavg()[0]
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        render_html(results)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    cpu.sort()
    wall.sort()
    return [
        {
            "bench": "report_render",
            "case": f"render_html, {TASKS:,} tasks × 2 judges",
            "value": f"{spread(cpu)} s CPU (median {cpu[len(cpu) // 2]:.2f}), "
            f"wall {spread(wall)} s",
            "detail": f"{repeats} runs, page {len(html.encode('utf-8')) / 1e6:.2f} MB, "
            f"load {load:.1f} → {os.getloadavg()[0]:.1f}",
        }
    ]


if __name__ == "__main__":
    for row in run():
        print(row)

"""Harness overhead of `eval run` against a local fake OpenAI-compatible server.

1. Zero latency, 1,000 tasks: CPU seconds the agentopt process spends per task (everything but
   the model: resolution, agent loop, evaluators, journal, cache, results, reports).
2. 200 ms latency, 1,000 tasks, concurrency 64: wall time against the ideal
   tasks × latency / concurrency.
The run happens in a child process so the server's own CPU is not counted.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI, slow

TASKS = 1000


def _project(root: Path, n: int) -> Path:
    rows = [{"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)]
    (root / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return root


def _run(project: Path, base_url: str, concurrency: int) -> tuple[float, float, int]:
    """Wall seconds, child CPU seconds, exit code of one `eval run`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "agentopt", "-C", str(project), "-q", "--no-prompt", "eval", "run",
         "--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{base_url}",
         "--evaluator", "ExactMatch", "--concurrency", str(concurrency),
         "--judge-concurrency", str(concurrency)],
        capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
    return wall, cpu, proc.returncode


def run(tasks: int = TASKS) -> list[dict[str, Any]]:
    """Both measurements, as rows for the bench table."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as srv:
        project = _project(Path(tmp), tasks)
        wall, cpu, code = _run(project, srv.base_url, 8)
        rows.append(
            {
                "bench": "run_overhead",
                "case": f"{tasks} tasks, zero latency",
                "value": f"{cpu / tasks * 1000:.2f} ms CPU/task",
                "detail": f"wall {wall:.1f}s, cpu {cpu:.1f}s, exit {code}, {srv.count()} requests",
            }
        )
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as srv:
        srv.handler = lambda req: slow(0.2)
        project = _project(Path(tmp), tasks)
        concurrency = 64
        wall, cpu, code = _run(project, srv.base_url, concurrency)
        ideal = tasks * 0.2 / concurrency
        rows.append(
            {
                "bench": "run_overhead",
                "case": f"{tasks} tasks, 200 ms latency, concurrency {concurrency}",
                "value": f"{wall / ideal:.2f}× ideal",
                "detail": f"wall {wall:.1f}s vs ideal {ideal:.2f}s, exit {code}",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

"""Harness overhead of `eval run` against a local fake OpenAI-compatible server.

1. Zero latency, 1,000 tasks: CPU seconds the agentopt process spends per task (everything but
   the model: resolution, agent loop, evaluators, journal, cache, results, reports).
2. 200 ms latency, 1,000 tasks, concurrency 64, repeated (default 3×): wall time against the
   ideal tasks × latency / concurrency, each repetition with the load average it ran under.
3. The same work split over two agentopt processes (500 tasks, concurrency 32 each, started
   together): what a 2-process engine would gain over one event loop (issue 19, item 6).
4. A code evaluator that burns 10 ms of CPU per task (500 tasks, 200 ms, concurrency 64), on
   the run's process pool (the default) and kept on a thread (`AGENTOPT_EVALUATOR_PROCESSES=0`).

Each run happens in its own measuring wrapper (`bench.peers.measure`), so the fake server's CPU
(in this process) is never counted and one run's peak memory never hides another's.

    python -m bench.run_overhead [--repeat 3] [--tasks 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from bench.figures import spread
from bench.peers.measure import Measurement, measure
from tests.fake_openai import FakeOpenAI, slow

TASKS = 1000
REPEAT = 3
LATENCY_S = 0.2
CONCURRENCY = 64


def child_env() -> dict[str, str]:
    """The caller's environment, with bytecode caching allowed: an installed agentopt has its
    .pyc files; `PYTHONDONTWRITEBYTECODE` (set on this machine) would make every run compile
    agentopt's sources again, which no user pays."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def project(root: Path, n: int, start: int = 0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = [
        {"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"}
        for i in range(start, start + n)
    ]
    (root / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return root


def eval_run(folder: Path, base_url: str, concurrency: int, label: str) -> Measurement:
    """One `eval run` of `folder/tasks.jsonl`, measured."""
    argv = [
        sys.executable, "-m", "agentopt", "-C", str(folder), "-q", "--no-prompt", "eval", "run",
        "--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{base_url}",
        "--evaluator", "ExactMatch", "--concurrency", str(concurrency),
        "--judge-concurrency", str(concurrency),
    ]  # fmt: skip
    return measure(
        argv, cwd=folder, env=child_env(), timeout=1800, logs=folder / "logs", label=label
    )


def _row(case: str, value: str, detail: str) -> dict[str, Any]:
    return {"bench": "run_overhead", "case": case, "value": value, "detail": detail}


def run(tasks: int = TASKS, repeat: int = REPEAT) -> list[dict[str, Any]]:
    """Every measurement, as rows for the bench table."""
    rows: list[dict[str, Any]] = []
    ideal = tasks * LATENCY_S / CONCURRENCY
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(schemas="any") as srv:
        root = Path(tmp)
        eval_run(project(root / "warmup", 10), srv.base_url, 4, "warmup")  # bytecode, disk
        load = os.getloadavg()[0]
        m = eval_run(project(root / "zero", tasks), srv.base_url, 8, "zero")
        rows.append(
            _row(
                f"{tasks} tasks, zero latency",
                f"{m.cpu_s / tasks * 1000:.2f} ms CPU/task",
                f"wall {m.wall_s:.1f} s, cpu {m.cpu_s:.2f} s, peak {m.peak_mb:.0f} MB, "
                f"exit {m.exit_code}, load {load:.1f}",
            )
        )
        srv.handler = lambda req: slow(LATENCY_S)
        ratios = []
        for i in range(repeat):
            load = os.getloadavg()[0]
            m = eval_run(project(root / f"lat{i}", tasks), srv.base_url, CONCURRENCY, f"lat{i}")
            ratios.append(m.wall_s / ideal)
            rows.append(
                _row(
                    f"{tasks} tasks, {LATENCY_S * 1000:.0f} ms latency, concurrency "
                    f"{CONCURRENCY} (#{i + 1})",
                    f"{m.wall_s / ideal:.2f}× ideal",
                    f"wall {m.wall_s:.2f} s vs ideal {ideal:.2f} s, cpu {m.cpu_s:.2f} s, "
                    f"exit {m.exit_code}, load {load:.1f}",
                )
            )
        rows.append(
            _row(
                f"{tasks} tasks, {LATENCY_S * 1000:.0f} ms, concurrency {CONCURRENCY}: range",
                f"{spread(ratios)}× ideal",
                f"{repeat} runs; load average now {os.getloadavg()[0]:.1f}",
            )
        )
        rows.append(_two_processes(root, srv.base_url, tasks, ideal))
        rows.extend(_cpu_evaluator(root, srv.base_url))
    return rows


BURNER = """
import time


class Burner:
    def __init__(self, *, model_config=None, threshold=0.5, options=None):
        pass

    def __call__(self, *, response="", expected_response="", **_):
        end = time.thread_time() + 0.010
        while time.thread_time() < end:
            pass
        return {"score": 1.0 if response == expected_response else 0.0, "reason": "burnt"}
"""


def _cpu_evaluator(root: Path, base_url: str, tasks: int = 500) -> list[dict[str, Any]]:
    """A CPU-bound code evaluator on the pool and on a thread, 200 ms × 64."""
    rows = []
    ideal = tasks * LATENCY_S / CONCURRENCY
    for label, workers in (("process pool", None), ("thread (no pool)", "0")):
        folder = project(root / f"burn-{workers}", tasks)
        evaluators = folder / "custom-evaluators" / "burner"
        evaluators.mkdir(parents=True)
        (evaluators / "burner.py").write_text(BURNER)
        argv = [
            sys.executable, "-m", "agentopt", "-C", str(folder), "-q", "--no-prompt", "eval",
            "run", "--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{base_url}",
            "--evaluator", "burner", "--concurrency", str(CONCURRENCY),
        ]  # fmt: skip
        env = child_env() | ({"AGENTOPT_EVALUATOR_PROCESSES": workers} if workers else {})
        load = os.getloadavg()[0]
        m = measure(argv, cwd=folder, env=env, timeout=1800, logs=folder / "logs", label="burn")
        rows.append(
            _row(
                f"{tasks} tasks, a 10 ms-CPU code evaluator each, 200 ms, c{CONCURRENCY}: {label}",
                f"{m.wall_s / ideal:.2f}× ideal",
                f"wall {m.wall_s:.2f} s vs ideal {ideal:.2f} s, cpu {m.cpu_s:.2f} s (workers "
                f"included), exit {m.exit_code}, load {load:.1f}",
            )
        )
    return rows


def _two_processes(root: Path, base_url: str, tasks: int, ideal: float) -> dict[str, Any]:
    """Half the tasks each in two agentopt processes started together, half the concurrency
    each: the best a 2-process engine could do (no merge step counted)."""
    half = tasks // 2
    results: list[Measurement] = []
    load = os.getloadavg()[0]

    def one(i: int) -> None:
        folder = project(root / f"two{i}", half, start=i * half)
        results.append(eval_run(folder, base_url, CONCURRENCY // 2, f"two{i}"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = max(m.wall_s for m in results)
    cpu = sum(m.cpu_s for m in results)
    return _row(
        f"{tasks} tasks as 2 processes × {half}, concurrency {CONCURRENCY // 2} each",
        f"{wall / ideal:.2f}× ideal",
        f"wall {wall:.2f} s (slower of the two), cpu {cpu:.2f} s (both), "
        f"exits {[m.exit_code for m in results]}, load {load:.1f}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run_overhead", description=__doc__)
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--repeat", type=int, default=REPEAT)
    args = parser.parse_args(argv)
    for row in run(args.tasks, args.repeat):
        print(f"{row['case']}: {row['value']}  ({row['detail']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

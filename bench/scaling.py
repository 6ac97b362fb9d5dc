"""Does `eval run` stay linear and flat in memory as the dataset grows? 1,000, 10,000 and
100,000 tasks at zero latency against the fake server, one `eval run` each: wall, CPU, CPU per
task and peak RSS, and each point's CPU per task relative to the first point (1.00 =
perfectly linear). Budgets: peak RSS ≤ 300 MB at 100,000 tasks (issue 19), and ≤ 1.2× the
10,000-task figure (issue 37). With `--rerun`, each size's `eval run` runs again in the same
project, every call a cache hit: its CPU ÷ the first run's (budget ≤ 0.25 at 10,000, issue 37).

    python -m bench.scaling                  # 1k, 10k, 100k (the last takes minutes)
    python -m bench.scaling --sizes 10000 100000
    python -m bench.scaling --sizes 10000 --rerun
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.run_overhead import eval_run, project
from tests.fake_openai import FakeOpenAI

SIZES = (1_000, 10_000, 100_000)
CONCURRENCY = 8


def run(sizes: tuple[int, ...] = SIZES, rerun: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base: float | None = None
    first_peak: float | None = None
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(schemas="any") as srv:
        root = Path(tmp)
        eval_run(project(root / "warmup", 10), srv.base_url, 4, "warmup")
        for n in sizes:
            srv.requests.clear()  # the server keeps every request: not ours to count
            load = os.getloadavg()[0]
            folder = project(root / f"n{n}", n)
            m = eval_run(folder, srv.base_url, CONCURRENCY, f"n{n}")
            per_task = m.cpu_s / n * 1000
            base = base or per_task
            first_peak = first_peak or m.peak_mb
            rows.append(
                {
                    "bench": "scaling",
                    "case": f"{n:,} tasks, zero latency",
                    "value": f"{per_task:.2f} ms CPU/task · peak {m.peak_mb:.1f} MB",
                    "detail": f"wall {m.wall_s:.1f} s, cpu {m.cpu_s:.1f} s, "
                    f"CPU/task ÷ first point {per_task / base:.2f}, "
                    f"peak ÷ first point {m.peak_mb / first_peak:.3f}, exit {m.exit_code}, "
                    f"load {load:.1f} → {os.getloadavg()[0]:.1f}",
                }
            )
            if rerun:
                srv.requests.clear()
                again = eval_run(folder, srv.base_url, CONCURRENCY, f"n{n}-rerun")
                rows.append(
                    {
                        "bench": "scaling",
                        "case": f"{n:,} tasks again, every call cached",
                        "value": f"CPU ×{again.cpu_s / m.cpu_s:.3f} the first run's",
                        "detail": f"cpu {again.cpu_s:.2f} s vs {m.cpu_s:.2f} s, wall "
                        f"{again.wall_s:.1f} s, peak {again.peak_mb:.0f} MB, requests "
                        f"{srv.count()}, exit {again.exit_code}, load {os.getloadavg()[0]:.1f}",
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rerun", action="store_true", help="each size again, all cached")
    args = parser.parse_args(argv)
    for row in run(tuple(args.sizes), args.rerun):
        print(f"{row['case']}: {row['value']}  ({row['detail']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does `eval run` stay linear and flat in memory as the dataset grows? 1,000, 10,000 and
100,000 tasks at zero latency against the fake server, one `eval run` each: wall, CPU, CPU per
task and peak RSS, and each point's CPU per task relative to the 1,000-task point (1.00 =
perfectly linear). Budget (issue 19): peak RSS ≤ 300 MB at 100,000 tasks.

    python -m bench.scaling                  # 1k, 10k, 100k (the last takes minutes)
    python -m bench.scaling --sizes 1000 10000
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


def run(sizes: tuple[int, ...] = SIZES) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base: float | None = None
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(schemas="any") as srv:
        root = Path(tmp)
        eval_run(project(root / "warmup", 10), srv.base_url, 4, "warmup")
        for n in sizes:
            srv.requests.clear()  # the server keeps every request: not ours to count
            load = os.getloadavg()[0]
            m = eval_run(project(root / f"n{n}", n), srv.base_url, CONCURRENCY, f"n{n}")
            per_task = m.cpu_s / n * 1000
            base = base or per_task
            rows.append(
                {
                    "bench": "scaling",
                    "case": f"{n:,} tasks, zero latency",
                    "value": f"{per_task:.2f} ms CPU/task · peak {m.peak_mb:.0f} MB",
                    "detail": f"wall {m.wall_s:.1f} s, cpu {m.cpu_s:.1f} s, "
                    f"CPU/task ÷ first point {per_task / base:.2f}, exit {m.exit_code}, "
                    f"load {load:.1f} → {os.getloadavg()[0]:.1f}",
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    for row in run(tuple(args.sizes)):
        print(f"{row['case']}: {row['value']}  ({row['detail']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

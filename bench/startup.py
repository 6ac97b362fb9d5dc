"""Startup CPU of the commands people run most often in scripts and CI: `agentopt --version`
and `agentopt eval validate` (budget: 0.4 s of CPU each, issue 19). Each command runs a few
times as a child process; the child's user + system CPU is reported (min and max), with the
load average, since these 2-core machines are shared."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.run_overhead import child_env

REPEATS = 5


def _cpu(argv: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=child_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(repeats: int = REPEATS) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks = [{"name": f"t{i}", "query": f"q{i}", "ground_truth": "a"} for i in range(20)]
        (root / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
        commands = {
            "agentopt --version": ["--version"],
            "agentopt eval validate tasks.jsonl": ["eval", "validate", "tasks.jsonl"],
        }
        for label, args in commands.items():
            argv = [sys.executable, "-m", "agentopt", *args]
            _cpu(argv, root)  # warm: bytecode and disk caches
            load = os.getloadavg()[0]
            cpus = sorted(_cpu(argv, root) for _ in range(repeats))
            rows.append(
                {
                    "bench": "startup",
                    "case": label,
                    "value": f"{cpus[0]:.2f}–{cpus[-1]:.2f} s CPU",
                    "detail": f"{repeats} runs, budget 0.40 s, load {load:.1f}",
                }
            )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

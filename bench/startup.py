"""Startup CPU of the commands people run most often in scripts and CI: `agentopt --version`,
`agentopt --help` and `agentopt eval validate` (budgets: 0.4 s of CPU each, issue 19; `--help`
≤ 1.3× `--version` and `eval validate` of 5 tasks ≤ 0.25 s, issue 37). The commands run in
turn, a few rounds, each as a child process; the child's user + system CPU is reported (min and
max), with the load average, since these 2-core machines are shared; `--help` ÷ `--version` is
taken within each round."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.figures import spread
from bench.run_overhead import child_env

REPEATS = 5


def _cpu(argv: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=child_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:  # a command that fails early would look fast
        tail = (done.stderr or done.stdout).decode(errors="replace").strip()[-300:]
        raise RuntimeError(f"{' '.join(argv[3:])} exited {done.returncode}: {tail}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(repeats: int = REPEATS) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks = [{"name": f"t{i}", "query": f"q{i}", "ground_truth": "a"} for i in range(5)]
        (root / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
        commands = {
            "agentopt --version": (["--version"], 0.4),
            "agentopt --help": (["--help"], 0.4),
            "agentopt eval validate tasks.jsonl (5 tasks)": (
                ["eval", "validate", "tasks.jsonl"],
                0.25,
            ),
        }
        argvs = {k: [sys.executable, "-m", "agentopt", *a] for k, (a, _) in commands.items()}
        for argv in argvs.values():
            _cpu(argv, root)  # warm: bytecode and disk caches
        load = os.getloadavg()[0]
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(repeats):  # in turn: a burst of load moves every command alike
            for label, argv in argvs.items():
                cpus[label].append(_cpu(argv, root))
        for label, (_, budget) in commands.items():
            got = sorted(cpus[label])
            rows.append(
                {
                    "bench": "startup",
                    "case": label,
                    "value": f"{spread(got)} s CPU (median {got[len(got) // 2]:.2f})",
                    "detail": f"{repeats} runs, budget {budget:.2f} s, load {load:.1f} → "
                    f"{os.getloadavg()[0]:.1f}",
                }
            )
        ratios = sorted(
            h / v for h, v in zip(cpus["agentopt --help"], cpus["agentopt --version"], strict=True)
        )
        median = ratios[len(ratios) // 2]
        rows.append(
            {
                "bench": "startup",
                "case": "--help ÷ --version",
                "value": f"×{spread(ratios)} (median ×{median:.2f})",
                "detail": "CPU within each round; budget ×1.30",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

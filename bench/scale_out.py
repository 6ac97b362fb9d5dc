"""Scale-out on Ray (`--executor ray`) beside the local executor, on this machine.

1. 2,000 tasks scored by a CPU-heavy code evaluator (20 ms of pure-Python work per task, counted
   in thread CPU time so the amount of work is fixed), the agent a zero-latency fake server:
   `eval run` locally (one process: the evaluator threads share one GIL) vs on a local Ray
   instance with 2 workers. Wall time of the whole command (Ray's start included) and of the
   run itself (`duration_s` in results.json), and their ratios.
2. 10,000 tasks (exact match, zero latency) on Ray: the driver's peak RSS (VmHWM of the agentopt
   process; Ray's own processes are not counted), beside the same run locally.

Each run is a child `agentopt` process. The load average is printed with the rows: these
2-core machines are shared.

    python -m bench scale_out
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI

BENCH = "scale_out"
CPU_TASKS = 2000
MEMORY_TASKS = 10000
BURN = '''
"""Exact match after 20 ms of pure-Python CPU work (thread CPU time, so the work is fixed)."""
import time


class Burn:
    def __init__(self, *, model_config=None, threshold=1.0, options=None):
        self.threshold = threshold

    def __call__(self, *, prompt="", expected_response="", response="", **_):
        end = time.thread_time() + 0.020
        n = 0
        while time.thread_time() < end:
            n += sum(i * i for i in range(200))
        return {"score": 1.0 if response == expected_response else 0.0, "reason": str(n > 0)}
'''


def _project(root: Path, n: int, burn: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = [{"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)]
    (root / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if burn:
        folder = root / "custom-evaluators" / "burn"
        folder.mkdir(parents=True)
        (folder / "burn.py").write_text(BURN)
    return root


def _peak_rss(pid: int, stop: threading.Event, out: list[int]) -> None:
    while not stop.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    out.append(int(line.split()[1]))
        except OSError:
            return
        time.sleep(0.1)


def _run(project: Path, base_url: str, evaluator: str, *extra: str) -> dict[str, Any]:
    """One `eval run` child: wall seconds, the run's own duration, driver peak RSS (MiB)."""
    argv = [sys.executable, "-m", "agentopt", "-C", str(project), "-q", "--no-prompt", "eval",
            "run", "--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{base_url}",
            "--evaluator", evaluator, *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    peaks: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_peak_rss, args=(proc.pid, stop, peaks), daemon=True)
    sampler.start()
    output, _ = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    results = sorted((project / ".agentopt" / "runs").glob("*/results.json"))
    summary = json.loads(results[-1].read_text())["summary"] if results else {}
    if proc.returncode != 0:
        sys.stderr.write(output.decode(errors="replace")[-2000:])
    return {
        "wall": wall,
        "run": float(summary.get("duration_s") or 0.0),
        "peak_mib": max(peaks, default=0) / 1024,
        "code": proc.returncode,
        "passed": summary.get("passed"),
    }


def _load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def run() -> list[dict[str, Any]]:
    """Both measurements, as rows for the bench table."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(schemas="any") as srv:
        root = Path(tmp)
        local = _run(_project(root / "cpu-local", CPU_TASKS, True), srv.base_url, "burn")
        ray = _run(
            _project(root / "cpu-ray", CPU_TASKS, True), srv.base_url, "burn", "--executor", "ray"
        )
        rows.append(
            {
                "bench": BENCH,
                "case": f"{CPU_TASKS} tasks × 20 ms CPU evaluator: local vs Ray, 2 workers",
                "value": f"{local['wall'] / ray['wall']:.2f}× faster on Ray "
                f"({local['run'] / ray['run']:.2f}× without Ray's start)",
                "detail": f"local wall {local['wall']:.1f}s (run {local['run']:.1f}s); Ray wall "
                f"{ray['wall']:.1f}s (run {ray['run']:.1f}s); passed {local['passed']}/"
                f"{ray['passed']}; exit {local['code']}/{ray['code']}; {_load()}",
            }
        )
        mem_local = _run(
            _project(root / "mem-local", MEMORY_TASKS, False), srv.base_url, "ExactMatch"
        )
        mem_ray = _run(
            _project(root / "mem-ray", MEMORY_TASKS, False),
            srv.base_url,
            "ExactMatch",
            "--executor",
            "ray",
        )
        rows.append(
            {
                "bench": BENCH,
                "case": f"{MEMORY_TASKS} tasks on Ray: driver peak RSS",
                "value": f"{mem_ray['peak_mib']:.0f} MiB",
                "detail": f"local executor {mem_local['peak_mib']:.0f} MiB; Ray wall "
                f"{mem_ray['wall']:.1f}s (run {mem_ray['run']:.1f}s) vs local "
                f"{mem_local['wall']:.1f}s; passed {mem_ray['passed']}/{mem_local['passed']}; "
                f"exit {mem_ray['code']}/{mem_local['code']}; {_load()}",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

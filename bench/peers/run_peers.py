"""agentopt beside promptfoo and Inspect AI: the same 1,000 tasks, the same local fake server.

For each latency (zero, then 200 ms per answer) the fake OpenAI-compatible server runs in this
process and each tool runs the whole dataset once as a child process, at the same concurrency
(16 at zero latency, 64 at 200 ms). Reported per tool: CPU ms per task (user + sys of the
tool's process tree), wall seconds, peak RSS, and each peer's ratio to agentopt (peer ÷
agentopt: ×2.0 means the peer needed twice what agentopt did), with the pass count and the
number of requests the server saw as a sanity check. Each tool first runs a small warm-up
dataset (unmeasured) so the first measured run does not pay for cold disk caches alone.

The peers are installed by `bench.peers.install` into a throwaway cache folder; one that cannot
be installed or does not complete its warm-up is reported as unavailable and the rest go on.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.peers.dataset import DatasetFiles, write_all
from bench.peers.install import Peer, install_all
from bench.peers.measure import Measurement, measure
from bench.peers.tools import Agentopt, Inspect, Promptfoo, Tool
from tests.fake_openai import FakeOpenAI, slow

BENCH = "peers"
TASKS = 1000
WARMUP_TASKS = 10
SCENARIOS: list[tuple[float, int]] = [(0.0, 16), (0.2, 64)]
"""(seconds of latency per answer, concurrency) pairs, run in this order."""
RUN_TIMEOUT = 600.0


@dataclass(frozen=True)
class Outcome:
    """One tool's measured run of the dataset."""

    measurement: Measurement
    passes: int | None
    requests: int
    """Chat-completion requests the fake server received during the run."""
    peak_in_flight: int
    """Most requests the server was answering at once: the concurrency the tool reached."""
    server_cpu_s: float
    """CPU the fake server (this process) spent meanwhile: it shares the machine's cores."""

    def ok(self, tasks: int) -> bool:
        return not self.measurement.timed_out and self.passes == tasks


def _run_once(
    tool: Tool, srv: FakeOpenAI, files: DatasetFiles, workdir: Path, concurrency: int
) -> Outcome:
    before = srv.count()
    srv.peak_in_flight = 0
    own = resource.getrusage(resource.RUSAGE_SELF)
    invocation = tool.prepare(workdir, files, srv.base_url, concurrency)
    result = measure(
        invocation.argv,
        cwd=invocation.cwd,
        env=invocation.env,
        timeout=RUN_TIMEOUT,
        logs=workdir / "logs",
        label=tool.name,
    )
    after = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = (after.ru_utime - own.ru_utime) + (after.ru_stime - own.ru_stime)
    passes = tool.passes(invocation, result)
    return Outcome(result, passes, srv.count() - before, srv.peak_in_flight, server_cpu)


def _warm_up(tools: list[Tool], root: Path) -> dict[str, str]:
    """Run each tool on a small dataset; the reason it failed, by tool name."""
    failures: dict[str, str] = {}
    with FakeOpenAI() as srv:
        files = write_all(root / "warmup-data", WARMUP_TASKS, srv.base_url)
        for tool in tools:
            outcome = _run_once(tool, srv, files, root / f"warmup-{tool.name}", concurrency=4)
            if not outcome.ok(WARMUP_TASKS):
                m = outcome.measurement
                failures[tool.name] = (
                    f"warm-up run failed (exit {m.exit_code}, {outcome.passes}/{WARMUP_TASKS} "
                    f"passed): {m.tail(300)}"
                )
    return failures


def _scenario(
    tools: list[Tool], root: Path, tasks: int, latency: float, concurrency: int
) -> dict[str, Outcome]:
    label = f"{round(latency * 1000)}ms"
    outcomes: dict[str, Outcome] = {}
    with FakeOpenAI() as srv:
        if latency:
            srv.handler = lambda req, d=latency: slow(d)
        files = write_all(root / f"data-{label}", tasks, srv.base_url)
        for tool in tools:
            print(f"  {label}: {tool.name} on {tasks} tasks ...", flush=True)
            outcomes[tool.name] = _run_once(
                tool, srv, files, root / f"{label}-{tool.name}", concurrency
            )
    return outcomes


def _ratio(value: float, base: float) -> str:
    return f"×{value / base:.2f}" if base > 0 else "n/a"


def _rows(
    tools: list[Tool], outcomes: dict[str, Outcome], tasks: int, latency: float, concurrency: int
) -> list[dict[str, Any]]:
    rows = []
    base = outcomes.get("agentopt")
    for tool in tools:
        out = outcomes[tool.name]
        m = out.measurement
        value = f"{m.cpu_s / tasks * 1000:.2f} ms CPU/task · {m.wall_s:.1f} s · {m.peak_mb:.0f} MB"
        sanity = (
            f"{out.passes}/{tasks} passed · {out.requests} requests "
            f"(≤{out.peak_in_flight} at once, server CPU {out.server_cpu_s:.1f} s) "
            f"· exit {m.exit_code}"
        )
        if not out.ok(tasks):
            why = "timed out" if m.timed_out else f"{out.passes}/{tasks} passed"
            value = f"FAILED ({why}) · {value}"
        if not out.ok(tasks) or m.exit_code != 0:
            sanity += f" · output: {m.tail(200)!r}"
        if tool.name == "agentopt" or base is None or not base.ok(tasks):
            detail = sanity
        else:
            b = base.measurement
            detail = (
                f"÷ agentopt: CPU {_ratio(m.cpu_s, b.cpu_s)} · wall {_ratio(m.wall_s, b.wall_s)}"
                f" · peak {_ratio(m.peak_mb, b.peak_mb)} · {sanity}"
            )
        rows.append(
            {
                "bench": BENCH,
                "case": f"{tool.name} {tool.version}, {round(latency * 1000)} ms, "
                f"concurrency {concurrency}",
                "value": value,
                "detail": detail,
            }
        )
    return rows


def _machine(load_before: float, peers: dict[str, Peer]) -> dict[str, Any]:
    """What the numbers were measured on: a loaded machine inflates wall times."""
    node = shutil.which("node")
    node_version = (
        subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
        if node
        else "none"
    )
    notes = ", ".join(f"{p.name}: {p.notes}" for p in peers.values() if p.notes)
    return {
        "bench": BENCH,
        "case": "machine",
        "value": f"{os.cpu_count()} CPUs, load {load_before:.1f} → {os.getloadavg()[0]:.1f}",
        "detail": f"Python {platform.python_version()}, Node {node_version}"
        + (f", {notes}" if notes else ""),
    }


def run(tasks: int = TASKS) -> list[dict[str, Any]]:
    """Install (or reuse) the peers, run every scenario, and return one row per tool each."""
    rows: list[dict[str, Any]] = []
    print("peers: installing or reusing promptfoo and Inspect AI ...", flush=True)
    tools: list[Tool] = [Agentopt()]
    peers = install_all()
    load_before = os.getloadavg()[0]
    for peer in peers.values():
        if peer.unavailable:
            rows.append(_unavailable(peer.name, peer.unavailable))
        elif peer.name == "promptfoo":
            tools.append(Promptfoo(peer))
        else:
            tools.append(Inspect(peer))
    with tempfile.TemporaryDirectory(prefix="agentopt-bench-peers-") as tmp:
        root = Path(tmp)
        print("peers: warm-up runs ...", flush=True)
        failures = _warm_up(tools, root)
        for name, reason in failures.items():
            rows.append(_unavailable(name, reason))
        tools = [t for t in tools if t.name not in failures]
        for latency, concurrency in SCENARIOS:
            outcomes = _scenario(tools, root, tasks, latency, concurrency)
            rows.extend(_rows(tools, outcomes, tasks, latency, concurrency))
    rows.append(_machine(load_before, peers))
    return rows


def _unavailable(name: str, reason: str) -> dict[str, Any]:
    return {"bench": BENCH, "case": name, "value": "unavailable", "detail": reason}


if __name__ == "__main__":
    for row in run():
        print(row)

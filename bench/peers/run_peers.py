"""agentopt beside promptfoo and Inspect AI: the same 1,000 tasks, the same local fake server.

Runs, each one `(workload, latency, concurrency, logging)`, every tool once per repetition:

- the three workloads (`workloads.py`: single-turn, one LLM judge per task, two tool rounds)
  at zero latency, concurrency 16;
- single-turn with every answer taking 200 ms, concurrency 64;
- single-turn at zero latency with each tool's other logging setting (`Tool.logging`).

The tools run in alternating order across repetitions (forward, then reversed), so none is
always first on a cold machine or last on a hot one. Reported per tool: CPU ms per task (user +
sys of the tool's process tree), wall seconds, peak RSS, each peer's ratio to agentopt measured
within the same repetition (×2.0 = twice agentopt's), with the pass count and the requests the
server saw as a sanity check. Each tool first runs a small warm-up dataset (unmeasured).

The peers are installed by `bench.peers.install` into a throwaway cache folder; one that cannot
be installed or does not complete its warm-up is reported as unavailable and the rest go on.

    python -m bench.peers [--repeat 2] [--tasks 1000] [--workloads single judge tools]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.figures import spread
from bench.peers.dataset import DatasetFiles, write_all
from bench.peers.install import Peer, install_all
from bench.peers.measure import Measurement, measure
from bench.peers.tools import Agentopt, Inspect, Promptfoo, Tool
from bench.peers.workloads import CALLS_PER_TASK, WORKLOADS, answer
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, slow

BENCH = "peers"
TASKS = 1000
WARMUP_TASKS = 10
REPEAT = 2
RUN_TIMEOUT = 900.0


@dataclass(frozen=True)
class Case:
    """One configuration every tool runs."""

    workload: str
    latency: float
    concurrency: int
    logging: str = "default"

    @property
    def label(self) -> str:
        extra = "" if self.logging == "default" else ", other logging"
        return f"{self.workload}, {round(self.latency * 1000)} ms, c{self.concurrency}{extra}"


def cases(workloads: list[str]) -> list[Case]:
    out = [Case(w, 0.0, 16) for w in workloads]
    if "single" in workloads:
        out += [Case("single", 0.2, 64), Case("single", 0.0, 16, "alt")]
    return out


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


def _handler(latency: float) -> Any:
    def handle(req: RecordedRequest) -> Reply | None:
        reply = answer(req)
        return slow(latency, reply) if latency else reply

    return handle


def _run_once(
    tool: Tool, srv: FakeOpenAI, files: DatasetFiles, workdir: Path, case: Case
) -> Outcome:
    before = srv.count()
    srv.peak_in_flight = 0
    own = resource.getrusage(resource.RUSAGE_SELF)
    invocation = tool.prepare(workdir, files, srv.base_url, case.concurrency, case.logging)
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
    requests, peak = srv.count() - before, srv.peak_in_flight
    srv.requests.clear()  # the server keeps every request: counted, then dropped
    return Outcome(result, passes, requests, peak, server_cpu)


def _warm_up(tools: list[Tool], root: Path) -> dict[str, str]:
    """Run each tool on a small dataset; the reason it failed, by tool name."""
    failures: dict[str, str] = {}
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = _handler(0.0)
        files = write_all(root / "warmup-data", WARMUP_TASKS, srv.base_url)
        for tool in tools:
            outcome = _run_once(
                tool, srv, files, root / f"warmup-{tool.name}", Case("single", 0, 4)
            )
            if not outcome.ok(WARMUP_TASKS):
                m = outcome.measurement
                failures[tool.name] = (
                    f"warm-up run failed (exit {m.exit_code}, {outcome.passes}/{WARMUP_TASKS} "
                    f"passed): {m.tail(300)}"
                )
    return failures


def _case(
    tools: list[Tool], root: Path, tasks: int, case: Case, rep: int
) -> dict[str, Outcome | str]:
    """Every tool on `case`, in this repetition's order; a tool that cannot run the workload
    maps to the reason."""
    tag = f"{case.workload}-{round(case.latency * 1000)}ms-{case.logging}-r{rep}"
    outcomes: dict[str, Outcome | str] = {}
    order = tools if rep % 2 == 0 else list(reversed(tools))
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = _handler(case.latency)
        files = write_all(root / f"data-{tag}", tasks, srv.base_url, case.workload)
        for tool in order:
            reason = tool.unsupported(case.workload)
            if reason:
                outcomes[tool.name] = reason
                continue
            print(f"  {case.label} (#{rep + 1}): {tool.name} on {tasks} tasks ...", flush=True)
            outcome = _run_once(tool, srv, files, root / f"{tag}-{tool.name}", case)
            outcomes[tool.name] = outcome
    return outcomes


def _ratio(value: float, base: float) -> str:
    return f"×{value / base:.2f}" if base > 0 else "n/a"


def _rows(
    tools: list[Tool], reps: list[dict[str, Outcome | str]], tasks: int, case: Case
) -> list[dict[str, Any]]:
    """One row per tool: values over the repetitions, ratios to agentopt within each one."""
    rows = []
    for tool in tools:
        runs = [r[tool.name] for r in reps]
        if isinstance(runs[0], str):
            rows.append(_row(case, tool, "not run", runs[0]))
            continue
        outs = [r for r in runs if isinstance(r, Outcome)]
        cpu = [o.measurement.cpu_s / tasks * 1000 for o in outs]
        wall = [o.measurement.wall_s for o in outs]
        peak = [o.measurement.peak_mb for o in outs]
        failed = [o for o in outs if not o.ok(tasks)]
        value = (
            f"{spread(cpu)} ms CPU/task · {spread(wall, '{:.1f}')} s · {spread(peak, '{:.0f}')} MB"
        )
        sanity = (
            f"passed {[o.passes for o in outs]}/{tasks} · requests {[o.requests for o in outs]}"
            f" (≤{max(o.peak_in_flight for o in outs)} at once) · exits "
            f"{[o.measurement.exit_code for o in outs]}"
        )
        if failed:
            value = f"FAILED ({len(failed)} of {len(outs)} runs) · {value}"
            sanity += f" · output: {failed[0].measurement.tail(200)!r}"
        detail = sanity
        if tool.name != "agentopt":
            pairs = [
                (o, b)
                for o, r in zip(outs, reps, strict=True)
                if isinstance(b := r.get("agentopt"), Outcome) and b.ok(tasks) and o.ok(tasks)
            ]
            if pairs:
                c = [o.measurement.cpu_s / b.measurement.cpu_s for o, b in pairs]
                w = [o.measurement.wall_s / b.measurement.wall_s for o, b in pairs]
                p = [o.measurement.peak_mb / b.measurement.peak_mb for o, b in pairs]
                detail = (
                    f"÷ agentopt (same repetition): CPU ×{spread(c)} · wall ×{spread(w)} · "
                    f"peak ×{spread(p)} · {sanity}"
                )
        rows.append(_row(case, tool, value, detail))
    return rows


def _row(case: Case, tool: Tool, value: str, detail: str) -> dict[str, Any]:
    return {
        "bench": BENCH,
        "case": f"{tool.name} {tool.version}: {case.label}",
        "value": value,
        "detail": detail,
    }


def _machine(load_before: float, peers: dict[str, Peer], repeat: int) -> dict[str, Any]:
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
        "detail": f"{repeat} repetitions, alternating order; Python {platform.python_version()},"
        f" Node {node_version}" + (f", {notes}" if notes else ""),
    }


def run(
    tasks: int = TASKS, repeat: int = REPEAT, workloads: list[str] | None = None
) -> list[dict[str, Any]]:
    """Install (or reuse) the peers, run every case `repeat` times, one row per tool each."""
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
        done: dict[Case, list[dict[str, Outcome | str]]] = {}
        for case in cases(list(workloads or WORKLOADS)):
            done[case] = [_case(tools, root, tasks, case, rep) for rep in range(repeat)]
            rows.extend(_rows(tools, done[case], tasks, case))
    rows.extend(_logging_rows(tools, done))
    rows.append(
        {
            "bench": BENCH,
            "case": "model calls per task",
            "value": ", ".join(f"{w} {n}" for w, n in CALLS_PER_TASK.items()),
            "detail": "as the fake server plays the model (bench/peers/workloads.py)",
        }
    )
    rows.append(_machine(load_before, peers, repeat))
    return rows


def _logging_rows(
    tools: list[Tool], done: dict[Case, list[dict[str, Outcome | str]]]
) -> list[dict[str, Any]]:
    """Each tool's default logging, and its CPU with logging on ÷ off (same repetition)."""
    default, alt = Case("single", 0.0, 16), Case("single", 0.0, 16, "alt")
    rows = []
    for tool in tools:
        ratio = "not measured"
        if default in done and alt in done:
            values = []
            for a, b in zip(done[default], done[alt], strict=True):
                first, other = a[tool.name], b[tool.name]
                if isinstance(first, Outcome) and isinstance(other, Outcome):
                    # agentopt logs only when asked (--debug); the peers log by default.
                    on, off = (other, first) if tool.name == "agentopt" else (first, other)
                    values.append(on.measurement.cpu_s / off.measurement.cpu_s)
            if values:
                ratio = f"CPU with logging on ÷ off ×{spread(values)}"
        rows.append(
            {
                "bench": BENCH,
                "case": f"{tool.name} logging",
                "value": ratio,
                "detail": f"default: {tool.logging['default']}; other: {tool.logging['alt']}",
            }
        )
    return rows


def _unavailable(name: str, reason: str) -> dict[str, Any]:
    return {"bench": BENCH, "case": name, "value": "unavailable", "detail": reason}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.run_peers", description=__doc__)
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--repeat", type=int, default=REPEAT)
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    args = parser.parse_args(argv)
    for row in run(args.tasks, args.repeat, args.workloads):
        print(f"{row['case']}: {row['value']}  ({row['detail']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How far agentopt is from the floor: `eval run` against a raw asyncio client
(`bench/floor_client.py`: keep-alive, hand-written HTTP/1.1, `json.loads`, the same requests
and the same exact-match check) on the same 1,000 tasks and the same keep-alive asyncio server
(`bench/floor_server.py`), at 0 ms and 200 ms per answer, concurrency 16 and 64.

The tools run interleaved — each repetition of a case runs every tool once, the order reversed
in every other repetition — so a change in the machine's load moves both sides of a ratio.
Printed per case: each tool's CPU per task (user + sys of its process tree, startup included),
wall, peak RSS, and agentopt ÷ raw for CPU and wall within each repetition, with the load
average before and after. The wall is split where the server saw it: spawn → the first
request, first → last request, last request → exit (one monotonic clock for both
processes), and each tool's part is set against the raw client's, so a ratio says whether the
gap is the start, the engine or the finish. Each run is checked: every task passed, exactly
one request a task reached the server. With `--peers`, promptfoo and Inspect AI (installed by
`bench.peers.install`) run in the same repetitions.

    python -m bench floor                          # 4 cases × 2 repetitions, a few minutes
    python -m bench.floor --repeat 3 --peers
    python -m bench.floor --cases 200:64 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.figures import spread
from bench.floor_server import FloorServer
from bench.peers.dataset import DatasetFiles, write_all
from bench.peers.measure import Measurement, measure
from bench.peers.tools import Agentopt, Invocation, Tool, base_env

TASKS = 1000
REPEAT = 2
CASES = ((0.0, 16), (0.0, 64), (0.2, 16), (0.2, 64))
WARMUP_TASKS = 10
RUN_TIMEOUT = 600.0
CLIENT = Path(__file__).with_name("floor_client.py")


@dataclass
class Raw:
    """The floor client as a bench tool (`bench.peers.tools.Tool`)."""

    name: str = "raw"
    version: str = "asyncio"
    logging: dict[str, str] = field(default_factory=lambda: {"default": "none", "alt": "none"})

    def unsupported(self, workload: str) -> str | None:
        return None if workload == "single" else "single-turn only"

    def prepare(
        self,
        workdir: Path,
        files: DatasetFiles,
        base_url: str,
        concurrency: int,
        logging: str = "default",
    ) -> Invocation:
        workdir.mkdir(parents=True, exist_ok=True)
        out = workdir / "raw-result.json"
        argv = [
            sys.executable, str(CLIENT), str(files.agentopt_tasks), base_url, str(concurrency),
            str(out),
        ]  # fmt: skip
        return Invocation(argv=argv, cwd=workdir, env=base_env(), workdir=workdir)

    def passes(self, run: Invocation, result: Measurement) -> int | None:
        out = run.workdir / "raw-result.json"
        return int(json.loads(out.read_text())["passed"]) if out.exists() else None


@dataclass(frozen=True)
class Run:
    """One tool's measured run of one case."""

    tool: str
    measurement: Measurement
    passes: int | None
    requests: int
    connections: int
    peak_in_flight: int
    server_cpu_s: float
    load: float
    first_at: float | None = None
    """`time.monotonic()` when the server got the run's first request, and (`last_at`) its last."""
    last_at: float | None = None

    def ok(self, tasks: int) -> bool:
        return not self.measurement.timed_out and self.passes == tasks and self.requests == tasks

    def phases(self) -> tuple[float, float, float] | None:
        """Where the wall went: spawn → the first request the server got, first → last
        request, last request → exit (the last answer's latency included)."""
        m = self.measurement
        if self.first_at is None or self.last_at is None or not m.started:
            return None
        return self.first_at - m.started, self.last_at - self.first_at, m.ended - self.last_at


def _once(tool: Tool, srv: FloorServer, files: DatasetFiles, workdir: Path, c: int) -> Run:
    srv.reset()
    load = os.getloadavg()[0]
    inv = tool.prepare(workdir, files, srv.base_url, c)
    m = measure(
        inv.argv, cwd=inv.cwd, env=inv.env, timeout=RUN_TIMEOUT, logs=workdir / "logs",
        label=tool.name,
    )  # fmt: skip
    return Run(
        tool.name,
        m,
        tool.passes(inv, m),
        srv.requests,
        srv.connections,
        srv.peak_in_flight,
        srv.cpu_s,
        load,
        srv.first_at,
        srv.last_at,
    )


def _tools(peers: bool) -> tuple[list[Tool], list[dict[str, Any]]]:
    tools: list[Tool] = [Agentopt(), Raw()]
    rows: list[dict[str, Any]] = []
    if peers:
        from bench.peers.install import install_all
        from bench.peers.tools import Inspect, Promptfoo

        for peer in install_all().values():
            if peer.unavailable:
                rows.append(_row(peer.name, "unavailable", peer.unavailable))
            elif peer.name == "promptfoo":
                tools.append(Promptfoo(peer))
            else:
                tools.append(Inspect(peer))
    return tools, rows


def run(
    tasks: int = TASKS,
    repeat: int = REPEAT,
    cases: tuple[tuple[float, int], ...] = CASES,
    peers: bool = False,
) -> list[dict[str, Any]]:
    """Every case `repeat` times, the tools interleaved; one row per case and tool, then the
    ratios to the floor."""
    tools, rows = _tools(peers)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="agentopt-bench-floor-") as tmp, FloorServer() as srv:
        root = Path(tmp)
        files = write_all(root / "data", tasks, srv.base_url)
        warm = write_all(root / "warm-data", WARMUP_TASKS, srv.base_url)
        for tool in list(tools):  # bytecode, disk caches; a tool that cannot run drops out
            r = _once(tool, srv, warm, root / f"warm-{tool.name}", 4)
            if not r.ok(WARMUP_TASKS):
                rows.append(_row(tool.name, "unavailable", f"warm-up: {r.measurement.tail(300)}"))
                tools.remove(tool)
        for latency, c in cases:
            srv.latency = latency
            label = f"{tasks:,} tasks, {latency * 1000:.0f} ms, c{c}"
            reps: list[dict[str, Run]] = []
            for rep in range(repeat):
                order = tools if rep % 2 == 0 else tools[::-1]
                done = {}
                for tool in order:
                    folder = root / f"{latency}-{c}-{rep}-{tool.name}"
                    done[tool.name] = r = _once(tool, srv, files, folder, c)
                    print(f"  {label} #{rep + 1} {tool.name}: {_brief(r, tasks)}", flush=True)
                reps.append(done)
            rows.extend(_case_rows(label, tools, reps, tasks, latency, c))
    rows.append(
        _row(
            "machine",
            f"{os.cpu_count()} CPUs, load {load_before[0]:.2f} → {os.getloadavg()[0]:.2f}",
            f"1-min load averages; {repeat} repetitions, order reversed every other one; "
            f"Python {sys.version.split()[0]}",
        )
    )
    return rows


def _brief(r: Run, tasks: int) -> str:
    m = r.measurement
    state = "ok" if r.ok(tasks) else f"FAILED (exit {m.exit_code}: {m.tail(200)!r})"
    phases = r.phases()
    where = (
        " (first request at {:.3f} s, last {:.3f} s later, exit {:.3f} s after it)".format(*phases)
        if phases
        else ""
    )
    return (
        f"{m.cpu_s / tasks * 1000:.2f} ms CPU/task, wall {m.wall_s:.2f} s{where}, peak "
        f"{m.peak_mb:.0f} MB, {r.requests} requests over {r.connections} connections "
        f"(≤{r.peak_in_flight} at once), server CPU {r.server_cpu_s:.2f} s, load {r.load:.2f}, "
        f"{state}"
    )


def _case_rows(
    label: str,
    tools: list[Tool],
    reps: list[dict[str, Run]],
    tasks: int,
    latency: float,
    c: int,
) -> list[dict[str, Any]]:
    rows = []
    ideal = tasks * latency / c
    for tool in tools:
        runs = [rep[tool.name] for rep in reps]
        cpu = [r.measurement.cpu_s / tasks * 1000 for r in runs]
        wall = [r.measurement.wall_s for r in runs]
        value = (
            f"{spread(cpu)} ms CPU/task · wall {spread(wall)} s · peak "
            f"{spread([r.measurement.peak_mb for r in runs], '{:.0f}')} MB"
        )
        bad = [r for r in runs if not r.ok(tasks)]
        detail = (
            f"passed {[r.passes for r in runs]} · requests {[r.requests for r in runs]} · "
            f"connections {[r.connections for r in runs]} · load "
            f"{spread([r.load for r in runs])}"
        )
        if ideal:
            detail += f" · wall ÷ ideal ({ideal:.2f} s) {spread([w / ideal for w in wall])}"
        phases = [p for p in (r.phases() for r in runs) if p is not None]
        if phases:
            detail += " · " + _phase_text([[p[i] for p in phases] for i in range(3)])
        if bad:
            value = f"FAILED ({len(bad)} of {len(runs)}) · {value}"
        rows.append(_row(f"{label}: {tool.name}", value, detail))
    for other in [t.name for t in tools if t.name != "raw"]:
        cpu_r = [rep[other].measurement.cpu_s / rep["raw"].measurement.cpu_s for rep in reps]
        wall_r = [rep[other].measurement.wall_s / rep["raw"].measurement.wall_s for rep in reps]
        loads = [min(rep[other].load, rep["raw"].load) for rep in reps] + [
            max(rep[other].load, rep["raw"].load) for rep in reps
        ]
        detail = (
            f"per repetition: CPU {', '.join(f'{x:.2f}' for x in cpu_r)}; wall "
            f"{', '.join(f'{x:.2f}' for x in wall_r)}; load {spread(loads)}"
        )
        pairs = [(rep[other].phases(), rep["raw"].phases()) for rep in reps]
        gaps = [[a[i] - b[i] for a, b in pairs if a and b] for i in range(3)]
        if all(gaps):
            detail += "; the wall's difference, " + _phase_text(gaps, signed=True)
        rows.append(
            _row(
                f"{label}: {other} ÷ raw",
                f"CPU ×{spread(cpu_r)} · wall ×{spread(wall_r)}",
                detail,
            )
        )
    return rows


def _phase_text(columns: list[list[float]], *, signed: bool = False) -> str:
    """Spawn → first request, first → last request, last request → exit, in seconds (each a
    range over the repetitions)."""
    fmt = "{:+.3f}" if signed else "{:.3f}"
    names = ("before the first request", "first → last request", "last request → exit")
    return " · ".join(f"{n} {spread(c, fmt)} s" for n, c in zip(names, columns, strict=True))


def _row(case: str, value: str, detail: str) -> dict[str, Any]:
    return {"bench": "floor", "case": case, "value": value, "detail": detail}


def _case(text: str) -> tuple[float, int]:
    ms, _, c = text.partition(":")
    return float(ms) / 1000, int(c)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__)
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--repeat", type=int, default=REPEAT)
    parser.add_argument(
        "--cases",
        type=_case,
        nargs="+",
        default=list(CASES),
        help="latency_ms:concurrency pairs (default: 0:16 0:64 200:16 200:64)",
    )
    parser.add_argument("--peers", action="store_true", help="promptfoo and Inspect AI too")
    args = parser.parse_args(argv)
    for row in run(args.tasks, args.repeat, tuple(args.cases), args.peers):
        print(f"{row['case']}: {row['value']}  ({row['detail']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

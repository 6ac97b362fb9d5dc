"""Optimizer efficiency: held-out score gained per 100 model calls, agentopt beside GEPA, on a
suite of thirteen scripted worlds (`bench/gepa_peer/suite.py`: the six of `worlds.py` and the
seven of `traps.py`, built to trap an optimizer), seeds 1–10.

Each world is one fake OpenAI-compatible server playing the agent, the judge and the
reflection model (`bench/gepa_peer/scripted.py`); splits are fixed and shared (16 train,
16 validation, 16 held-out test tasks). Both systems get the same budget of agent + judge
requests, test split included, and the server enforces it (requests past it are refused and
counted):
- agentopt: `optimize --budget-calls BUDGET` (it keeps back what its test split needs);
- GEPA: `max_metric_calls = (BUDGET − test calls) / calls per task`, then its best and the
  baseline on the test split. Worlds without tools run `dspy.GEPA`; the tool world runs the
  GEPA library with the tool descriptions as text components (`gepa_peer/run_gepa.py`).
Reflection requests come on top for both and count in "calls". Per run: validation and test
gain (best − baseline pass rate) per 100 requests the server served; reported per world and
over the suite as the mean over seeds with its 95% t interval, with a paired sign-flip test
of agentopt − GEPA over seeds. Each system runs in its own process (`gepa_peer/run_agentopt.py`,
`gepa_peer/run_gepa.py`) beside the server's, interleaved seed by seed with who goes first
alternating, and the load average is recorded before and after, so their wall-time ratio
comes from the same conditions; each one's `seconds` excludes its interpreter's imports (as
does its process CPU over the same span, shown beside the wall: a system that waits on the
server spends less CPU than wall, one that computes all the time about as much), and each
meets the server as the first run did (`_fresh`: what earlier runs left is dropped). The
wall ratio comes with the paired difference in seconds a run, its 95% interval and sign-flip
p: a ratio near 1 may be the machine's noise between runs. Beside gain per call the table
shows the final test pass rate (stopping early is not rewarded by the ratio alone),
agentopt's leak refusals, and how many winners (and agentopt's evaluated candidates) carry a
task's question verbatim (`gepa_peer/leakscan.py`, the bench's own scan).
Raw results go to `~/.cache/agentopt/bench-results/optimizer_efficiency.json`.

    python -m bench optimizer_efficiency
    python -m bench.optimizer_efficiency --seeds 1-3 --worlds phrases,subsets
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.gepa_peer.install import install_dspy
from bench.gepa_peer.leakscan import leaks
from bench.gepa_peer.report import render_table, summary_rows
from bench.gepa_peer.scripted import ScriptedServer, judge_prompt
from bench.gepa_peer.suite import WORLDS
from bench.gepa_peer.worlds import BASE_INSTRUCTIONS, SPLITS, BenchTask, World, words
from bench.peers.install import Peer, cache_root
from tests.fake_openai import FakeOpenAI

BENCH = "optimizer_efficiency"
BUDGET_CALLS = 480
"""Agent + judge requests per run, the test split's included."""
SEEDS = tuple(range(1, 11))
MAX_CANDIDATES = 50
"""High enough that the call budget, not the candidate count, ends agentopt's search (as it
ends GEPA's). Everything else is agentopt's default, `--max-stalls 5` included: a search that
keeps failing stops and spends less."""
REPO = Path(__file__).resolve().parent.parent
GEPA_SCRIPT = REPO / "bench" / "gepa_peer" / "run_gepa.py"
AGENTOPT_SCRIPT = REPO / "bench" / "gepa_peer" / "run_agentopt.py"
RUN_TIMEOUT = 300.0
SYSTEMS = ("agentopt", "GEPA")


@dataclass
class Result:
    """One optimizer run on one world and seed (scores are pass rates)."""

    system: str
    world: str
    seed: int
    val_baseline: float
    val_best: float
    test_baseline: float
    test_best: float
    requests: dict[str, int]
    """Requests the server served, by model (agent, judge, reflect)."""
    refused: int
    """Agent + judge requests past the budget (refused, never served)."""
    seconds: float
    cpu_seconds: float
    """The system's process CPU (all its threads) over the same span as `seconds`: near
    `seconds` when the system computes all the time, below it when it waits on the server."""
    stop: str
    candidates: int
    """Candidates fully evaluated on validation (baseline not counted)."""
    best_words: int
    """Words the best configuration's instructions add to the starting ones."""
    note: str = ""
    rules: list[str] = field(default_factory=list)
    """Rules agentopt's model-free proposer wrote in this run."""
    leak_refusals: int = 0
    """agentopt: proposed texts it refused for quoting a task (`leak.py`)."""
    leaky_best: int = 0
    """1 when the winner carries a task verbatim (`gepa_peer/leakscan.py`)."""
    leaky_evaluated: int = 0
    """agentopt: fully evaluated candidates that carry a task verbatim."""
    best_text: str = ""

    @property
    def calls(self) -> int:
        return sum(self.requests.values())

    def per_100(self, split: str) -> float:
        gain = getattr(self, f"{split}_best") - getattr(self, f"{split}_baseline")
        return gain / self.calls * 100 if self.calls else 0.0


@dataclass
class Suite:
    """Every run of one bench invocation."""

    results: list[Result] = field(default_factory=list)
    unavailable: str = ""
    """Why GEPA could not run (its rows are then missing)."""
    gepa_version: str = ""
    load: list[tuple[float, float, float]] = field(default_factory=list)
    """Load averages (1, 5, 15 min) at the start and the end."""
    seconds: float = 0.0


def _splits(tasks: list[BenchTask]) -> dict[str, list[dict[str, Any]]]:
    return {split: [t.row() for t in tasks if t.split == split] for split in SPLITS}


def _subprocess(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | str:
    """Run one system; the reason as text when it fails."""
    # Bytecode caching allowed, for both systems: installed packages have their .pyc files;
    # `PYTHONDONTWRITEBYTECODE` (set on this machine) would compile every lazily imported
    # module again inside the timed search.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=cwd, env=env
        )
    except subprocess.TimeoutExpired:
        return f"did not finish within {RUN_TIMEOUT:.0f}s"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        return f"failed (exit {proc.returncode}): {tail[-1][:200] if tail else ''}"
    return proc


def run_agentopt(
    srv: FakeOpenAI, world: World, seed: int, root: Path, command: Sequence[str] = ()
) -> Result | str:
    """agentopt in its own process (`gepa_peer/run_agentopt.py`), like GEPA. `command`: another
    script and its first arguments to run instead (`gepa_peer/run_without.py`'s what-if)."""
    tasks = world.tasks()
    script = ScriptedServer(world, seed, {t.name: t for t in tasks}, budget=BUDGET_CALLS)
    srv.handler = script
    (root / "project").mkdir()
    config = {
        "root": str(root / "project"),
        "base_url": srv.base_url,
        "seed": seed,
        "budget": BUDGET_CALLS,
        "max_candidates": MAX_CANDIDATES,
        "instructions": BASE_INSTRUCTIONS,
        "tools": world.tools,
        "tool_mocks": world.tool_mocks,
        "evaluators": getattr(world, "evaluators", None),
        **_splits(tasks),
    }
    cfg_path, out_path = root / "agentopt_config.json", root / "agentopt_result.json"
    cfg_path.write_text(json.dumps(config), encoding="utf-8")
    argv = [sys.executable, *(command or [str(AGENTOPT_SCRIPT)]), str(cfg_path), str(out_path)]
    proc = _subprocess(argv, root)
    if isinstance(proc, str):
        return f"agentopt {proc}"
    out = json.loads(out_path.read_text(encoding="utf-8"))
    return Result(
        system="agentopt",
        world=world.name,
        seed=seed,
        val_baseline=out["val_baseline"],
        val_best=out["val_best"],
        test_baseline=out["test_baseline"],
        test_best=out["test_best"],
        requests=dict(script.counts),
        refused=sum(script.refused.values()),
        seconds=out["seconds"],
        cpu_seconds=out["cpu_seconds"],
        stop=out["stop"],
        candidates=out["candidates"],
        best_words=words(out["best_instructions"]) - words(BASE_INSTRUCTIONS),
        note=out["note"],
        rules=out["rules"],
        leak_refusals=out["leak_refusals"],
        leaky_best=int(bool(leaks(out["best_texts"], tasks))),
        leaky_evaluated=sum(bool(leaks(t, tasks)) for t in out["evaluated_texts"].values()),
        best_text=out["best_instructions"],
    )


def run_gepa(peer: Peer, srv: FakeOpenAI, world: World, seed: int, root: Path) -> Result | str:
    """GEPA in the dspy venv's python; the reason as text when it fails."""
    assert peer.command is not None
    tasks = world.tasks()
    test = [t for t in tasks if t.split == "test"]
    test_calls = 2 * len(test) * world.calls_per_task  # baseline and best
    script = ScriptedServer(
        world, seed, {t.name: t for t in tasks}, budget=BUDGET_CALLS, reserve=test_calls
    )
    srv.handler = script

    config = {
        "base_url": srv.base_url,
        "seed": seed,
        "instructions": BASE_INSTRUCTIONS,
        "judge_template": judge_prompt("{query}", "{criterion}", "{response}"),
        "max_metric_calls": (BUDGET_CALLS - test_calls) // world.calls_per_task,
        "tools": world.tools,
        "tool_mocks": world.tool_mocks or {},
        # Worlds scored by an expected answer: GEPA's metric checks it itself (no judge call),
        # as agentopt's exact_match does.
        "metric": "contains" if getattr(world, "evaluators", None) else "judge",
        **{
            split: [
                {"name": t.name, "query": t.query, "criterion": t.criterion, "truth": t.truth}
                for t in tasks
                if t.split == split
            ]
            for split in SPLITS
        },
    }
    cfg_path, out_path = root / "gepa_config.json", root / "gepa_result.json"
    cfg_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    proc = _subprocess([*peer.command, str(GEPA_SCRIPT), str(cfg_path), str(out_path)], root)
    if isinstance(proc, str):
        return f"GEPA {proc}"
    out = json.loads(out_path.read_text(encoding="utf-8"))
    best = out["best"]
    stop = "call budget" if out["stopped_by_budget"] else f"max_metric_calls {out['metric_calls']}"
    return Result(
        system="GEPA",
        world=world.name,
        seed=seed,
        val_baseline=out["val_baseline"],
        val_best=out["val_best"],
        test_baseline=out["test_baseline"],
        test_best=out["test_best"],
        requests=dict(script.counts),
        refused=sum(script.refused.values()),
        seconds=out["seconds"],
        cpu_seconds=out["cpu_seconds"],
        stop=stop,
        candidates=out["candidates"] - 1,
        best_words=words(best.get("instructions", "")) - words(BASE_INSTRUCTIONS),
        leaky_best=int(bool(leaks([str(v) for v in best.values()], tasks))),
        best_text=str(best.get("instructions", "")),
    )


def run(
    seeds: tuple[int, ...] = SEEDS, worlds: tuple[str, ...] | None = None
) -> list[dict[str, Any]]:
    """Run the suite, print its table, return one summary row per world for `python -m
    bench`."""
    suite = run_suite(seeds, worlds or tuple(WORLDS))
    print(render_table(suite.results, suite.load, BUDGET_CALLS, suite.unavailable), flush=True)
    print("\nRules the model-free `rules` proposer wrote (the first two distinct per world):")
    for world in dict.fromkeys(r.world for r in suite.results):
        written = [x for r in suite.results if r.world == world for x in r.rules]
        for rule in list(dict.fromkeys(written))[:2]:
            print(f"- {world}: {rule}")
    print("\nWinners' added instructions, seed 1 (agentopt, then GEPA):")
    for r in suite.results:
        if r.seed == min(x.seed for x in suite.results):
            added = r.best_text.removeprefix(BASE_INSTRUCTIONS).strip().replace("\n", " / ")
            print(f"- {r.world} {r.system}: {added[:300] or '(none)'}")
    out = cache_root().parent / "bench-results" / f"{BENCH}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(r) for r in suite.results], indent=1), encoding="utf-8")
    print(f"raw results: {out}")
    return summary_rows(BENCH, suite.results, suite.unavailable)


def run_suite(seeds: tuple[int, ...], worlds: tuple[str, ...]) -> Suite:
    suite = Suite(load=[os.getloadavg()])
    peer = install_dspy()
    suite.unavailable, suite.gepa_version = peer.unavailable, peer.version
    t0 = time.perf_counter()
    with FakeOpenAI(schemas="any") as srv:
        for name in worlds:
            world = WORLDS[name]
            for seed in seeds:
                # Alternate who goes first, so neither system always meets the same load.
                order = SYSTEMS if seed % 2 else SYSTEMS[::-1]
                for system in order:
                    if system == "GEPA" and suite.unavailable:
                        continue
                    with tempfile.TemporaryDirectory() as tmp:
                        if system == "agentopt":
                            outcome = run_agentopt(srv, world, seed, Path(tmp))
                        else:
                            outcome = run_gepa(peer, srv, world, seed, Path(tmp))
                    _fresh(srv)
                    if isinstance(outcome, Result):
                        suite.results.append(outcome)
                    elif system == "GEPA":
                        suite.unavailable = outcome
                    else:
                        raise RuntimeError(f"{name} seed {seed}: {outcome}")
                print(f"{name} seed {seed}: done", flush=True)
    suite.seconds = time.perf_counter() - t0
    suite.load.append(os.getloadavg())
    return suite


def _fresh(srv: FakeOpenAI) -> None:
    """The server as it was before the first run: the requests it recorded dropped (the runs
    are counted by each world's script, not by these), and what they held collected now, not
    during a later run. The server answers from this process, so it kept every request of the
    suite, ~110,000 bodies and 1.45 million objects by its twelfth world: a full collection
    of them stopped the server for 450 ms inside whichever run met it, and each request took
    longer (agentopt's `tool-routing` runs 0.262 → 0.287–0.314 s and 0.226 → 0.263–0.300 s
    without one, GEPA's within ±0.03 s). A later world was timed against a slower server
    than an earlier one, and a run that overlaps its calls with the server's work lost most."""
    srv.requests.clear()
    gc.collect()


def _seed_range(text: str) -> tuple[int, ...]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return tuple(seeds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.optimizer_efficiency")
    parser.add_argument("--seeds", default="1-10", help="e.g. 1-10 or 1,3,5")
    parser.add_argument("--worlds", default=",".join(WORLDS), help=", ".join(WORLDS))
    args = parser.parse_args(argv)
    run(_seed_range(args.seeds), tuple(w.strip() for w in args.worlds.split(",")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

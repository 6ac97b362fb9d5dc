"""The tool worlds' wall, agentopt beside GEPA, with parts of agentopt's per-call work taken
out: how much of the gap to GEPA is work the spec asks for.

In the two tool worlds GEPA runs the GEPA library with a small adapter that posts each
request with `urllib` and keeps nothing (`gepa_peer/run_gepa.py`); agentopt sends every call
through its response cache, journals every unit and saves job.json and report.html for
`--resume` and `optimize status`, and writes each candidate's folder for `apply`
(spec optimizer.md §3–4). Here agentopt runs as in `optimizer_efficiency` and again without
the cache, without the journal and job files, without the folders, and without all three
(`gepa_peer/run_without.py`), each run beside the same GEPA run of its seed: same server,
same seed, who goes first alternating. A what-if, never a setting: the table says what each
part costs, not a way to run agentopt.

    python -m bench tool_wall_what_if
    python -m bench.tool_wall_what_if --seeds 1-10 --worlds tool-routing
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.gepa_peer.install import install_dspy
from bench.gepa_peer.report import wall_comparison
from bench.gepa_peer.suite import WORLDS
from bench.optimizer_efficiency import (
    SEEDS,
    Result,
    _fresh,
    _seed_range,
    run_agentopt,
    run_gepa,
)
from tests.fake_openai import FakeOpenAI

BENCH = "tool_wall_what_if"
TOOL_WORLDS = ("tool-descriptions", "tool-routing")
VARIANTS = ("none", "cache", "journal", "folders", "cache,journal,folders")
RUN_WITHOUT = Path(__file__).resolve().parent / "gepa_peer" / "run_without.py"

Runs = dict[tuple[str, str], dict[int, Result]]
"""(world, "GEPA" or the parts taken out) → seed → run."""


def measure(seeds: Sequence[int], worlds: Sequence[str], variants: Sequence[str]) -> Runs:
    peer = install_dspy()
    if peer.unavailable:
        raise RuntimeError(f"GEPA is not available: {peer.unavailable}")
    runs: Runs = {}
    systems = ["GEPA", *variants]
    with FakeOpenAI(schemas="any") as srv:
        for name in worlds:
            world = WORLDS[name]
            for seed in seeds:
                for system in systems if seed % 2 else systems[::-1]:
                    with tempfile.TemporaryDirectory() as tmp:
                        if system == "GEPA":
                            outcome = run_gepa(peer, srv, world, seed, Path(tmp))
                        else:
                            script = [str(RUN_WITHOUT), system]
                            outcome = run_agentopt(srv, world, seed, Path(tmp), command=script)
                    _fresh(srv)
                    if isinstance(outcome, str):
                        raise RuntimeError(f"{name} seed {seed} ({system}): {outcome}")
                    runs.setdefault((name, system), {})[seed] = outcome
                print(f"{name} seed {seed}: done", flush=True)
    return runs


def _label(variant: str) -> str:
    return "as is" if variant == "none" else "without " + variant.replace(",", " + ")


def table(runs: Runs, worlds: Sequence[str], variants: Sequence[str]) -> list[str]:
    lines = [
        "| world | agentopt | calls/run | CPU s/run (÷ as is) | wall s/run "
        "| wall ÷ GEPA's; agentopt − GEPA s/run [95% CI], p |",
        "|---|---|---|---|---|---|",
    ]
    for world in worlds:
        gepa = runs[(world, "GEPA")]
        as_is = runs[(world, variants[0])]
        for variant in variants:
            ours = runs[(world, variant)]
            seeds = sorted(ours)
            cpu = statistics.mean(ours[s].cpu_seconds for s in seeds)
            base_cpu = statistics.mean(as_is[s].cpu_seconds for s in seeds)
            wall = statistics.mean(ours[s].seconds for s in seeds)
            calls = statistics.mean(ours[s].calls for s in seeds)
            versus = wall_comparison(list(ours.values()), list(gepa.values()))
            lines.append(
                f"| {world} | {_label(variant)} | {calls:.0f} | {cpu:.3f} "
                f"({cpu / base_cpu:.2f}) | {wall:.3f} | {versus} |"
            )
        gepa_calls = statistics.mean(r.calls for r in gepa.values())
        gepa_cpu = statistics.mean(r.cpu_seconds for r in gepa.values())
        gepa_wall = statistics.mean(r.seconds for r in gepa.values())
        lines.append(
            f"| {world} | (GEPA) | {gepa_calls:.0f} | {gepa_cpu:.3f} | {gepa_wall:.3f} | |"
        )
    return lines


def run(
    seeds: Sequence[int] = SEEDS,
    worlds: Sequence[str] = TOOL_WORLDS,
    variants: Sequence[str] = VARIANTS,
) -> list[dict[str, Any]]:
    """Measure, print the table, return one row per world and variant for `python -m bench`."""
    start = os.getloadavg()
    runs = measure(seeds, worlds, variants)
    end = os.getloadavg()
    print(
        f"{BENCH}: seeds {list(seeds)}; load average at start "
        f"{' / '.join(f'{x:.2f}' for x in start)}, at end {' / '.join(f'{x:.2f}' for x in end)}"
    )
    print("\n".join(table(runs, worlds, variants)), flush=True)
    rows = []
    for world in worlds:
        gepa = statistics.mean(r.seconds for r in runs[(world, "GEPA")].values())
        for variant in variants:
            wall = statistics.mean(r.seconds for r in runs[(world, variant)].values())
            rows.append(
                {
                    "bench": BENCH,
                    "case": f"{world}, {_label(variant)}",
                    "value": f"wall ÷ GEPA's {wall / gepa:.2f}",
                    "detail": f"{wall:.3f} against {gepa:.3f} s a run, {len(seeds)} seeds",
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m bench.{BENCH}", description=__doc__)
    parser.add_argument("--seeds", default="1-10", help="e.g. 1-10 or 1,3,5")
    parser.add_argument("--worlds", default=",".join(TOOL_WORLDS))
    parser.add_argument("--variants", default=";".join(VARIANTS), help="';'-separated")
    args = parser.parse_args(argv)
    variants = tuple(v.strip() for v in args.variants.split(";") if v.strip())
    if "none" in variants:
        variants = ("none", *(v for v in variants if v != "none"))
    else:
        variants = ("none", *variants)
    run(_seed_range(args.seeds), tuple(args.worlds.split(",")), variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The optimizer bench's table says whether a wall ratio near 1 is a difference or noise: beside
the ratio, the paired difference in seconds a run with its 95% interval and sign-flip p."""

from __future__ import annotations

from bench.gepa_peer.report import render_table
from bench.optimizer_efficiency import Result


def _run(system: str, seed: int, seconds: float) -> Result:
    return Result(
        system=system,
        world="w",
        seed=seed,
        val_baseline=0.2,
        val_best=0.6,
        test_baseline=0.2,
        test_best=0.6,
        requests={"agent": 100, "judge": 50},
        refused=0,
        seconds=seconds,
        cpu_seconds=seconds,
        stop="budget_exhausted",
        candidates=3,
        best_words=10,
    )


def _wall_cell(results: list[Result]) -> str:
    table = render_table(results, [(0.0, 0.0, 0.0)], 480)
    header = next(line for line in table.splitlines() if line.startswith("| world"))
    row = next(line for line in table.splitlines() if line.startswith("| w | agentopt"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    names = [c.strip() for c in header.strip("|").split("|")]
    return cells[names.index("wall ratio; agentopt − GEPA s/run [95% CI], p")]


def test_a_slower_run_on_every_seed_is_a_difference() -> None:
    results = [_run("agentopt", s, 0.33) for s in range(1, 11)]
    results += [_run("GEPA", s, 0.30 + 0.001 * s) for s in range(1, 11)]
    cell = _wall_cell(results)
    ratio, rest = cell.split("; ")
    assert float(ratio) > 1.0
    interval, p = rest.split(", p=")
    low = float(interval.split("[")[1].split(",")[0])
    assert low > 0  # slower on every seed: the interval excludes 0
    assert float(p) < 0.01


def test_a_ratio_above_one_from_one_slow_seed_is_not_a_difference() -> None:
    # Faster on nine seeds, much slower on one: the mean ratio is above 1, the test says noise.
    results = [_run("agentopt", s, 0.29) for s in range(1, 10)] + [_run("agentopt", 10, 0.80)]
    results += [_run("GEPA", s, 0.30) for s in range(1, 11)]
    cell = _wall_cell(results)
    ratio, rest = cell.split("; ")
    assert float(ratio) > 1.0
    interval, p = rest.split(", p=")
    low, high = (float(x) for x in interval.split("[")[1].rstrip("]").split(", "))
    assert low < 0 < high
    assert float(p) > 0.05

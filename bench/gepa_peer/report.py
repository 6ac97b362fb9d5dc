"""The optimizer bench's table: per world and over the suite, agentopt beside GEPA, as a
markdown table (it pastes into an issue note and never wraps)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from bench.gepa_peer.stats import mean_ci, sign_flip_p


class Run(Protocol):
    system: str
    world: str
    seed: int
    val_baseline: float
    val_best: float
    test_baseline: float
    test_best: float
    requests: dict[str, int]
    refused: int
    seconds: float
    cpu_seconds: float
    stop: str
    candidates: int
    best_words: int
    note: str
    leak_refusals: int
    leaky_best: int
    leaky_evaluated: int

    @property
    def calls(self) -> int: ...

    def per_100(self, split: str) -> float: ...


def _pick(results: Sequence[Run], system: str, world: str | None = None) -> list[Run]:
    return [r for r in results if r.system == system and (world is None or r.world == world)]


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def _paired(ours: list[Run], theirs: list[Run], value: Any) -> tuple[list[float], list[float]]:
    """Per-seed values of both systems over the seeds both have."""
    a = {r.seed: value(r) for r in ours}
    b = {r.seed: value(r) for r in theirs}
    seeds = sorted(set(a) & set(b))
    return [a[s] for s in seeds], [b[s] for s in seeds]


def _row(world: str, system: str, runs: list[Run], wall_ratio: str, diff: str) -> str:
    calls = {k: _mean([r.requests.get(k, 0) for r in runs]) for k in ("agent", "judge", "reflect")}
    stops = Counter(r.stop for r in runs)
    ours = system == "agentopt"
    leak = (
        f"{sum(r.leak_refusals for r in runs) if ours else '—'} / "
        f"{sum(r.leaky_best for r in runs)} / "
        f"{sum(r.leaky_evaluated for r in runs) if ours else '—'}"
    )
    cells = [
        world,
        system,
        mean_ci([r.per_100("val") for r in runs]).show(),
        mean_ci([r.per_100("test") for r in runs]).show(),
        f"{_mean([r.test_baseline for r in runs]):.2f} → {_mean([r.test_best for r in runs]):.2f}",
        f"{calls['agent']:.0f} / {calls['judge']:.0f} / {calls['reflect']:.0f}",
        str(sum(r.refused for r in runs)),
        f"{_mean([r.candidates for r in runs]):.1f}",
        f"{_mean([r.best_words for r in runs]):.0f}",
        f"{_mean([r.seconds for r in runs]):.2f}",
        f"{_mean([r.cpu_seconds for r in runs]):.2f}",
        wall_ratio,
        diff,
        leak,
        ", ".join(f"{k} ×{n}" for k, n in sorted(stops.items())),
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| world | system | val gain /100 calls [95% CI] | test gain /100 calls [95% CI] | "
    "test pass rate base → best | calls/run agent / judge / reflect | refused | candidates "
    "| words added | wall s/run | CPU s/run | wall ratio; agentopt − GEPA s/run [95% CI], p "
    "| agentopt − GEPA test /100 [95% CI], p "
    "| leaks refused / leaking winners / leaking evaluated | stop |"
)


def wall_comparison(ours: Sequence[Run], theirs: Sequence[Run]) -> str:
    """ "ratio; difference s/run [95% CI], p": agentopt's mean wall over GEPA's, with the paired
    difference in seconds a run over the seeds both have (the one writer of this cell)."""
    ratio = _mean([r.seconds for r in ours]) / _mean([r.seconds for r in theirs])
    a, b = _paired(list(ours), list(theirs), lambda r: r.seconds)
    walls = [x - y for x, y in zip(a, b, strict=True)]
    return f"{ratio:.2f}; {mean_ci(walls).show()}, p={sign_flip_p(walls):.3f}"


def _compare(ours: list[Run], theirs: list[Run]) -> tuple[str, str]:
    """(wall ratio agentopt/GEPA with the paired difference in seconds a run, the paired
    difference in test gain per 100 calls). The seconds' interval and sign-flip p say whether
    a ratio near 1 is a difference at all or the machine's noise between runs."""
    if not ours or not theirs:
        return "", ""
    wall = wall_comparison(ours, theirs)
    a, b = _paired(ours, theirs, lambda r: r.per_100("test"))
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    return wall, f"{mean_ci(diffs).show()}, p={sign_flip_p(diffs):.3f}"


def render_table(
    results: Sequence[Run],
    load: Sequence[tuple[float, float, float]],
    budget: int,
    unavailable: str = "",
) -> str:
    worlds = list(dict.fromkeys(r.world for r in results))
    lines = [
        f"optimizer_efficiency: budget {budget} agent+judge calls per run (test split "
        f"included), seeds {sorted({r.seed for r in results})}; load average at start "
        + " / ".join(f"{x:.2f}" for x in load[0])
        + (" , at end " + " / ".join(f"{x:.2f}" for x in load[-1]) if len(load) > 1 else ""),
        "",
        HEADER,
        "|" + "---|" * HEADER.count(" | ") + "---|",
    ]
    for world in worlds:
        ours, theirs = _pick(results, "agentopt", world), _pick(results, "GEPA", world)
        ratio, diff = _compare(ours, theirs)
        lines.append(_row(world, "agentopt", ours, ratio, diff))
        if theirs:
            lines.append(_row(world, "GEPA", theirs, "", ""))
    ours, theirs = _pick(results, "agentopt"), _pick(results, "GEPA")
    lines.extend(_suite_rows(ours, theirs, len(worlds)))
    notes = [f"{r.world} seed {r.seed} {r.system}: {r.note}" for r in results if r.note]
    if notes:
        lines.extend(["", "Notes (a test split not fully evaluated counts as not passed):"])
        lines.extend(f"- {n}" for n in notes)
    if unavailable:
        lines.append(f"\nGEPA unavailable: {unavailable}")
    return "\n".join(lines)


def _per_seed_suite(runs: list[Run]) -> dict[int, float]:
    """Seed → the mean test gain per 100 calls over the worlds run on that seed."""
    by_seed: dict[int, list[float]] = {}
    for r in runs:
        by_seed.setdefault(r.seed, []).append(r.per_100("test"))
    return {s: _mean(v) for s, v in by_seed.items()}


def _suite_rows(ours: list[Run], theirs: list[Run], n_worlds: int) -> list[str]:
    out = ["", f"Over the suite ({n_worlds} worlds; interval over seeds of the per-seed mean):"]
    a, b = _per_seed_suite(ours), _per_seed_suite(theirs)
    for name, runs, per_seed in (("agentopt", ours, a), ("GEPA", theirs, b)):
        if runs:
            out.append(
                f"- {name}: test gain per 100 calls {mean_ci(list(per_seed.values())).show()}, "
                f"validation {_mean([r.per_100('val') for r in runs]):+.3f}, final test pass "
                f"rate {_mean([r.test_best for r in runs]):.2f}, "
                f"wall {_mean([r.seconds for r in runs]):.2f} s/run "
                f"(CPU {_mean([r.cpu_seconds for r in runs]):.2f} s/run)"
            )
    if ours and theirs:
        seeds = sorted(set(a) & set(b))
        diffs = [a[s] - b[s] for s in seeds]
        ratio = _mean(list(a.values())) / _mean(list(b.values()))
        wall = _mean([r.seconds for r in ours]) / _mean([r.seconds for r in theirs])
        out.append(
            f"- leaks: agentopt refused {sum(r.leak_refusals for r in ours)} proposed texts; "
            f"winners carrying a task verbatim: agentopt {sum(r.leaky_best for r in ours)}, "
            f"GEPA {sum(r.leaky_best for r in theirs)}; agentopt's evaluated candidates "
            f"carrying one: {sum(r.leaky_evaluated for r in ours)}"
        )
        out.append(
            f"- agentopt / GEPA test gain per 100 calls: {ratio:.2f}×; difference "
            f"{mean_ci(diffs).show()}, paired sign-flip p={sign_flip_p(diffs):.3f}; "
            f"wall time ratio {wall:.2f}"
        )
    return out


def summary_rows(bench: str, results: Sequence[Run], unavailable: str) -> list[dict[str, Any]]:
    """One row per world and system for `python -m bench`'s table."""
    rows: list[dict[str, Any]] = []
    for world in dict.fromkeys(r.world for r in results):
        for system in ("agentopt", "GEPA"):
            runs = _pick(results, system, world)
            if not runs:
                continue
            rows.append(
                {
                    "bench": bench,
                    "case": f"{world}: {system} test gain per 100 calls",
                    "value": f"{mean_ci([r.per_100('test') for r in runs]).mean:+.3f}",
                    "detail": f"pass rate {_mean([r.test_best for r in runs]):.2f}; "
                    f"{_mean([r.seconds for r in runs]):.2f} s/run; {len(runs)} seeds",
                }
            )
    if unavailable:
        rows.append({"bench": bench, "case": "GEPA", "value": "n/a", "detail": unavailable})
    return rows

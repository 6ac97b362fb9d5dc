"""Scores, ranking and the honesty rules (optimizer.md §2–3, §5).

- A candidate's score is its mean task score on the FULL validation split.
- Pareto flags on (score ↑, mean tokens per task ↓) and on (score ↑, cost ↓).
- The best (top-ranked eligible candidate) gets ★ only when the lower end of the 95% paired
  bootstrap interval of (candidate − baseline) over validation tasks is above 0.
- A candidate whose error rate exceeds the baseline's by more than 10 points is not eligible.
- Parents are sampled from the per-task Pareto front less its dominated members, weighted by
  the tasks each one wins.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentopt.contracts.optimize_job import (
    BASELINE_ID,
    CandidateRecord,
    Delta,
    Outcome,
    ScoreSummary,
)
from agentopt.contracts.scores import TaskScore
from agentopt.evaluators.stats import bootstrap_ci, paired_bootstrap_ci

ERROR_RATE_MARGIN = 0.10
SCORE_EPS = 1e-9
"""Scores closer than this are equal (float sums of task scores), everywhere in optimize/."""


def summarize_split(
    scores: Mapping[str, TaskScore], names: Sequence[str], seed: int
) -> ScoreSummary:
    """One candidate on one split: mean over scored tasks, pass rate, CI, error rate."""
    per_task: dict[str, float | None] = {}
    passed = errors = 0
    for name in names:
        s = scores.get(name)
        per_task[name] = s.score if s is not None else None
        if s is not None and s.status == "pass":
            passed += 1
        if s is None or s.status in ("error", "partial"):
            errors += 1
    values = [v for v in per_task.values() if v is not None]
    ci = bootstrap_ci(values, seed=seed)
    n = len(names)
    return ScoreSummary(
        score=sum(values) / len(values) if values else None,
        pass_rate=passed / n if n else 0.0,
        ci=[ci.low, ci.high] if ci else None,
        n=n,
        errors=errors,
        error_rate=errors / n if n else 0.0,
        per_task=per_task,
    )


def paired_delta(base: ScoreSummary, cand: ScoreSummary, seed: int) -> Delta | None:
    """Interval of (candidate − baseline) over tasks both have a score on."""
    a = tuple(sorted((k, v) for k, v in base.per_task.items() if v is not None))
    b = tuple(sorted((k, v) for k, v in cand.per_task.items() if v is not None))
    found = _paired(a, b, seed)
    return found.model_copy() if found is not None else None


@functools.lru_cache(maxsize=1024)
def _paired(
    a: tuple[tuple[str, float], ...], b: tuple[tuple[str, float], ...], seed: int
) -> Delta | None:
    """The bootstrap, once per pair of score sets: the ranking is redone after every
    candidate, and most candidates' validation scores have not changed since."""
    delta = paired_bootstrap_ci(dict(a), dict(b), seed)
    if delta is None:
        return None
    return Delta(mean=delta.mean, low=delta.low, high=delta.high, n=delta.n)


def _pareto(points: dict[str, tuple[float, float]]) -> set[str]:
    """Ids no other point dominates (score higher is better, x lower is better)."""
    front: set[str] = set()
    for cid, (score, x) in points.items():
        dominated = any(
            s >= score - SCORE_EPS
            and ox <= x + SCORE_EPS
            and (s > score + SCORE_EPS or ox < x - SCORE_EPS)
            for other, (s, ox) in points.items()
            if other != cid
        )
        if not dominated:
            front.add(cid)
    return front


@dataclass
class Ranking:
    """The verdict over the evaluated pool."""

    order: list[str]
    """Evaluated candidate ids, best first."""
    best: str | None
    outcome: Outcome


def _depths(candidates: list[CandidateRecord]) -> dict[str, int]:
    """How many accepted ancestors each candidate has (each one a child that beat its
    parent on train)."""
    parent = {c.id: c.parent for c in candidates}
    out: dict[str, int] = {}
    for c in candidates:
        depth, cid, seen = 0, c.parent, {c.id}
        while cid is not None and cid not in seen:
            seen.add(cid)
            depth += 1
            cid = parent.get(cid)
        out[c.id] = depth
    return out


def _sort_key(c: CandidateRecord, depth: int = 0) -> tuple[float, float, int, float, int]:
    """Validation score, pass rate; on a tie the deeper descendant (it tied its ancestors on
    validation and beat them on train: the one more likely to hold up on new tasks), then
    fewer tokens, then the older."""
    v = c.validation
    assert v is not None
    score = v.score if v.score is not None else -1.0
    tokens = c.tokens if c.tokens is not None else 0.0
    return (-round(score, 9), -round(v.pass_rate, 9), -depth, tokens, c.number)


def rank_candidates(candidates: list[CandidateRecord], seed: int) -> Ranking:
    """Set delta, eligible, pareto and star on every evaluated candidate (in place)."""
    evaluated = [c for c in candidates if c.validation is not None]
    base = next((c for c in evaluated if c.id == BASELINE_ID), None)
    for c in candidates:
        c.star = False
    if base is None or base.validation is None:
        return Ranking(order=[c.id for c in evaluated], best=None, outcome="no_improvement")
    for c in evaluated:
        assert c.validation is not None
        if c.id == BASELINE_ID:
            c.delta, c.eligible = None, True
            continue
        c.delta = paired_delta(base.validation, c.validation, seed)
        c.eligible = c.validation.error_rate <= base.validation.error_rate + ERROR_RATE_MARGIN
    scored = {c.id: c for c in evaluated if c.validation and c.validation.score is not None}
    tokens = _pareto(
        {i: (c.validation.score, c.tokens or 0.0) for i, c in scored.items() if c.validation}  # type: ignore[misc]
    )
    costs = _pareto(
        {i: (c.validation.score, c.cost or 0.0) for i, c in scored.items() if c.validation}  # type: ignore[misc]
    )
    for c in evaluated:
        c.pareto.tokens = c.id in tokens
        c.pareto.cost = c.id in costs
    depths = _depths(candidates)
    order = sorted(evaluated, key=lambda c: _sort_key(c, depths.get(c.id, 0)))
    best = next((c for c in order if c.eligible), None)
    outcome: Outcome = "no_improvement"
    if best is not None and best.id != BASELINE_ID and best.delta and best.delta.low > 0:
        best.star = True
        outcome = "improved"
    return Ranking(order=[c.id for c in order], best=best.id if best else None, outcome=outcome)


def task_wins(per_task: Mapping[str, Mapping[str, float | None]]) -> dict[str, int]:
    """Per-task Pareto front: candidate id → validation tasks on which it is (jointly) best."""
    wins = {cid: 0 for cid in per_task}
    tasks = sorted({t for scores in per_task.values() for t in scores})
    for task in tasks:
        values = {cid: s.get(task) for cid, s in per_task.items()}
        known = [v for v in values.values() if v is not None]
        if not known:
            continue
        top = max(known)
        for cid, v in values.items():
            if v is not None and v >= top - SCORE_EPS:
                wins[cid] += 1
    return wins


def front_parents(per_task: Mapping[str, Mapping[str, float | None]]) -> dict[str, int]:
    """The per-task front without its dominated members, each with the tasks it wins.

    A candidate is dominated when every task it is best on is also won by another candidate
    still on the front: sampling it would spend a proposal on a parent that some other one
    matches everywhere it shines (a child that tied its parent on its strong tasks and fixed
    others leaves the parent nothing of its own). As in GEPA's `remove_dominated_programs`,
    the weakest (lowest mean, then oldest) go first, one at a time, so of two candidates
    that tie on every task one stays.
    """
    fronts: list[set[str]] = []
    tasks = sorted({t for scores in per_task.values() for t in scores})
    for task in tasks:
        values = {cid: s.get(task) for cid, s in per_task.items()}
        known = [v for v in values.values() if v is not None]
        if known:
            top = max(known)
            fronts.append({c for c, v in values.items() if v is not None and v >= top - SCORE_EPS})
    alive = {c for front in fronts for c in front}

    def mean(cid: str) -> float:
        known = [v for v in per_task[cid].values() if v is not None]
        return sum(known) / len(known) if known else 0.0

    order = sorted(alive, key=lambda c: (mean(c), c != BASELINE_ID, c))
    removed = True
    while removed:
        removed = False
        for cid in order:
            if cid in alive and all(len(front & alive) > 1 for front in fronts if cid in front):
                alive.discard(cid)
                removed = True
                break
    return {cid: sum(1 for front in fronts if cid in front) for cid in sorted(alive)}


def sample_parent(per_task: Mapping[str, Mapping[str, float | None]], rng: random.Random) -> str:
    """A parent from the per-task front less its dominated members, weighted by tasks won
    (the baseline when none wins)."""
    wins = front_parents(per_task)
    front = sorted(wins, key=lambda c: (c != BASELINE_ID, c))
    if not front:
        return BASELINE_ID if BASELINE_ID in per_task else sorted(per_task)[0]
    return rng.choices(front, weights=[wins[c] for c in front], k=1)[0]

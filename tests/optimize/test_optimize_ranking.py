"""Ranking and the honesty rules: ★ only beyond the noise, error-rate eligibility, Pareto flags,
and parent sampling from the per-task front."""

from __future__ import annotations

import random
from collections import Counter

from agentopt.contracts.optimize_job import CandidateRecord, ScoreSummary
from agentopt.workflows.optimize import rank_candidates, sample_parent, task_wins
from agentopt.workflows.optimize.ranking import front_parents


def record(
    cid: str,
    scores: list[float],
    *,
    number: int = 0,
    tokens: float = 100.0,
    cost: float = 0.01,
    error_rate: float = 0.0,
) -> CandidateRecord:
    per_task: dict[str, float | None] = {f"t{i}": s for i, s in enumerate(scores)}
    return CandidateRecord(
        id=cid,
        number=number,
        strategy="-" if cid == "baseline" else "instructions",
        status="baseline" if cid == "baseline" else "evaluated",
        validation=ScoreSummary(
            score=sum(scores) / len(scores),
            pass_rate=sum(s >= 1 for s in scores) / len(scores),
            n=len(scores),
            error_rate=error_rate,
            per_task=per_task,
        ),
        tokens=tokens,
        cost=cost,
    )


def test_a_consistent_gain_gets_the_star_and_improved() -> None:
    base = record("baseline", [0.2, 0.4, 0.5, 0.1, 0.3, 0.6, 0.2, 0.4])
    better = record("cand_01", [0.6, 0.8, 0.8, 0.5, 0.7, 0.9, 0.6, 0.7], number=1)
    ranking = rank_candidates([base, better], seed=0)
    assert ranking.best == "cand_01" and ranking.outcome == "improved"
    assert better.star and not base.star
    assert better.delta is not None and better.delta.low > 0


def test_the_top_score_without_a_gain_beyond_noise_is_no_improvement() -> None:
    base = record("baseline", [0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    # Higher mean (0.583), but one big win and several losses: the interval includes 0.
    lucky = record("cand_01", [1.0, 1.0, 0.5, 0.25, 0.5, 0.25], number=1)
    ranking = rank_candidates([base, lucky], seed=0)
    assert ranking.order[0] == "cand_01" and ranking.best == "cand_01"
    assert lucky.delta is not None and lucky.delta.low <= 0 < lucky.delta.mean
    assert not lucky.star
    assert ranking.outcome == "no_improvement"


def test_baseline_on_top_means_no_improvement() -> None:
    base = record("baseline", [1.0, 1.0, 1.0])
    worse = record("cand_01", [0.0, 1.0, 0.0], number=1)
    ranking = rank_candidates([base, worse], seed=0)
    assert ranking.best == "baseline" and ranking.outcome == "no_improvement"
    assert not any(c.star for c in (base, worse))


def test_a_candidate_with_ten_more_points_of_errors_is_not_eligible() -> None:
    base = record("baseline", [0.1] * 6, error_rate=0.0)
    erratic = record("cand_01", [0.9] * 6, number=1, error_rate=0.17)
    steady = record("cand_02", [0.7] * 6, number=2, error_rate=0.10)
    ranking = rank_candidates([base, erratic, steady], seed=0)
    assert not erratic.eligible and steady.eligible
    assert ranking.order[0] == "cand_01"  # still ranked by score…
    assert ranking.best == "cand_02" and steady.star  # …but not eligible to be best


def test_pareto_flags_on_tokens_and_on_cost() -> None:
    base = record("baseline", [0.5] * 4, tokens=430, cost=0.021)
    best = record("cand_01", [0.8] * 4, number=1, tokens=512, cost=0.024)
    lean = record("cand_02", [0.7] * 4, number=2, tokens=298, cost=0.009)
    pricey = record("cand_03", [0.7] * 4, number=3, tokens=290, cost=0.030)
    rank_candidates([base, best, lean, pricey], seed=0)
    assert (best.pareto.tokens, best.pareto.cost) == (True, True)
    assert (lean.pareto.tokens, lean.pareto.cost) == (False, True)  # pricey has fewer tokens
    assert (pricey.pareto.tokens, pricey.pareto.cost) == (True, False)
    assert not base.pareto.tokens and not base.pareto.cost  # dominated by lean on both


def test_parents_come_from_the_per_task_front_weighted_by_wins() -> None:
    per_task = {
        "baseline": {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0},
        "cand_01": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0},
        "cand_02": {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.0},
        "cand_03": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.5},  # best on no task: never a parent
    }
    assert task_wins(per_task) == {"baseline": 0, "cand_01": 3, "cand_02": 1, "cand_03": 0}
    rng = random.Random(1)
    drawn = Counter(sample_parent(per_task, rng) for _ in range(400))
    assert set(drawn) == {"cand_01", "cand_02"}
    assert 2.2 < drawn["cand_01"] / drawn["cand_02"] < 4.0  # about 3 : 1


def test_ties_share_the_win() -> None:
    per_task = {"baseline": {"a": 1.0, "b": 0.0}, "cand_01": {"a": 1.0, "b": 1.0}}
    assert task_wins(per_task) == {"baseline": 1, "cand_01": 2}


def test_a_dominated_candidate_is_never_a_parent() -> None:
    """The baseline ties cand_01 on the only task it wins: drawing it would spend proposals on
    a parent cand_01 matches everywhere (GEPA drops such programs from its front too)."""
    per_task = {
        "baseline": {"a": 1.0, "b": 0.0, "c": 0.0},
        "cand_01": {"a": 1.0, "b": 1.0, "c": 0.0},
        "cand_02": {"a": 0.0, "b": 0.0, "c": 1.0},
    }
    assert task_wins(per_task) == {"baseline": 1, "cand_01": 2, "cand_02": 1}
    assert front_parents(per_task) == {"cand_01": 2, "cand_02": 1}
    rng = random.Random(3)
    drawn = Counter(sample_parent(per_task, rng) for _ in range(300))
    assert set(drawn) == {"cand_01", "cand_02"}


def test_of_two_candidates_equal_everywhere_the_newer_stays() -> None:
    per_task = {
        "baseline": {"a": 0.0, "b": 0.0},
        "cand_01": {"a": 1.0, "b": 0.0},
        "cand_02": {"a": 1.0, "b": 0.0},
        "cand_03": {"a": 0.0, "b": 1.0},
    }
    assert front_parents(per_task) == {"cand_02": 1, "cand_03": 1}
    # Only the baseline: it is the parent.
    assert sample_parent({"baseline": {"a": 0.0}}, random.Random(1)) == "baseline"

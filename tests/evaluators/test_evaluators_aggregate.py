"""Turn, task, thread and run scores; repeats and flakiness; bootstrap intervals; the glue from a
transcript to samples and results."""

from __future__ import annotations

import asyncio
import json
import statistics

import pytest

from agentopt.contracts.eval_result import EvalCost
from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnError, TurnResult
from agentopt.contracts.usage import Usage
from agentopt.core.errors import BudgetExceeded
from agentopt.evaluators import (
    EvalResult,
    EvalSample,
    bootstrap_ci,
    evaluate_sample,
    paired_bootstrap_ci,
    samples_from_run,
    score_task,
    score_transcript,
    score_turn,
    summarize_run,
)


def ok(name="builtin.relevance", norm=1.0, tokens=0):
    return EvalResult(
        evaluator=name,
        status="pass",
        score=norm,
        normalized=norm,
        cost=EvalCost(input_tokens=tokens, output_tokens=tokens // 10),
    )


def bad(name="builtin.relevance", norm=0.0):
    return EvalResult(evaluator=name, status="fail", score=norm, normalized=norm)


def err(name="builtin.relevance", code="judgeUnavailable"):
    return EvalResult.failed_to_evaluate(name, code, "boom")


AGENT_FAILED = TurnError(code="agentRequestFailed", message="500")


@pytest.mark.parametrize(
    ("results", "agent_error", "status", "score"),
    [
        ([ok(norm=1.0), ok(norm=0.5)], None, "pass", 0.75),
        ([ok(norm=1.0), bad(norm=0.25)], None, "fail", 0.625),
        ([ok(norm=1.0), err(), bad(norm=0.0)], None, "partial", 0.5),  # error left out of the mean
        ([err()], None, "partial", None),
        ([], AGENT_FAILED, "error", None),
        ([ok()], AGENT_FAILED, "error", 1.0),
        ([], None, "pass", None),
    ],
)
def test_turn_status_and_score(results, agent_error, status, score):
    t = score_turn(results, agent_error=agent_error)
    assert t.status == status
    assert t.score == (pytest.approx(score) if score is not None else None)


@pytest.mark.parametrize(
    ("statuses", "thread"),
    [
        (["pass", "pass"], "pass"),
        (["pass", "fail"], "fail"),
        (["fail", "partial", "pass"], "partial"),
        (["partial", "error", "fail"], "error"),
    ],
)
def test_thread_status_precedence(statuses, thread):
    make = {"pass": [ok()], "fail": [bad()], "partial": [err()], "error": []}
    turns = [
        score_turn(make[s], index=i, agent_error=AGENT_FAILED if s == "error" else None)
        for i, s in enumerate(statuses)
    ]
    assert score_task("t", turns).status == thread


def test_thread_score_is_the_mean_of_turn_scores():
    turns = [
        score_turn([ok(norm=1.0)], index=0),
        score_turn([ok(norm=1.0), bad(norm=0.0)], index=1),  # 0.5
        score_turn([err()], index=2),  # no score
    ]
    ts = score_task("thread", turns)
    assert ts.score == pytest.approx(0.75) and ts.status == "partial"
    assert len(ts.results) == 4


def test_turns_after_a_failed_turn_are_skipped():
    transcript = Transcript(
        turns=[TurnResult(query="a", response="x"), TurnResult(query="b", error=AGENT_FAILED)]
    )
    ts = score_transcript("t", transcript, [[ok()], []], n_turns=4)
    assert [t.status for t in ts.turns] == ["pass", "error", "error", "error"]
    assert [t.error.code for t in ts.turns[1:]] == [
        "agentRequestFailed",
        "turnSkipped",
        "turnSkipped",
    ]
    assert ts.status == "error" and ts.error.code == "agentRequestFailed"


def run_of(scores_statuses, repeat=0):
    out = []
    for name, status, norm in scores_statuses:
        result = {"pass": ok(norm=norm), "fail": bad(norm=norm), "partial": err()}[status]
        out.append(score_task(name, [score_turn([result])], repeat=repeat))
    return out


def test_run_summary():
    tasks = [
        score_task(
            "a", [score_turn([ok("builtin.relevance", 1.0, tokens=100), ok("builtin.exact_match")])]
        ),
        score_task("b", [score_turn([bad("builtin.relevance", 0.25), ok("builtin.exact_match")])]),
        score_task("c", [score_turn([err("builtin.relevance"), bad("builtin.exact_match")])]),
        score_task("d", [score_turn([], agent_error=AGENT_FAILED)]),
    ]
    s = summarize_run(
        tasks,
        tokens_by_pool={"agent": Usage(input_tokens=500, output_tokens=50)},
        cost_by_pool={"agent": 0.02},
    )
    assert (s.tasks, s.runs, s.passed, s.failed, s.partial, s.errored) == (4, 4, 1, 1, 1, 1)
    assert s.pass_rate == 0.25
    assert s.score == pytest.approx((1.0 + 0.625 + 0.0) / 3)  # d has no score
    by = {e.evaluator: e for e in s.evaluators}
    rel = by["builtin.relevance"]
    assert (rel.count, rel.passed, rel.failed, rel.errors) == (3, 1, 1, 1)
    assert rel.pass_rate == 0.5 and rel.mean == pytest.approx(0.625)
    assert by["builtin.exact_match"].pass_rate == pytest.approx(2 / 3)
    assert s.errors_by_kind == {"agentRequestFailed": 1, "judgeUnavailable": 1}
    assert s.tokens["agent"].input_tokens == 500
    assert s.tokens["judge"].input_tokens == 100 and s.tokens["judge"].output_tokens == 10
    assert s.cost_usd["agent"] == 0.02
    assert s.repeats == [] and s.flaky == []
    json.loads(s.model_dump_json())


def test_repeats_mean_std_pass_fraction_and_flaky():
    runs = (
        run_of([("steady", "pass", 1.0), ("wobbly", "pass", 0.8)], repeat=0)
        + run_of([("steady", "pass", 1.0), ("wobbly", "fail", 0.2)], repeat=1)
        + run_of([("steady", "pass", 1.0), ("wobbly", "partial", 0.0)], repeat=2)
    )
    s = summarize_run(runs)
    assert (s.tasks, s.runs) == (2, 6)
    stats = {r.name: r for r in s.repeats}
    assert stats["steady"].flaky is False and stats["steady"].std == 0.0
    assert stats["steady"].pass_fraction == 1.0
    wobbly = stats["wobbly"]
    assert wobbly.flaky is True and s.flaky == ["wobbly"]
    assert wobbly.scores == [0.8, 0.2, None]
    assert wobbly.mean == pytest.approx(0.5)
    assert wobbly.std == pytest.approx(statistics.stdev([0.8, 0.2]))
    assert wobbly.pass_fraction == pytest.approx(1 / 3)
    assert s.score == pytest.approx((1.0 + 0.5) / 2)


def test_error_then_pass_is_not_flaky():
    runs = run_of([("t", "pass", 1.0)], 0) + run_of([("t", "partial", 0.0)], 1)
    assert summarize_run(runs).flaky == []


def test_bootstrap_ci_contains_the_mean_and_is_deterministic():
    values = [0.1, 0.9, 0.5, 0.7, 0.3, 1.0, 0.0, 0.6, 0.4, 0.8]
    a = bootstrap_ci(values, seed=7)
    assert a == bootstrap_ci(values, seed=7)
    assert a.low <= a.mean <= a.high and a.mean == pytest.approx(0.53)
    assert 0.0 <= a.low < a.high <= 1.0
    assert a.high - a.low < 0.6
    assert bootstrap_ci(values, seed=8) != a  # the seed matters
    wide = bootstrap_ci(values, seed=7, level=0.99)
    assert wide.low <= a.low and wide.high >= a.high
    assert bootstrap_ci([0.5]) is None
    constant = bootstrap_ci([0.5] * 5)
    assert constant.low == constant.high == 0.5


def test_run_summary_has_ci_over_tasks():
    runs = run_of([(f"t{i}", "pass", i / 10) for i in range(10)])
    s = summarize_run(runs, seed=3)
    assert s.ci is not None and s.ci.n == 10
    assert s.ci.low <= s.score <= s.ci.high
    assert summarize_run(runs, seed=3).ci == s.ci


def test_paired_bootstrap():
    base = {f"t{i}": 0.5 for i in range(20)}
    better = {f"t{i}": 0.5 + (0.2 if i % 2 else 0.1) for i in range(20)}
    d = paired_bootstrap_ci(base, better, seed=1)
    assert d.mean == pytest.approx(0.15) and d.low > 0 and d.improved and not d.regressed
    assert paired_bootstrap_ci(better, base, seed=1).regressed
    noisy = {f"t{i}": 0.5 + (0.3 if i % 2 else -0.3) for i in range(20)}
    n = paired_bootstrap_ci(base, noisy, seed=1)
    assert n.low < 0 < n.high and not n.improved
    # only shared tasks are paired
    partial = paired_bootstrap_ci({"a": 0.0, "b": 0.0}, {"b": 1.0, "c": 0.0}, seed=0)
    assert partial.n == 1 and partial.mean == 1.0
    assert paired_bootstrap_ci({"a": 0.0}, {"b": 1.0}) is None
    assert paired_bootstrap_ci([0.1, 0.2], [0.3, 0.4], 5).mean == pytest.approx(0.2)
    with pytest.raises(ValueError):
        paired_bootstrap_ci([0.1], [0.2, 0.3])


# --- glue: transcript → samples → results ------------------------------------------------------
def test_samples_from_run_carry_history_tools_and_metrics():
    t = Task(
        name="thread",
        turns=[
            Turn(query="hi", ground_truth="hello"),
            Turn(
                query="refund?", context="30 days", criteria=[Criterion(name="c", instruction="i")]
            ),
        ],
    )
    transcript = Transcript(
        turns=[
            TurnResult(
                query="hi",
                response="hello!",
                latency_s=0.5,
                usage=Usage(input_tokens=10, output_tokens=5),
            ),
            TurnResult(
                query="refund?",
                response="30 days",
                tool_calls=[ToolCallRecord(name="policy", result="30 days")],
                latency_s=1.0,
            ),
        ],
        tool_definitions=[{"type": "function", "function": {"name": "policy"}}],
        system_prompt="Be helpful.",
    )
    first, second = samples_from_run(t, transcript, repeat=2)
    assert first.history == [] and first.tokens == 15 and first.ground_truth == "hello"
    assert [h.model_dump() for h in second.history] == [{"query": "hi", "response": "hello!"}]
    assert second.context == "30 days" and second.criteria[0].name == "c"
    assert second.tool_outputs == "[policy] 30 days"
    assert second.instructions == "Be helpful." and second.repeat == 2 and second.turn_index == 1


class Exploding:
    name = "x.exploding"

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        raise KeyError("oops")


class Budget:
    name = "x.budget"

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        raise BudgetExceeded("max cost reached")


class Fine:
    name = "x.fine"

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        await asyncio.sleep(0)
        return ok(self.name)


def test_evaluate_sample_keeps_order_and_contains_bugs():
    results = asyncio.run(evaluate_sample([Exploding(), Fine()], EvalSample(response="r")))
    assert [r.evaluator for r in results] == ["x.exploding", "x.fine"]
    assert results[0].status == "error" and results[0].error.code == "evaluatorCrashed"
    assert "KeyError" in results[0].error.message


def test_evaluate_sample_lets_systemic_errors_through():
    with pytest.raises(BudgetExceeded):
        asyncio.run(evaluate_sample([Fine(), Budget()], EvalSample(response="r")))


def _python_interval(values, seed, resamples=2000, level=0.95):
    """The interval as the pure-Python bootstrap computed it before numpy (random.choices)."""
    import math
    import random

    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = (1.0 - level) / 2.0
    lo_i = max(0, math.floor(alpha * resamples))
    hi_i = min(resamples - 1, math.ceil((1.0 - alpha) * resamples) - 1)
    return means[lo_i], means[hi_i]


@pytest.mark.parametrize("n", [2, 7, 300, 2500])
@pytest.mark.parametrize("seed", [0, 7, -3, 2**40 + 11])
def test_the_vectorised_bootstrap_gives_the_python_interval_bit_for_bit(n, seed, monkeypatch):
    import random

    from agentopt.evaluators import stats

    # Several chunks even for small inputs; past 1,024 values a resample is drawn in pieces.
    monkeypatch.setattr(stats, "CHUNK_DRAWS", 1024)
    rng = random.Random(n)
    values = [rng.choice([0.0, 0.25, 1.0]) * rng.random() for _ in range(n)]
    low, high = _python_interval(values, seed, resamples=300)
    ci = bootstrap_ci(values, seed=seed, resamples=300)
    mean = sum(values) / n
    assert (ci.low, ci.high) == (min(low, mean), max(high, mean))
    base = [v * 0.5 for v in values]
    delta = paired_bootstrap_ci(base, values, seed, resamples=300)
    d_low, d_high = _python_interval(
        [b - a for a, b in zip(base, values, strict=True)], seed, resamples=300
    )
    d_mean = sum(b - a for a, b in zip(base, values, strict=True)) / n
    assert (delta.low, delta.high) == (min(d_low, d_mean), max(d_high, d_mean))


def test_the_prefetch_loads_what_the_bootstrap_uses():
    """A fresh process that calls `prefetch_numpy` finds numpy and numpy.random loaded a moment
    later, before any bootstrap asked for them (the finish phase then imports nothing)."""
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "from agentopt.evaluators.stats import prefetch_numpy\n"
        "assert 'numpy.random' not in sys.modules\n"
        "prefetch_numpy()\n"
        "for t in threading.enumerate():\n"
        "    if t.name == 'agentopt-numpy':\n"
        "        t.join(30)\n"
        "print(hasattr(sys.modules.get('numpy.random'), 'RandomState'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("values", [[0.1] * 7, [1.0] * 1000, [0.3] * 33, [2.0 / 3.0] * 12])
def test_one_score_everywhere_gives_the_interval_the_draws_give_without_drawing(values):
    """Every resample of n equal values has the same mean: the interval is that point, bit
    for bit what the resampled means give (so no numpy is needed for it)."""
    from agentopt.evaluators.stats import _percentile_interval, _resampled_means

    drawn = _resampled_means(values, 5, 200)
    assert _percentile_interval(values, 5, 200, 0.95) == (drawn[0], drawn[-1])
    assert drawn[0] == drawn[-1]


def test_the_tally_knows_when_scores_differ():
    from agentopt.evaluators import RunTally

    tally = RunTally()
    for i in range(3):
        tally.add((i, 0), score_task(f"t{i}", [score_turn([ok()])], repeat=0))
    tally.add((5, 0), score_task("t5", [score_turn([err()])], repeat=0))  # no score at all
    assert not tally.varied
    tally.add((9, 0), score_task("t9", [score_turn([bad()])], repeat=0))
    assert tally.varied


def test_tokens_errors_repeats_and_result_counts_that_appear_late_are_counted_for_every_unit():
    """The tally keeps no column of a result's tokens or error, of a unit's repeat, or of
    where a unit's results are, while every value is its default (or every unit has as many
    results); the first other value fills it in, and the units before it read as before."""
    from agentopt.evaluators import RunTally

    tally = RunTally()
    for i in range(3):
        tally.add((i, 0), score_task(f"t{i}", [score_turn([ok()])], repeat=0))
    tally.add((3, 0), score_task("t3", [score_turn([ok(tokens=40)])], repeat=0))
    tally.add((4, 0), score_task("t4", [score_turn([err(code="judgeParseFailed")])], repeat=0))
    tally.add((0, 1), score_task("t0", [score_turn([bad()])], repeat=1))
    # Rows of one result each, then one of two: where each row's results are is kept from here.
    tally.add((5, 0), score_task("t5", [score_turn([ok(), bad(name="other")])], repeat=0))
    tally.add((6, 0), score_task("t6", [score_turn([ok()])], repeat=0))
    stats = tally.stats(seed=1)
    counted = {e.name: (e.count, e.passed, e.failed, e.errors) for e in stats.evaluators}
    assert counted == {"builtin.relevance": (8, 6, 1, 1), "other": (1, 0, 1, 0)}
    assert stats.tokens["judge"] == Usage(input_tokens=40, output_tokens=4)
    assert stats.errors_by_kind == {"judgeParseFailed": 1}
    assert stats.runs == 8 and stats.passed == 5 and stats.failed == 2
    by_task = {r.name: r for r in stats.repeats}
    assert by_task["t0"].repeats == 2 and by_task["t0"].scores == [1.0, 0.0]
    assert by_task["t3"].repeats == 1 and by_task["t3"].scores == [1.0]


def test_two_positions_of_one_name_are_one_task_in_the_summary():
    """Tasks at two positions share a name only where a dataset named two alike: the summary
    counts them as one task (found by the names' hashes, then the names)."""
    from agentopt.evaluators import RunTally

    tally = RunTally()
    for pos, name in enumerate(["a", "b", "a", "c"]):
        tally.add((pos, 0), score_task(name, [score_turn([ok() if pos else bad()])], repeat=0))
    stats = tally.stats(seed=1)
    assert (stats.tasks, stats.runs) == (3, 4)
    apart = RunTally()
    for pos, name in enumerate(["a", "b", "d", "c"]):
        apart.add((pos, 0), score_task(name, [score_turn([ok()])], repeat=0))
    assert apart.stats(seed=1).tasks == 4

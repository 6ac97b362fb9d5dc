"""The finish phase's memory does not grow faster than the run: counting the tally, the
bootstrap interval and streaming results.json allocate at most a fixed budget per 1,000 tasks
(peak, measured by tracemalloc, which numpy's arrays report to as well). A bootstrap that built
every resample's indices before using them took 16 KB a task: 1.7 GB at 100,000 tasks."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import RunInfo
from agentopt.contracts.task import Task, Turn
from agentopt.contracts.task_record import RepeatOutcome
from agentopt.evaluators import EvalResult, score_task, score_turn
from agentopt.evaluators.stats import bootstrap_ci
from agentopt.workflows.run.results import write_results
from agentopt.workflows.run.store import RunStore

BUDGET_PER_1000 = 1_000_000
"""Bytes of peak the finish phase may add per 1,000 tasks (what it needs is ~0.3 MB: a few
pointers and a float per task, and results.json's offsets)."""


def _store(root: Path, n: int) -> tuple[RunStore, list[Task]]:
    store = RunStore(root)
    tasks = []
    for pos in range(n):
        value = (pos * 7919 % 1000) / 1000
        verdict = "pass" if value > 0.3 else "fail"
        result = EvalResult(evaluator="x", status=verdict, score=value, normalized=value)
        score = score_task(f"t{pos}", [score_turn([result])], repeat=0)
        record = RepeatOutcome(repeat=0, status=score.status, response=f"answer {pos}")
        store.append(RunJournalEntry(task=pos, repeat=0, score=score, record=record))
        tasks.append(Task(name=f"t{pos}", index=pos, turns=[Turn(query=f"q{pos}")]))
    store.flush()
    return store, tasks


def _finish_peak(store: RunStore, tasks: list[Task]) -> int:
    """The peak the finish phase adds: the run's numbers, then results.json (as
    `finish_results` does them)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        stats = store.tally.stats(seed=3)
        assert stats.ci is not None and stats.runs == len(tasks)
        write_results(store, tasks, {}, RunInfo(id=store.run_id), stats.summary({}))
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_the_finish_phase_allocates_a_fixed_budget_per_1000_tasks(tmp_path: Path) -> None:
    small_store, small_tasks = _store(tmp_path / "small", 500)
    big_store, big_tasks = _store(tmp_path / "big", 2_500)
    bootstrap_ci([0.1, 0.2, 0.3])  # numpy's import is not the finish phase's
    small = _finish_peak(small_store, small_tasks)
    big = _finish_peak(big_store, big_tasks)
    small_store.close()
    big_store.close()
    per_1000 = (big - small) / 2
    assert per_1000 <= BUDGET_PER_1000, f"{per_1000 / 1000:.0f} KB of peak per 1,000 tasks"


def test_the_bootstrap_alone_stays_within_its_chunk_whatever_the_tasks() -> None:
    """The interval of 100,000 values needs the values and one chunk of resamples, not the
    2,000 resamples' 1.6 GB of indices."""
    values = [(i * 7919 % 1000) / 1000 for i in range(100_000)]
    bootstrap_ci(values[:10])
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        interval = bootstrap_ci(values, seed=1, resamples=200)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert interval is not None and interval.low < interval.mean < interval.high
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB"


def test_the_tally_keeps_a_unit_in_64_bytes() -> None:
    """What the run keeps of each finished unit until its summary: a row of arrays, ~48 bytes
    with one evaluator (a record object per unit took ~450 bytes; arrays of every repeat,
    token count, error and result span ~73)."""
    from agentopt.evaluators import RunTally

    scores = []
    for pos in range(4_000):
        value = (pos * 7919 % 1000) / 1000
        result = EvalResult(evaluator="x", status="pass", score=value, normalized=value)
        scores.append(score_task(f"task-{pos}", [score_turn([result])], repeat=0))
    tracemalloc.start()
    try:
        tally = RunTally()
        for pos, score in enumerate(scores):
            tally.add((pos, 0), score)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(tally) == 4_000 and tally.stats().runs == 4_000
    assert held / 4_000 < 64, f"{held / 4_000:.0f} bytes a unit"


def test_the_runs_numbers_peak_at_a_few_bytes_a_task(monkeypatch) -> None:
    """The run's numbers peak at ~20 bytes a task (each task's mean for the interval, the
    names' 8-byte hashes): each result's cost and score are summed as they come, and past
    `CHUNK_DRAWS` tasks a resample is drawn in pieces. Arrays of every cost and score and a
    whole resample's four arrays of n took ~57 bytes a task (5 MB at 100,000 tasks)."""
    from agentopt.evaluators import RunTally
    from agentopt.evaluators import stats as stats_module

    monkeypatch.setattr(stats_module, "CHUNK_DRAWS", 1024)  # 100,000 tasks' case, smaller

    def tally(n: int) -> RunTally:
        out = RunTally()
        for pos in range(n):
            value = (pos * 7919 % 1000) / 1000
            result = EvalResult(evaluator="x", status="pass", score=value, normalized=value)
            out.add((pos, 0), score_task(f"t{pos}", [score_turn([result])], repeat=0))
        return out

    tally(10).stats(seed=3, resamples=20)  # numpy's import is not the summary's
    counted = tally(12_000)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        assert counted.stats(seed=3, resamples=20).runs == 12_000
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak / 12_000 <= 32, f"{peak / 12_000:.0f} bytes a task"

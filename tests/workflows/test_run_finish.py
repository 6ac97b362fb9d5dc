"""The finish phase: the summary is counted while the run goes, results.json is written once
and never read back, and only what is written gets redacted."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import RunInfo, RunResults
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task_record import RepeatOutcome, TaskOutcome
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core.journal import append_entry
from agentopt.core.redaction import MASK
from agentopt.evaluators import EvalResult, RunTally, score_task, score_turn, summarize_run
from agentopt.reports.formatting import SummaryTasks, flaky_tasks, slowest_tasks, worst_tasks
from agentopt.workflows.run.store import RunStore
from tests.fake_openai import FakeOpenAI

runner = CliRunner()


def _unit(name: str, repeat: int, rng: random.Random) -> TaskScore:
    results = []
    for ev in ("a", "b"):
        pick = rng.random()
        if pick < 0.15:
            results.append(EvalResult.failed_to_evaluate(ev, "judgeUnavailable", "429"))
        else:
            value = rng.random()
            status = "pass" if value > 0.4 else "fail"
            results.append(EvalResult(evaluator=ev, status=status, score=value, normalized=value))
    return score_task(name, [score_turn(results)], repeat=repeat)


def test_the_tally_matches_the_summary_of_all_scores_whatever_the_completion_order() -> None:
    rng = random.Random(5)
    units = {(pos, r): _unit(f"t{pos}", r, rng) for pos in range(40) for r in range(3)}
    in_order = summarize_run([units[k] for k in sorted(units)], seed=4)
    keys = list(units)
    rng.shuffle(keys)
    tally = RunTally()
    stale = _unit("t7", 1, random.Random(99))
    tally.add((7, 1), stale)  # an earlier, failed attempt of a unit: replaced below
    for key in keys:
        tally.add(key, units[key])
    assert len(tally) == 120
    assert tally.stats(seed=4) == in_order


def test_the_summary_keeps_exactly_the_tasks_the_terminal_names() -> None:
    rng = random.Random(11)
    tasks = []
    for i in range(300):
        status = rng.choice(["pass", "pass", "fail", "partial", "error"])
        score = None if status == "error" else round(rng.random(), 1)  # ties on purpose
        tasks.append(
            TaskOutcome(
                name=f"t{i}",
                index=i,
                query="q",
                status=status,
                score=score,
                latency_s=round(rng.random(), 1),
                flaky=rng.random() < 0.03,
            )
        )
    full = RunResults(run=RunInfo(id="r"), tasks=tasks)
    keeper = SummaryTasks()
    for task in tasks:
        keeper.add(task)
    kept = RunResults(run=RunInfo(id="r"), tasks=keeper.tasks())
    assert len(kept.tasks) <= 10 + len(flaky_tasks(full))
    assert worst_tasks(kept) == worst_tasks(full)
    assert slowest_tasks(kept) == slowest_tasks(full)
    assert flaky_tasks(kept) == flaky_tasks(full)


def _entry(pos: int, repeat: int, status: str = "pass") -> RunJournalEntry:
    turn = score_turn([EvalResult(evaluator="x", status="pass", score=1.0, normalized=1.0)])
    score = score_task(f"t{pos}", [turn], repeat=repeat)
    if status != "pass":
        score = score.model_copy(update={"status": status})
    record = RepeatOutcome(repeat=repeat, status=score.status, response=f"answer {pos}")
    return RunJournalEntry(task=pos, repeat=repeat, score=score, record=record)


def test_the_store_counts_appends_and_an_earlier_session_from_one_scan(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    for pos in range(5):
        store.append(_entry(pos, 0, "error" if pos == 2 else "pass"))
    store.close()
    # A crash mid-write left half a line behind.
    with open(store.journal, "ab") as fh:
        fh.write(b'{"task": 9, "rep')
    again = RunStore(tmp_path, store.run_id)
    assert again.done_keys() == {(0, 0), (1, 0), (3, 0), (4, 0)}
    again.append(_entry(2, 0))  # the failed unit, run again on --resume
    offsets = dict(again.offsets())
    again.close()
    lines = store.journal.read_bytes().split(b"\n")
    assert lines[5] == b'{"task": 9, "rep'  # the fragment stays alone on its line
    with open(store.journal, "rb") as fh:
        fh.seek(offsets[(2, 0)])
        latest = RunJournalEntry.model_validate_json(fh.readline())
    assert latest.score.status == "pass"
    assert again.tally.stats().passed == 5
    fresh = RunStore(tmp_path, store.run_id)
    assert dict(fresh.offsets()) == offsets and fresh.tally.stats() == again.tally.stats()


def test_eval_run_writes_results_once_and_never_reads_them_back(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"name": f"t{i}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(30)]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run read back or re-redacted its own results")

    monkeypatch.setattr("agentopt.contracts.run_results.load_results", refuse)
    monkeypatch.setattr("agentopt.workflows.run.eval_run.load_results", refuse)
    monkeypatch.setattr("agentopt.reports.outputs.redacted", refuse)
    with FakeOpenAI(schemas="any") as srv:
        args = ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl"]
        args += ["--agent-model", f"compat:fake@{srv.base_url}", "--evaluator", "ExactMatch"]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run_dir = sorted((project / ".agentopt" / "runs").iterdir())[-1]
    saved = json.loads((run_dir / "results.json").read_text())
    assert saved["summary"]["passed"] == 30 and len(saved["tasks"]) == 30
    assert "Slowest tasks" in result.output


def test_a_secret_in_tasks_and_answers_reaches_no_file_of_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal, results.json, answers.jsonl and the cache are masked as they are written
    (the task text comes from the dataset, the answer echoes it), and so is optimize's
    journal (`core.journal`)."""
    secret = "Zq81xT0pL3mN5vB7cR9dW2"
    monkeypatch.setenv("SHOP_API_KEY", secret)
    rows = [{"name": "t0", "query": f"my key is {secret}", "ground_truth": secret}]
    (project / "tasks.jsonl").write_text(json.dumps(rows[0]) + "\n")
    with FakeOpenAI(schemas="any") as srv:
        args = ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl"]
        args += ["--agent-model", f"compat:fake@{srv.base_url}", "--evaluator", "ExactMatch"]
        result = runner.invoke(app, args)
        assert secret in srv.last.body["messages"][-1]["content"]  # the agent was asked it
    assert result.exit_code == 0, result.output
    run_dir = sorted((project / ".agentopt" / "runs").iterdir())[-1]
    written = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    assert {"journal.jsonl", "results.json"} <= set(written)
    assert [name for name, data in written.items() if secret.encode() in data] == []
    assert b"my key is ***" in written["results.json"]
    assert secret.encode() not in (project / ".agentopt" / "cache.sqlite").read_bytes()
    assert secret not in result.output
    # answers.jsonl (kept only beside an evaluator error) is masked the same way.
    store = RunStore(project, "answers-only")
    store.append_answer(0, 0, Transcript(system_prompt=secret, turns=[TurnResult(query=secret)]))
    store.close()
    assert secret not in store.answers.read_text() and MASK in store.answers.read_text()
    journal = project / "optimize-journal.jsonl"
    append_entry(journal, {"candidate": {"instructions": f"use {secret}"}})
    assert secret not in journal.read_text() and "use ***" in journal.read_text()

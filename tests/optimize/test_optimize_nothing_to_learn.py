"""When the search has nothing left to learn from, it spends no call on it: a parent whose
weakest train tasks all pass gets no reflection (GEPA's skip of a perfect minibatch), and a
search whose proposers are used up ends by itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord, Screening
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task_record import RepeatOutcome, UnitResult
from agentopt.workflows.optimize.evaluation import UnitBook
from agentopt.workflows.optimize.perfect import (
    RESIST_LIMIT,
    Barren,
    nothing_new_to_ask,
    nothing_to_learn,
    resisted,
)
from tests.optimize.conftest import Models, make_project, optimize, task


def test_a_parent_that_passes_its_weakest_train_tasks_gets_no_reflection_call(
    tmp_path: Path, models: Models
) -> None:
    # The baseline says the one train phrase, so it passes every train task; validation asks
    # for another phrase, so the search is not at the ceiling and goes on proposing.
    reflect = models.add(
        "opt_reflect_unused",
        lambda req: json.dumps({"instructions": "Say 'tracking link'.", "rationale": "x"}),
    )
    project = make_project(
        tmp_path,
        [task(f"tr{i}", "refund window") for i in range(6)],
        validation=[task(f"va{i}", "tracking link") for i in range(4)],
        test=[task(f"te{i}", "tracking link") for i in range(2)],
        instructions="Mention the 'refund window'.",
        options={"optimization_model": "mock:opt_reflect_unused"},
    )
    outcome = optimize(project, targets=["instructions"], max_stalls=2, seed=4)
    job = outcome.job
    assert reflect.requests == []  # before: one reflection call per proposal, on passes only
    assert [c.id for c in job.candidates] == ["baseline"]  # nothing screened
    entries = [json.loads(line) for line in outcome.store.journal.read_text().splitlines()]
    reasons = [e["reason"] for e in entries if e["kind"] == "proposal"]
    assert len(reasons) == 2 * 2  # the empty proposals that end a search (2 × max_stalls)
    assert all(r.startswith("nothing to learn from: baseline passed all 3") for r in reasons)
    # Nothing was screened, so nothing failed screening: the search ran out of proposals.
    assert job.termination_reason == "completed" and job.stalls == 0
    assert job.stop_reason == (
        "completed: the search reached its end (4 proposals in a row put nothing new on "
        f"screening; the last: {reasons[-1]})"
    )
    # The baseline ran its minibatches (once per task: later slots reuse the units).
    units = [e for e in entries if e["kind"] == "unit" and e["candidate"] == "baseline"]
    train = [u["task"] for u in units if u["task"].startswith("tr")]
    assert len(train) == len(set(train)) == 6


def test_a_search_whose_proposers_are_used_up_ends_by_itself(
    tmp_path: Path, models: Models
) -> None:
    models.add("opt_silent", lambda req: "I do not know.")
    project = make_project(
        tmp_path,
        [task(f"tr{i}", "refund window") for i in range(6)],
        validation=[task(f"va{i}", "refund window") for i in range(4)],
        options={"optimization_config": {"model_search_space": ["mock:opt_silent"]}},
    )
    outcome = optimize(project, targets=["model"], max_stalls=5, seed=1)
    job = outcome.job
    assert [c.model for c in job.candidates if c.id != "baseline"] == ["mock:opt_silent"]
    assert job.termination_reason == "completed" and job.stalls == 1
    assert job.stop_detail == "no target has anything left to propose"


def _unit(name: str, score: float) -> Any:
    status = "pass" if score >= 1.0 else "fail"
    return UnitResult(
        score=TaskScore(name=name, status=status, score=score),
        record=RepeatOutcome(status=status, score=score),
    )


def _book(rows: dict[tuple[str, str], float]) -> UnitBook:
    book = UnitBook()
    for (cand, name), score in rows.items():
        book.units[(cand, name)] = _unit(name, score)
    return book


def _child(cid: str, strategy: str, tasks: list[str], status: str = "screened_out") -> Any:
    return CandidateRecord(
        id=cid,
        parent="cand_05",
        strategy=strategy,
        status=status,  # type: ignore[arg-type]
        screening=Screening(tasks=tasks, child=0.0, parent=0.0, accepted=False),
    )


def test_a_failure_resists_after_two_children_written_from_failures_did_no_better() -> None:
    """t04 resisted twice (an instructions child, a tool child); t10 once; a model swap, an
    accepted child and a child that improved t13 do not count."""
    job = JobRecord(
        id="j",
        candidates=[
            _child("cand_07", "instructions", ["t04", "t10", "t13"]),
            _child("cand_11", "tools:order_status", ["t04", "t13"]),
            _child("cand_12", "model:gpt-4.1", ["t10", "t13"]),
            _child("cand_15", "rules", ["t10", "t13"], status="evaluated"),
        ],
    )
    book = _book(
        {
            **{("cand_05", t): 0.0 for t in ("t04", "t10", "t13")},
            ("cand_05", "t02"): 1.0,
            ("cand_07", "t04"): 0.0, ("cand_07", "t10"): 0.0, ("cand_07", "t13"): 0.0,
            ("cand_11", "t04"): 0.0, ("cand_11", "t13"): 1.0,
            ("cand_12", "t10"): 0.0, ("cand_12", "t13"): 0.0,
            ("cand_15", "t10"): 0.0, ("cand_15", "t13"): 0.0,
        }
    )  # fmt: skip
    assert RESIST_LIMIT == 2
    assert resisted(job, book, "cand_05") == {"t04"}
    assert resisted(job, book, "baseline") == frozenset()  # another parent's children


def test_a_minibatch_of_resisted_failures_and_passes_has_nothing_new_to_teach() -> None:
    units = {"t04": _unit("t04", 0.0), "t02": _unit("t02", 1.0)}
    why = nothing_to_learn("cand_05", units, frozenset({"t04"}))
    assert why.startswith("nothing new to learn from: cand_05 still fails t04")
    assert nothing_to_learn("cand_05", units, frozenset()) == ""  # t04 may still be learned
    passes = {"t02": _unit("t02", 1.0)}
    assert "its failures (t04) resisted 2" in nothing_to_learn(
        "cand_05", passes, frozenset({"t04"})
    )
    assert nothing_to_learn("cand_05", passes, frozenset()).startswith(
        "nothing to learn from: cand_05 passed all 1"
    )


def test_a_reflection_that_came_back_unchanged_twice_is_not_asked_again_on_the_same_failures(
    tmp_path: Path, models: Models
) -> None:
    """The optimization model gives the instructions back unchanged: no child, nothing
    screened, so the failures it was shown never counted as resisting, and it was asked again
    from the same parent on the same failures (in the bench's `tool-routing` world, a third
    of the reflection requests). After `RESIST_LIMIT` such replies it is not asked again while
    the minibatch holds no failure it has not been shown; the rules proposer still is."""
    instructions = "You are the store's support assistant. Answer briefly."
    reflect = models.add(
        "opt_same", lambda req: json.dumps({"instructions": instructions, "rationale": "x"})
    )
    models.add("opt_mute", lambda req: "I cannot help with that.")
    project = make_project(
        tmp_path,
        [task(f"tr{i}", "refund window") for i in range(6)],
        validation=[task(f"va{i}", "refund window") for i in range(4)],
        instructions=instructions,
        model="mock:opt_mute",
        options={"optimization_model": "mock:opt_same"},
    )
    outcome = optimize(project, targets=["instructions"], max_stalls=3, seed=4)
    entries = [json.loads(line) for line in outcome.store.journal.read_text().splitlines()]
    reflections = [
        e for e in entries if e["kind"] == "proposal" and e["strategy"] == "instructions:reflect"
    ]
    assert len(reflect.requests) == RESIST_LIMIT  # before: one for every reflection slot (4)
    assert [e.get("empty", False) for e in reflections[:RESIST_LIMIT]] == [True, True]
    later = reflections[RESIST_LIMIT:]
    assert later and all(
        e["reason"].startswith("nothing new to ask instructions:reflect: its replies from "
        "baseline came back unchanged 2 times") and "empty" not in e
        for e in later
    )  # fmt: skip
    rules = [
        e for e in entries if e["kind"] == "proposal" and e["strategy"] == "instructions:rules"
    ]
    assert rules and all("proposal" in e for e in rules)  # the other proposer goes on


def test_a_strategy_that_came_back_empty_is_asked_about_a_failure_it_was_not_shown() -> None:
    barren = Barren()
    barren.record("cand_05", "tools", ["t04", "t10"])
    assert barren.of("cand_05", "tools") == frozenset()  # one empty reply: still asked
    barren.record("cand_05", "tools", ["t04"])
    assert barren.of("cand_05", "tools") == {"t04", "t10"}
    assert barren.of("cand_05", "instructions:reflect") == frozenset()  # another strategy
    assert barren.of("baseline", "tools") == frozenset()  # another parent
    shown = {"t04": _unit("t04", 0.0), "t02": _unit("t02", 1.0)}
    why = nothing_new_to_ask("tools", "cand_05", shown, barren.of("cand_05", "tools"))
    assert why.endswith("came back unchanged 2 times, on failures that included t04")
    new = {"t04": _unit("t04", 0.0), "t13": _unit("t13", 0.5)}
    assert nothing_new_to_ask("tools", "cand_05", new, barren.of("cand_05", "tools")) == ""
    passes = {"t02": _unit("t02", 1.0)}  # nothing failed: left to `nothing_to_learn`
    assert nothing_new_to_ask("tools", "cand_05", passes, barren.of("cand_05", "tools")) == ""

"""When the search has nothing left to learn from, it spends no call on it: a parent whose
weakest train tasks all pass gets no reflection (GEPA's skip of a perfect minibatch), and a
search whose proposers are used up ends by itself."""

from __future__ import annotations

import json
from pathlib import Path

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
    assert job.termination_reason == "screening_stalled" and job.stalls == 0
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
    assert any("no target has anything left to propose" in n for n in job.notes)

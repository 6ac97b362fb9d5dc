"""`optimize` on a conversation-level suite of simulated-user tasks: candidates are scored on
whole conversations (builtin.goal_reached included), and the reflection model is shown each
conversation turn by turn and how the simulated user ended it."""

from __future__ import annotations

import json
from pathlib import Path

from agentopt.models.types import ChatRequest
from tests.optimize.conftest import Models, last_user, make_project, optimize, task

PHRASE = "refund window"


def simulated_user(req: ChatRequest) -> str:
    """Asks one follow-up, then is satisfied only once the agent named the refund window."""
    seen = last_user(req)
    if seen.count("Agent:") < 2:
        return json.dumps({"reason": "ask more", "action": "continue", "message": "And then?"})
    if PHRASE in seen:
        return json.dumps({"reason": "got it", "action": "goal_reached", "message": ""})
    return json.dumps(
        {"reason": "it never said how long I have", "action": "abandoned", "message": ""}
    )


def test_optimize_scores_conversations_and_reflection_sees_where_they_went_wrong(
    tmp_path: Path, models: Models
) -> None:
    models.add("opt_user", simulated_user)
    better = f"Be brief. Always say '{PHRASE}'."
    reflect = models.add(
        "opt_reflect", lambda req: json.dumps({"instructions": better, "rationale": "name it"})
    )
    rows = [
        {**task(f"t{i:02d}", PHRASE), "goal": "Learn how long I have to return my order."}
        for i in range(9)
    ]
    project = make_project(
        tmp_path,
        rows,
        options={
            "optimization_model": "mock:opt_reflect",
            "simulator_model": "mock:opt_user",
            "evaluation_level": "conversation",
            "desired_num_turns": 3,
            "targets": ["instructions"],
        },
    )
    outcome = optimize(project, max_candidates=1, seed=2, parallel_proposals=1)
    job = outcome.job
    assert job.baseline is not None and job.baseline.validation is not None
    assert job.baseline.validation.score == 0.0  # never named it: every user gave up
    prompt = next(p for p in reflect.prompts if "simulated user" in p)
    assert "A simulated user played this task against the agent" in prompt
    assert "User (turn 2, simulated): And then?" in prompt
    assert "The simulated user gave up after 2 turns: it never said how long I have" in prompt
    assert "goal_reached" in prompt  # the failed conversation-level check, by name
    best = job.candidate(job.best or "")
    assert best is not None and best.validation is not None and best.validation.score == 1.0
    units = [json.loads(line) for line in outcome.store.journal.read_text().splitlines()]
    records = [u["record"] for u in units if u["kind"] == "unit"]
    assert records and all(r["evaluation_level"] == "conversation" for r in records)
    assert {r["simulation"]["reason"] for r in records} == {"abandoned", "goal_reached"}

"""The optimization loop end to end with scripted models (optimizer.md §2–4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentopt.models.types import ChatRequest
from agentopt.workflows.optimize.strategies import RULES_HEADING
from tests.optimize.conftest import (
    Models,
    last_user,
    make_project,
    optimize,
    rule_agent,
    system_text,
    task,
    two_phrase_rows,
)

PHRASES = ("refund window", "tracking link")


def journal(outcome: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in outcome.store.journal.read_text().splitlines()]


def unit_tasks(outcome: Any, cand: str) -> set[str]:
    return {e["task"] for e in journal(outcome) if e["kind"] == "unit" and e["candidate"] == cand}


def test_rule_proposer_makes_a_rule_following_agent_truly_better(
    tmp_path: Path, models: Models
) -> None:
    project = make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 8),
        test=two_phrase_rows("test", 4),
        options={"optimization_config": {"candidate_screening_sample_size": 6}},
    )
    outcome = optimize(project, max_candidates=2, seed=3)
    job = outcome.job
    base, best = job.baseline, job.candidate(job.best or "")
    assert base is not None and best is not None and best.id != "baseline"
    assert base.validation is not None and base.validation.score == 0.0
    assert best.validation is not None and best.validation.score == 1.0
    assert best.strategy == "rules" and best.star and job.outcome == "improved"
    assert job.plan is not None and job.plan.proposers == ["instructions:rules"]
    text = outcome.instructions[best.id]
    assert text.count(RULES_HEADING) == 1
    assert [p for p in PHRASES if text.count(p) == 1] == list(PHRASES)  # each rule once
    # The held-out split is evaluated once, for the baseline and the best.
    assert job.test is not None and job.test.best == best.id
    assert base.test is not None and base.test.score == 0.0
    assert best.test is not None and best.test.score == 1.0
    assert job.test.optimism_gap == 0.0
    assert unit_tasks(outcome, "baseline") >= {f"test{i}" for i in range(4)}
    # The second slot of the first round learned the same rules: a duplicate, not evaluated.
    assert job.candidate("cand_02") is None
    # The best passes every validation task: the ceiling. Nothing written from failures can
    # rank above it, so the search ends there instead of proposing until it stalls.
    assert job.termination_reason == "completed"
    assert job.stop_detail.startswith(f"{best.id} passes every validation task")
    last = max(e["number"] for e in journal(outcome) if e["kind"] == "proposal")
    assert last == best.number + 1  # only the duplicate slot of the same round
    assert outcome.report_path.is_file()


def test_reflection_never_sees_test_or_validation_tasks(tmp_path: Path, models: Models) -> None:
    rows = [task(f"t{i:02d}", PHRASES[i % 2], query=f"<q{i:02d}> help me") for i in range(12)]
    improved = "Be brief. Always say 'refund window' and 'tracking link'."
    reflect = models.add(
        "opt_reflect", lambda req: json.dumps({"instructions": improved, "rationale": "say both"})
    )
    project = make_project(tmp_path, rows, options={"optimization_model": "mock:opt_reflect"})
    outcome = optimize(project, max_candidates=2, seed=5, parallel_proposals=1)
    job = outcome.job
    assert reflect.requests, "the reflection model was never asked"
    queries = {f"t{i:02d}": f"<q{i:02d}>" for i in range(12)}
    for prompt in reflect.prompts:
        for name in job.splits.test + job.splits.validation:
            assert queries[name] not in prompt
        assert any(queries[name] in prompt for name in job.splits.train)
        assert "Be brief." not in prompt or "instructions-" in prompt  # fenced as data
    proposed = [e["strategy"] for e in journal(outcome) if e["kind"] == "proposal"]
    # Reflection proposes first; its candidate passes every validation task (the ceiling), so
    # no proposal follows it.
    assert proposed == ["instructions:reflect"]
    first = job.candidate("cand_01")
    assert first is not None and first.strategy == "instructions"
    assert first.rationale == "say both" and job.best == "cand_01" and first.star


def test_max_stalls_stops_a_search_whose_children_never_beat_their_parent(
    tmp_path: Path, models: Models
) -> None:
    for name in ("opt_bad1", "opt_bad2", "opt_bad3"):
        models.add(name, lambda req: "I do not know.")
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 12),
        instructions="Mention the 'refund window' when relevant.",
        options={
            "optimization_config": {
                "model_search_space": ["mock:opt_bad1", "mock:opt_bad2", "mock:opt_bad3"]
            }
        },
    )
    outcome = optimize(project, targets=["model"], max_stalls=2, seed=1)
    job = outcome.job
    assert job.termination_reason == "screening_stalled" and job.stalls == 2
    children = [c for c in job.candidates if c.id != "baseline"]
    assert [c.model for c in children] == ["mock:opt_bad1", "mock:opt_bad2"]  # bad3 never tried
    for c in children:
        assert c.status == "screened_out" and c.validation is None
        assert c.screening is not None and not c.screening.accepted
        assert c.screening.child <= c.screening.parent
        # Screened out: run on the minibatch only, never on the validation split.
        assert unit_tasks(outcome, c.id) == set(c.screening.tasks)
        assert not unit_tasks(outcome, c.id) & set(job.splits.validation)
    assert job.outcome == "no_improvement" and job.best == "baseline"


def test_model_strategy_walks_the_search_space_and_keeps_the_better_model(
    tmp_path: Path, models: Models
) -> None:
    models.add("opt_bad1", lambda req: "I do not know.")
    models.add("opt_good", lambda req: "Sure: refund window, tracking link.")
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 15),
        instructions="Mention the 'refund window' when relevant.",
        options={"optimization_config": {"model_search_space": ["mock:opt_bad1", "mock:opt_good"]}},
    )
    outcome = optimize(project, targets=["model"], parallel_proposals=1, seed=2)
    job = outcome.job
    bad, good = job.candidate("cand_01"), job.candidate("cand_02")
    assert bad is not None and bad.model == "mock:opt_bad1" and bad.status == "screened_out"
    assert good is not None and good.model == "mock:opt_good" and good.status == "evaluated"
    assert good.strategy == "model:mock:opt_good"
    assert job.best == "cand_02" and good.star
    # Every model of the space was tried, and the best passes every validation task: the
    # search ends by itself.
    assert job.termination_reason == "completed"
    assert job.stop_detail.startswith("cand_02 passes every validation task")


def test_call_budget_stops_the_search_and_keeps_calls_within_the_cap(
    tmp_path: Path, models: Models
) -> None:
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        options={"max_concurrent_agent_runs": 1},
    )
    outcome = optimize(project, budget_calls=20, parallel_proposals=1, seed=4)
    job = outcome.job
    assert job.termination_reason == "budget_exhausted"
    used = job.usage["agent"]["calls"] + job.usage["judge"]["calls"]
    assert used == 20  # one agent + one judge call per unit; units start only under the cap
    # 9 tasks → 3 train / 3 validation / 3 test. The baseline runs on validation only (3
    # units); the search stops when its next unit would eat into the calls kept for the test
    # split, which then runs in full: every call of the budget is used, none past it.
    assert job.phase_calls == {"baseline": 6, "search": 8, "test": 6}
    assert job.baseline is not None and job.baseline.validation is not None
    assert job.test is not None and job.test.note is None
    assert job.test.baseline_score is not None and job.test.baseline_score.n == 3
    unfinished = job.candidate("cand_01")
    assert unfinished is not None and unfinished.validation is None


def test_toolset_drops_the_tool_that_derails_the_agent(tmp_path: Path, models: Models) -> None:
    def agent(req: ChatRequest) -> Any:
        offered = {t.function["name"] for t in req.tools or []}
        answered = any(m.role == "tool" for m in req.messages)
        if "search_web" in offered and not answered:
            from tests.optimize.conftest import tool_call_message

            return tool_call_message("search_web", {"q": last_user(req)})
        if answered:
            return "The web had nothing, sorry."
        return rule_agent(req)

    models.add("opt_tools_agent", agent)
    search = {
        "type": "function",
        "function": {
            "name": "search_web",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        instructions="Say 'refund window' and 'tracking link'.",
        model="mock:opt_tools_agent",
        tools=[search],  # no mock and real tools off: every call fails
    )
    outcome = optimize(project, targets=["toolset"], max_candidates=1, seed=0)
    job = outcome.job
    best = job.candidate(job.best or "")
    assert best is not None and best.strategy == "toolset:-search_web"
    assert best.mutation["why"] == "harmful" and best.star
    assert "search_web" not in (system_text(models["opt_tools_agent"].requests[-1]) or "")
    folder = outcome.store.candidate_dir(best.id)
    assert not (folder / "tools.json").exists()  # no tool left


def test_tools_are_mocked_by_default_and_real_with_real_tools(
    tmp_path: Path, models: Models
) -> None:
    from tests.optimize.conftest import tool_call_message

    def agent(req: ChatRequest) -> Any:
        if not any(m.role == "tool" for m in req.messages):
            return tool_call_message("log_event", {"text": last_user(req)})
        return rule_agent(req)

    models.add("opt_logging_agent", agent)
    log_tool = {
        "type": "function",
        "function": {
            "name": "log_event",
            "description": "Write an event to the audit log.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    }

    def run(root: Path, **flags: Any) -> set[str]:
        project = make_project(
            root,
            two_phrase_rows("t", 9),
            model="mock:opt_logging_agent",
            tools=[log_tool],
            tool_mocks={"log_event": [{"return": "logged (mock)"}]},
        )
        (project / ".agent_configs" / "baseline" / "tools.py").write_text(
            "from pathlib import Path\n\n"
            "def log_event(text: str) -> str:\n"
            f"    with open({str(root / 'audit.log')!r}, 'a') as fh:\n"
            "        fh.write(text + '\\n')\n"
            "    return 'logged'\n"
        )
        outcome = optimize(project, targets=["instructions"], max_candidates=1, **flags)
        return {
            call["source"]
            for e in journal(outcome)
            if e["kind"] == "unit"
            for call in e["record"]["tool_calls"]
        }

    assert run(tmp_path / "mocked") == {"mock"}
    assert not (tmp_path / "mocked" / "audit.log").exists()  # no side effect
    assert run(tmp_path / "real", real_tools=True) == {"python"}
    assert (tmp_path / "real" / "audit.log").read_text().count("\n") >= 9


def test_a_tool_rewrite_that_renames_a_parameter_is_refused_and_the_stop_says_so(
    tmp_path: Path, models: Models
) -> None:
    lookup = {
        "name": "get_order",
        "description": "Get an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "Order id."}},
            "required": ["order_id"],
        },
    }
    renamed = json.loads(json.dumps(lookup).replace("order_id", "id"))
    models.add("opt_reflect", lambda req: json.dumps({"tool": renamed, "rationale": "shorter"}))

    class Stalls:
        def __init__(self) -> None:
            self.seen: list[tuple[str, str]] = []

        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: None

        def stalled(self, number: int, strategy: str, reason: str) -> None:
            self.seen.append((strategy, reason))

    sink = Stalls()
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        tools=[{"type": "function", "function": lookup}],
        tool_mocks={"get_order": [{"return": "shipped"}]},
        options={"optimization_model": "mock:opt_reflect"},
    )
    outcome = optimize(project, sink=sink, targets=["tools"], max_stalls=2, seed=0)
    job = outcome.job
    assert [c.id for c in job.candidates] == ["baseline"]
    assert sink.seen and all(s == "tools" for s, _ in sink.seen)
    assert "parameter 'order_id' was removed or renamed" in sink.seen[0][1]
    assert "only descriptions may change" in sink.seen[0][1]
    # No child reached screening, so none failed it: the stop does not say they did.
    assert job.termination_reason == "completed" and job.stalls == 0
    assert "put nothing new on screening; the last: " in job.stop_reason
    assert "parameter 'order_id' was removed or renamed" in job.stop_reason


def test_a_hosted_agent_is_optimized_through_optimization_config(
    tmp_path: Path, models: Models
) -> None:
    import socket
    import sys

    import yaml

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    project = make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 6),
        options={"optimization_config": {"candidate_screening_sample_size": 6}},
    )
    config = yaml.safe_load((project / "eval.yaml").read_text())
    fixture = Path(__file__).parent / "fixtures" / "phrase_hosted_agent.py"
    config["agent"] = {
        "name": "store",
        "kind": "hosted",
        "target": "hosted",
        "command": [sys.executable, str(fixture)],
        "port": port,
        "instruction": "You are the store's support assistant.",
    }
    (project / "eval.yaml").write_text(yaml.safe_dump(config))
    outcome = optimize(project, max_candidates=1, seed=0)
    job = outcome.job
    assert job.plan is not None and job.plan.parallel_proposals == 1  # one port, one process
    best = job.candidate(job.best or "")
    assert best is not None and best.strategy == "rules" and best.star
    records = [e["record"] for e in journal(outcome) if e["kind"] == "unit"]
    # Each candidate's own process answered its tasks (OPTIMIZATION_CANDIDATE_ID).
    assert {r["response"].split("]")[0] for r in records} == {"[baseline", f"[{best.id}"}


def test_call_budget_is_exact_with_eight_units_in_flight_and_a_tool_loop(
    tmp_path: Path, models: Models
) -> None:
    """Three calls per unit (a tool call, the answer, the judge) and eight units at once: the
    budget still holds to the call, and the test split still runs in full."""

    def agent(req: ChatRequest) -> Any:
        if not any(m.role == "tool" for m in req.messages):
            from tests.optimize.conftest import tool_call_message

            return tool_call_message("lookup", {"q": last_user(req)})
        return rule_agent(req)

    models.add("opt_loop_agent", agent)
    lookup = {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look something up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 8),
        # A phrase no train task teaches: no candidate reaches the ceiling before the budget.
        validation=two_phrase_rows("v", 8, ("refund window", "tracking link", "gift card")),
        test=two_phrase_rows("x", 4),
        model="mock:opt_loop_agent",
        tools=[lookup],
        tool_mocks={"lookup": {"return": "found"}},
        options={"max_concurrent_agent_runs": 8},
    )
    outcome = optimize(
        project, budget_calls=100, max_candidates=20, seed=1, targets=["instructions"]
    )
    job = outcome.job
    used = job.usage["agent"]["calls"] + job.usage["judge"]["calls"]
    assert job.termination_reason == "budget_exhausted"
    assert 100 - 3 < used <= 100  # every call the budget allows, none past it
    assert job.test is not None and job.test.note is None
    assert job.test.baseline_score is not None and job.test.baseline_score.n == 4
    assert job.phase_calls["test"] == 3 * 4 * len({"baseline", job.best or "baseline"})


def test_the_same_job_twice_gives_the_same_candidates(tmp_path: Path, models: Models) -> None:
    """Two proposals of a round run at once; what one of them reads must not depend on which
    of their units finished first (it would make the search, and a benchmark, unrepeatable)."""
    phrases = ("refund window", "tracking link", "order number", "secure checkout")

    def job(folder: str) -> list[tuple[str, str, str, float | None]]:
        project = make_project(
            tmp_path / folder,
            two_phrase_rows("t", 12, phrases),
            validation=two_phrase_rows("v", 8, phrases),
            test=two_phrase_rows("x", 4, phrases),
            options={"max_concurrent_agent_runs": 8},
        )
        outcome = optimize(project, max_candidates=4, seed=5, parallel_proposals=2)
        return [
            (c.id, c.strategy, c.status, c.validation.score if c.validation else None)
            for c in outcome.job.candidates
        ]

    first = job("a")
    assert len(first) > 2
    assert job("b") == first


def test_a_candidate_that_can_no_longer_reach_the_best_stops_its_validation(
    tmp_path: Path, models: Models
) -> None:
    # The baseline passes 8 of the 9 validation tasks (the last asks for a phrase no agent
    # says) and fails the train ones; the one model of the search space does the opposite.
    # Its screening (train) beats the baseline, so its validation starts; one failed task
    # still leaves it a tie at best, two put it below the baseline's 8/9 for good, and the
    # tasks not yet started are not run (one agent slot: they start one at a time).
    models.add("opt_trainonly", lambda req: "Our refund window is 30 days.")
    project = make_project(
        tmp_path,
        [task(f"tr{i}", "refund window") for i in range(6)],
        validation=[task(f"va{i}", "tracking link") for i in range(8)] + [task("va8", "gift card")],
        test=[task(f"te{i}", "tracking link") for i in range(3)],
        instructions="Mention the 'tracking link'.",
        options={"optimization_config": {"model_search_space": ["mock:opt_trainonly"]}},
    )
    outcome = optimize(project, targets=["model"], parallel_proposals=1, concurrency=1, seed=2)
    job = outcome.job
    child = job.candidate("cand_01")
    assert child is not None and child.screening is not None and child.screening.accepted
    assert child.status == "outranked" and child.validation is None
    assert child.outranked is not None
    assert (child.outranked.tasks, child.outranked.of) == (2, 9)
    assert child.outranked.best == "baseline" and child.outranked.best_score == 8 / 9
    assert child.outranked.at_most == 7 / 9
    assert len(unit_tasks(outcome, "cand_01") & set(job.splits.validation)) == 2
    # Not in the pool: the baseline stays best, and the candidate is shown as outranked.
    assert job.best == "baseline" and job.outcome == "no_improvement"
    assert "outranked after 2 of 9 validation tasks" in outcome.report_path.read_text()

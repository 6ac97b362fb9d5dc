"""Simulated users in `eval run`: a persona plays the task's goal against the agent for up to
`desired_num_turns`, conversation-level scoring sees every turn, and reruns are free.

The agent, the simulated user and the judge are all one fake OpenAI-compatible server on
loopback (tests/simulated_world.py scripts it), reached through the `compat:` provider, so
what was sent is what the server recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, error
from tests.workflows.simulated_world import (
    agent_turns_seen,
    continue_with,
    install,
    kind,
    of_kind,
    stop,
    user_content,
)

runner = CliRunner()

REFUND = {
    "name": "refund",
    "query": "I want a refund",
    "persona": "A busy customer who writes short messages.",
    "goal": "Get a refund for order 42",
    "stop_when": "The agent confirms the refund for order 42",
    "desired_num_turns": 3,
    "criteria": [{"name": "refund_done", "instruction": "Confirms the refund for order 42"}],
}
AGENT = {1: "Which order is it?", 2: "Refund issued for order 42.", 3: "Anything else?"}


def write_suite(project: Path, url: str, tasks: list[dict], **options: object) -> None:
    model = f"compat:fake@{url}"
    (project / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    lines = [
        "name: sim",
        "agent:",
        "  name: shop",
        f"  model: {model}",
        '  instruction: "You are the shop\'s support agent."',
        "dataset:",
        "  local_uri: tasks.jsonl",
        "evaluators: [builtin.relevance]",
        "options:",
        f"  eval_model: {model}",
        *(f"  {k}: {v}" for k, v in options.items()),
    ]
    (project / "eval.yaml").write_text("\n".join(lines) + "\n")


def run(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def task_result(project: Path, name: str = "refund") -> dict:
    path = sorted((project / ".agentopt" / "runs").glob("*/results.json"))[-1]
    results = json.loads(path.read_text())
    return next(t for t in results["tasks"] if t["name"] == name)


def test_a_goal_reached_at_turn_two_stops_at_two(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        write_suite(project, srv.base_url, [REFUND])
        code, out = run(project)
        assert code == 0, out
        task = task_result(project)
        assert [t["query"] for t in task["turns"]] == ["I want a refund", "Order 42"]
        assert [t.get("simulated", False) for t in task["turns"]] == [False, True]
        assert task["simulation"]["reason"] == "goal_reached"
        assert task["simulation"]["turns"] == 2
        assert len(of_kind(srv, "agent")) == 2
        # Asked once after each agent turn: the second answer says the goal is reached.
        assert [agent_turns_seen(r) for r in of_kind(srv, "simulator")] == [1, 2]
        simulator = of_kind(srv, "simulator")[0]
        assert simulator.body["seed"] is not None
        prompt = user_content(simulator)
        for text in (REFUND["persona"], REFUND["goal"], REFUND["stop_when"], AGENT[1]):
            assert text in prompt


def test_a_goal_never_reached_stops_at_desired_num_turns(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: continue_with(f"still waiting ({n})"), lambda n: "Hmm.")
        write_suite(project, srv.base_url, [REFUND])
        code, out = run(project)
        assert code == 0, out
        task = task_result(project)
        assert len(task["turns"]) == 3
        assert task["simulation"]["reason"] == "max_turns"
        assert len(of_kind(srv, "agent")) == 3
        # Also asked after the last allowed turn (a goal reached there would count).
        assert [agent_turns_seen(r) for r in of_kind(srv, "simulator")] == [1, 2, 3]


def test_conversation_level_task_adherence_sees_every_turn(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        write_suite(project, srv.base_url, [REFUND], evaluation_level="conversation")
        code, out = run(project)
        assert code == 0, out
        judged = [
            r
            for r in of_kind(srv, "judge")
            if r.body["response_format"]["json_schema"]["name"] == "task_adherence"
        ]
        assert len(judged) == 1  # once for the conversation, not once per turn
        prompt = user_content(judged[0])
        for said in ("I want a refund", AGENT[1], "Order 42", AGENT[2], REFUND["goal"]):
            assert said in prompt
        assert "whole conversation" in prompt
        task = task_result(project)
        assert task["evaluation_level"] == "conversation"
        verdicts = {e["evaluator"]: e for e in task["evaluators"]}
        assert set(verdicts) == {
            "builtin.relevance",
            "builtin.task_adherence",
            "builtin.goal_reached",
        }
        assert verdicts["builtin.goal_reached"]["details"]["turns_to_goal"] == 2
        assert all(not t["evaluators"] for t in task["turns"])
        summary = json.loads(
            sorted((project / ".agentopt" / "runs").glob("*/results.json"))[-1].read_text()
        )["summary"]
        assert summary["turns_to_goal"] == 2.0 and summary["usage"]["simulator"]["calls"] == 2
        said = " ".join(out.split())
        assert (
            "Simulated users: goal reached in 1 of 1 conversations, after 2.0 agent turns" in said
        )


def test_an_unchanged_rerun_makes_no_call_and_plays_the_same_conversation(
    project: Path,
) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        write_suite(project, srv.base_url, [REFUND], evaluation_level="conversation")
        code, out = run(project)
        assert code == 0, out
        first, sent = task_result(project), srv.count()
        code, out = run(project)
        assert code == 0, out
        assert srv.count() == sent
        again = task_result(project)

        def said(task: dict) -> list[tuple[str, str]]:
            return [(t["query"], t["response"]) for t in task["turns"]]

        assert said(again) == said(first) and again["simulation"] == first["simulation"]
        assert again["evaluators"] == first["evaluators"]


def test_item_level_scores_each_turn_and_keeps_the_end_checks_for_the_last(
    project: Path,
) -> None:
    task = {**REFUND, "ground_truth": "Refund issued for order 42."}
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        write_suite(project, srv.base_url, [task])
        (project / "eval.yaml").write_text(
            (project / "eval.yaml")
            .read_text()
            .replace("[builtin.relevance]", "[builtin.relevance, builtin.exact_match]")
        )
        code, out = run(project)
        assert code == 0, out
        turns = task_result(project)["turns"]
        names = [[e["evaluator"] for e in t["evaluators"]] for t in turns]
        assert names == [
            ["builtin.relevance"],
            ["builtin.relevance", "builtin.exact_match", "builtin.task_adherence"],
        ]


def test_a_task_without_a_query_is_opened_by_the_simulated_user(project: Path) -> None:
    foundry_row = {
        "test_case_id": "late-parcel",
        "test_case_description": "Your parcel is a week late; find out where it is.",
        "simulation_configuration": {"desired_num_turns": 2, "conversation_repetitions": 3},
    }
    opening = continue_with("Where is my parcel?")
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: opening if n == 0 else stop(), lambda n: "It ships today.")
        write_suite(project, srv.base_url, [{**foundry_row, "name": "late-parcel"}])
        code, out = run(project)
        assert code == 0, out
        assert "simulation_configuration.conversation_repetitions" in out  # not acted on
        task = task_result(project, "late-parcel")
        assert task["query"] == "Where is my parcel?"
        assert task["turns"][0]["simulated"] is True
        assert task["simulation"]["desired_num_turns"] == 2
        assert kind(srv.chat_requests[0]) == "simulator"


def test_a_simulated_user_that_gives_no_usable_reply_is_an_error(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: {"action": "maybe"}, AGENT.get)
        write_suite(project, srv.base_url, [REFUND])
        code, out = run(project)
        assert code == 3, out
        task = task_result(project)
        assert task["status"] == "error"
        assert task["error"]["code"] == "simulatorFailed"
        assert task["turns"][-1]["error"]["code"] == "simulatorFailed"
        assert task["simulation"]["reason"] == "simulator_error"
        assert "simulated user" in out


def test_sigkill_after_turn_one_then_resume_continues_at_turn_two(project: Path) -> None:
    """The agent is an endpoint (its answers are not in the model-call cache) and the run has
    --no-cache: only the per-turn journal can keep the answered turn and the simulated user's
    reply from being asked again."""
    turn_two_arrived, release = threading.Event(), threading.Event()
    with FakeOpenAI(schemas="any") as srv:

        def agent(n: int) -> str:
            if n == 2 and not release.is_set():
                turn_two_arrived.set()
                release.wait(30)  # answered only after agentopt is killed
            return AGENT[n]

        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), agent)
        write_suite(project, srv.base_url, [REFUND], evaluation_level="conversation")
        suite = (project / "eval.yaml").read_text()
        endpoint = f"  target: endpoint\n  endpoint: {srv.base_url}\n  protocol: chat_completions\n"
        (project / "eval.yaml").write_text(suite.replace("agent:\n", "agent:\n" + endpoint))
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", "eval", "run",
             "--no-cache"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            assert turn_two_arrived.wait(60), "the agent never got turn 2"
            proc.kill()
            proc.wait(30)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
        run_dir = next((project / ".agentopt" / "runs").iterdir())
        steps = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
        assert [(s["number"], "turn" if s.get("turn") else "reply") for s in steps] == [
            (1, "turn"),
            (1, "reply"),
        ]
        before = len(srv.chat_requests)

        code, out = run(project, "--resume", run_dir.name)
        assert code == 0, out
        resumed = srv.chat_requests[before:]
        agent_calls = [r for r in resumed if kind(r) == "agent"]
        assert [
            len([m for m in r.body["messages"] if m["role"] == "user"]) for r in agent_calls
        ] == [2]
        history = agent_calls[0].body["messages"]
        assert [m["content"] for m in history] == ["I want a refund", AGENT[1], "Order 42"]
        assert [agent_turns_seen(r) for r in resumed if kind(r) == "simulator"] == [2]
        task = task_result(project)
        assert [t["response"] for t in task["turns"]] == [AGENT[1], AGENT[2]]
        assert task["simulation"]["reason"] == "goal_reached"


def test_resume_rescores_a_conversation_whose_judge_failed_without_replaying_it(
    project: Path,
) -> None:
    judge_down = {"on": True}
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        world = srv.handler
        assert world is not None

        def handler(req):  # type: ignore[no-untyped-def]
            schema = (req.body.get("response_format") or {}).get("json_schema") or {}
            if judge_down["on"] and schema.get("name") == "task_adherence":
                return error(401, "judge key revoked", code="invalid_api_key")  # not retried
            return world(req)

        srv.handler = handler
        write_suite(project, srv.base_url, [REFUND], evaluation_level="conversation")
        code, out = run(project)
        assert code == 3, out
        run_dir = next((project / ".agentopt" / "runs").iterdir())
        played = [r for r in srv.chat_requests if kind(r) in ("agent", "simulator")]

        judge_down["on"] = False
        code, out = run(project, "--resume", run_dir.name)
        assert code == 0, out
        again = [r for r in srv.chat_requests if kind(r) in ("agent", "simulator")]
        assert len(again) == len(played)  # the conversation was not played again
        task = task_result(project)
        assert task["status"] == "pass"
        assert task["simulation"]["reason"] == "goal_reached"
        assert [t["query"] for t in task["turns"]] == ["I want a refund", "Order 42"]


def test_reports_show_the_conversation_with_its_simulated_turns_marked(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        install(srv, lambda n: stop() if n >= 2 else continue_with("Order 42"), AGENT.get)
        write_suite(project, srv.base_url, [REFUND], evaluation_level="conversation")
        code, out = run(project, "--output", "report.html")
        assert code == 0, out
    shown = runner.invoke(app, ["-C", str(project), "eval", "show", "--task", "refund"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "Turn 1/2" in text and "Turn 2/2" in text
    assert "User: I want a refund" in text and "User (simulated): Order 42" in text
    assert "Simulated user: goal reached in 2 of at most 3 turns" in text
    assert "Conversation verdicts" in text and "goal_reached" in text
    html = (project / "report.html").read_text()
    assert 'User <span class="muted">(simulated)</span>' in html
    assert "Simulated user: goal reached in 2 of at most 3 turns" in html
    assert "<h3>Conversation verdicts</h3>" in html

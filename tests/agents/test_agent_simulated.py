"""Simulated conversations through every built-in target: the shared turn driver sends what the
simulated user writes, each target carries the conversation its own way (local history with
tool rounds, Responses' previous_response_id, the messages a command gets), and a resumed
conversation is restored into the target instead of sent again.

The simulated user here is a scripted `UserSimulator` (the LLM simulator is tested in
tests/workflows/test_run_simulated.py); the targets, their processes and servers are real.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from typing import Any

from agentopt.agents import RunConfig, Transcript, TurnResult, make_target
from agentopt.agents.base import UserSimulator
from agentopt.contracts.task import Task, Turn
from agentopt.core.files.agent_definition import AgentDefinition
from tests.agents.test_agent_local import ORDER_MOCKS, agent, layer, order_bot


class ScriptedUser:
    """Says each of `then` in turn after the agent's answers, then stops."""

    def __init__(self, *then: str) -> None:
        self.then = list(then)
        self.seen: list[int] = []

    async def next_message(self, turns: Sequence[TurnResult]) -> str | None:
        self.seen.append(len(turns))
        return self.then.pop(0) if self.then else None


def opening(query: str) -> Task:
    return Task(name="t", turns=[Turn(query=query)], goal="get help")


def run(target: Any, task: Task, **config: Any) -> Transcript:
    async def go() -> Transcript:
        try:
            return await target.run(task, RunConfig(**config))
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_the_scripted_user_is_a_user_simulator() -> None:
    assert isinstance(ScriptedUser(), UserSimulator)


def test_local_target_with_tools_plays_and_restores_the_tool_rounds(script, tmp_path):
    sent: list[list[str]] = []

    def bot(request: Any) -> Any:
        sent.append([m.role for m in request.messages])
        return order_bot(request)

    model = script("orders_sim", bot)
    target = agent(model, tmp_path, tool_mocks=ORDER_MOCKS, instructions="Be brief.")
    user = ScriptedUser("and order 999?")
    whole = run(target, opening("where is order 12345?"), calls=layer(tmp_path), user=user)
    assert [t.query for t in whole.turns] == ["where is order 12345?", "and order 999?"]
    assert [t.simulated for t in whole.turns] == [False, True]
    assert user.seen == [1, 2]
    turn_two = sent[2]  # the request that opened turn 2: the tool round of turn 1 is in it
    assert turn_two == ["system", "user", "assistant", "tool", "assistant", "user"]

    sent.clear()
    again = agent(model, tmp_path, tool_mocks=ORDER_MOCKS, instructions="Be brief.")
    resumed = run(
        again,
        opening("where is order 12345?"),
        calls=layer(tmp_path),
        user=ScriptedUser("and order 999?"),
        played=[whole.turns[0]],
    )
    assert sent[0] == turn_two  # turn 1 was restored, not sent; turn 2 sees the same history
    assert [t.response for t in resumed.turns] == [t.response for t in whole.turns]


def test_hosted_target_chains_simulated_turns_with_previous_response_id(python, fixtures, tmp_path):
    command = f"{shlex.quote(python)} {shlex.quote(str(fixtures / 'hosted_agent.py'))}"
    defn = AgentDefinition(
        name="concierge",
        kind="hosted",
        folder=tmp_path,
        model="gpt-4.1-mini",
        instructions="Bonjour!",
        startup_command=command,
    )
    target = make_target("hosted", defn, port=0, stop_grace_s=2.0)
    transcript = run(target, opening("hello"), user=ScriptedUser("again", "once more"))
    responses = [t.response for t in transcript.turns]
    assert len(responses) == 3
    assert "| again | turns=2 | history=hello/again " in responses[1]
    assert "| once more | turns=3 | history=hello/again/once more " in responses[2]


def test_endpoint_responses_restores_the_previous_response_id(recording_server, responses_body):
    def answer(request):
        return 200, responses_body(f"got {request.body['input']}", f"resp_{len(server.requests)}")

    server = recording_server(answer)
    defn = AgentDefinition(name="gw", endpoint=server.url, protocol="responses", model="m")
    first = run(make_target("endpoint", defn), opening("hi"), user=ScriptedUser())
    assert first.turns[0].state == {"response_id": "resp_1"}

    resumed = run(
        make_target("endpoint", defn),
        opening("hi"),
        user=ScriptedUser("more"),
        played=first.turns,
    )
    assert [r.body["input"] for r in server.requests] == ["hi", "more"]
    assert server.requests[1].body["previous_response_id"] == "resp_1"
    assert [t.response for t in resumed.turns] == ["got hi", "got more"]


def test_command_target_gets_the_restored_conversation_on_stdin(python, fixtures, tmp_path):
    defn = AgentDefinition(
        name="cli", folder=tmp_path, command=[python, str(fixtures / "command_agent.py")]
    )
    first = run(make_target("command", defn), opening("hello"), user=ScriptedUser())
    resumed = run(
        make_target("command", defn),
        opening("hello"),
        user=ScriptedUser("again"),
        played=first.turns,
    )
    assert resumed.turns[1].response == "you said again (3 messages: user,assistant,user)"


def test_a_failed_turn_ends_the_conversation_without_asking_the_user(script, tmp_path):
    def broken(request: Any) -> Any:
        raise RuntimeError("model down")

    target = agent(script("broken_sim", broken), tmp_path, tools=[])
    user = ScriptedUser("never sent")
    transcript = run(target, opening("hello"), calls=layer(tmp_path), user=user)
    assert len(transcript.turns) == 1 and transcript.turns[0].error is not None
    assert user.seen == []
    assert user.then == ["never sent"]


def test_no_conversation_goes_past_twenty_turns(script, tmp_path):
    model = script("echo_sim", lambda request: "ok")
    target = agent(model, tmp_path, tools=[])
    endless = ScriptedUser(*(f"more {i}" for i in range(50)))
    transcript = run(target, opening("start"), calls=layer(tmp_path), user=endless)
    assert len(transcript.turns) == 20


def test_the_opening_is_written_by_the_user_when_the_task_has_no_query(script, tmp_path):
    model = script("echo_sim2", lambda request: "hi there")
    target = agent(model, tmp_path, tools=[])
    user = ScriptedUser("Hello, I need help")
    task = Task(name="t", turns=[Turn(query="")], goal="get help")
    transcript = run(target, task, calls=layer(tmp_path), user=user)
    assert [t.query for t in transcript.turns] == ["Hello, I need help"]
    assert transcript.turns[0].simulated
    assert user.seen == [0, 1]

"""The hosted target: a real agent process, configured the Foundry way, spoken to over
Responses, and never left running."""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
from pathlib import Path
from typing import Any

import pytest

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import AgentError, ConfigError
from agentopt.core.files.agent_definition import AgentDefinition, Skill


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def hosted(tmp_path: Path, command: str | list[str], **options: Any) -> Any:
    defn = AgentDefinition(
        name="concierge",
        kind="hosted",
        folder=tmp_path,
        model="gpt-4.1-mini",
        instructions="Bonjour! You are a concierge.",
        skills=[Skill(name="tone", description="House tone", body="Be warm.")],
        startup_command=command,
    )
    options.setdefault("port", 0)
    options.setdefault("stop_grace_s", 2.0)
    return make_target("hosted", defn, **options)


def agent_command(python: str, fixtures: Path) -> str:
    return f"{shlex.quote(python)} {shlex.quote(str(fixtures / 'hosted_agent.py'))}"


def task(*queries: str, name: str = "t") -> Task:
    return Task(name=name, turns=[Turn(query=q) for q in queries])


def test_config_reaches_the_process_and_turns_chain(python, fixtures, tmp_path):
    target = hosted(tmp_path, agent_command(python, fixtures))
    pids: list[int | None] = []

    async def go() -> list[Transcript]:
        try:
            first = await target.run(task("hello", "again"), RunConfig(candidate_id="cand_7"))
            pids.append(target.pid)
            second = await target.run(task("fresh", name="B"), RunConfig(candidate_id="cand_7"))
            pids.append(target.pid)
            third = await target.run(task("other"), RunConfig(candidate_id="cand_8"))
            pids.append(target.pid)
            return [first, second, third]
        finally:
            await target.aclose()

    first, second, third = asyncio.run(go())
    one, two = first.turns
    assert one.error is None, one.error
    assert one.response.startswith("Bonjour! | hello | turns=1 | history=hello ")
    assert "candidate=cand_7 | dir=.agent_configs" in one.response
    assert two.response.startswith("Bonjour! | again | turns=2 | history=hello/again ")
    assert [(c.name, c.arguments, c.result, c.source) for c in one.tool_calls] == [
        ("search_docs", {"q": "hello"}, {"hits": 1}, "hosted")
    ]
    assert [(c.index, c.url, c.title) for c in one.citations] == [
        (1, "https://example.com/doc", "Doc")
    ]
    assert (one.usage.input_tokens, one.usage.output_tokens) == (11, 7)
    assert first.target == "hosted"

    assert "| fresh | turns=1 |" in second.turns[0].response  # no history across tasks
    assert pids[0] == pids[1]  # the process is reused across tasks
    assert "candidate=cand_8" in third.turns[0].response
    assert pids[2] != pids[1]  # one process per candidate
    assert target.pid is None
    assert not any(pid_alive(p) for p in pids if p)


def test_cancellation_stops_the_process(python, fixtures, tmp_path):
    target = hosted(tmp_path, agent_command(python, fixtures))
    seen: list[int] = []

    async def go() -> None:
        run = asyncio.create_task(target.run(task("sleep"), RunConfig()))
        while target.pid is None:
            await asyncio.sleep(0.02)
        seen.append(target.pid)
        await asyncio.sleep(0.3)  # the request is in flight
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(go())
    assert seen and not pid_alive(seen[0])
    assert target.pid is None


def test_crash_during_startup_is_a_clear_error(python, fixtures, tmp_path, monkeypatch):
    monkeypatch.setenv("FIXTURE_CRASH_ON_START", "1")
    target = hosted(tmp_path, agent_command(python, fixtures))
    with pytest.raises(AgentError) as caught:
        asyncio.run(target.run(task("hi"), RunConfig()))
    message = str(caught.value)
    assert "exited with code 4 before listening" in message
    assert "loading the model failed: no weights" in message


def test_never_listening_times_out_and_is_killed(python, tmp_path):
    script = "import os, time; open('agent.pid', 'w').write(str(os.getpid())); time.sleep(60)"
    target = hosted(tmp_path, [python, "-c", script], startup_timeout_s=0.7)
    with pytest.raises(AgentError, match=r"did not listen on port \d+ within 0.7 s"):
        asyncio.run(target.run(task("hi"), RunConfig()))
    pid = int((tmp_path / "agent.pid").read_text())
    assert not pid_alive(pid)


def test_port_already_in_use(python, fixtures, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        target = hosted(tmp_path, agent_command(python, fixtures), port=port)
        with pytest.raises(AgentError, match=f"port {port} is already in use"):
            asyncio.run(target.run(task("hi"), RunConfig()))


def test_a_start_command_is_required(tmp_path):
    defn = AgentDefinition(name="concierge", kind="hosted", folder=tmp_path)
    with pytest.raises(ConfigError, match="startupCommand"):
        make_target("hosted", defn)


def test_a_process_that_died_between_tasks_is_restarted(python, fixtures, tmp_path):
    target = hosted(tmp_path, agent_command(python, fixtures))

    async def go() -> tuple[int | None, int | None, Transcript]:
        try:
            await target.run(task("one"), RunConfig())
            first = target.pid
            assert first is not None
            os.kill(first, 9)
            await asyncio.sleep(0.2)
            transcript = await target.run(task("two"), RunConfig())
            return first, target.pid, transcript
        finally:
            await target.aclose()

    first, second, transcript = asyncio.run(go())
    assert transcript.turns[0].error is None
    assert "| two | turns=1 |" in transcript.turns[0].response
    assert second is not None and second != first

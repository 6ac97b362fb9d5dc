"""Building targets by name, choosing one by default, and adding a new one."""

from __future__ import annotations

import asyncio

import pytest

from agentopt.agents import default_target, make_target, target_names
from agentopt.agents.base import TARGETS
from agentopt.plugins import (
    AgentDefinition,
    AgentTarget,
    ConfigError,
    RunConfig,
    Task,
    Transcript,
    Turn,
    TurnResult,
    register_target,
    run_turns,
)


def test_unknown_target_lists_the_valid_ones():
    with pytest.raises(ConfigError) as caught:
        make_target("lokal", AgentDefinition(name="a", model="mock:echo", instructions="x"))
    message = str(caught.value)
    assert "unknown agent target 'lokal'" in message
    assert "local, hosted, endpoint, command, foundry" in message


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"instructions": "Be nice.", "endpoint": "http://x"}, "local"),
        ({"endpoint": "http://x"}, "endpoint"),
        ({"command": ["python", "a.py"]}, "command"),
        ({"deployed_name": "a", "project_endpoint": "https://p"}, "foundry"),
        ({"kind": "hosted", "startup_command": "python main.py", "instructions": "x"}, "hosted"),
        ({"target": "command", "instructions": "x"}, "command"),
    ],
)
def test_default_target(fields, expected):
    assert default_target(AgentDefinition(name="a", **fields)) == expected


def test_no_way_to_run_is_a_config_error():
    with pytest.raises(ConfigError, match="cannot tell how to run agent 'a'"):
        default_target(AgentDefinition(name="a"))


def test_a_new_target_is_one_registered_class():
    @register_target("reverse")
    class ReverseTarget:
        name = "reverse"

        def __init__(self, definition: AgentDefinition, **options: object) -> None:
            self.definition = definition

        async def run(self, task: Task, config: RunConfig) -> Transcript:
            async def send(query: str) -> TurnResult:
                return TurnResult(query=query, response=query[::-1])

            return Transcript(turns=await run_turns(task, config, send), target=self.name)

        async def aclose(self) -> None:
            return None

    try:
        target = make_target("reverse", AgentDefinition(name="a"))
        assert isinstance(target, AgentTarget)
        assert "reverse" in target_names()
        task = Task(name="t", turns=[Turn(query="abc")])
        transcript = asyncio.run(target.run(task, RunConfig()))
        assert transcript.final_response == "cba"
    finally:
        TARGETS.remove("reverse")


@pytest.mark.parametrize("name", ["local", "hosted", "endpoint", "command", "foundry"])
def test_builtin_targets_satisfy_the_protocol(name, tmp_path):
    defn = AgentDefinition(
        name="a",
        folder=tmp_path,
        model="mock:echo",
        instructions="x",
        startup_command="python main.py",
        endpoint="http://127.0.0.1:9",
        command=["python", "a.py"],
        deployed_name="a",
        project_endpoint="https://p.example/api/projects/x",
    )
    target = make_target(name, defn)
    assert isinstance(target, AgentTarget)
    assert target.name == name

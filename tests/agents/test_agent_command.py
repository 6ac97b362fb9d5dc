"""The command target: a real program per turn, JSON on stdin, text or JSON on stdout."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import AgentError, ConfigError
from agentopt.core.files.agent_definition import AgentDefinition


def command_target(command: list[str], folder: Path) -> Any:
    return make_target("command", AgentDefinition(name="cli", folder=folder, command=command))


def run(target: Any, *queries: str, **config: Any) -> Transcript:
    t = Task(name="t", turns=[Turn(query=q) for q in queries])
    return asyncio.run(target.run(t, RunConfig(**config)))


def test_text_answers_and_the_conversation_on_stdin(python, fixtures, tmp_path):
    target = command_target([python, str(fixtures / "command_agent.py")], tmp_path)
    transcript = run(target, "hello", "again")
    assert transcript.turns[0].response == "you said hello (1 messages: user)"
    assert transcript.turns[1].response == "you said again (3 messages: user,assistant,user)"
    assert transcript.target == "command"


def test_json_answer_with_tool_calls_citations_and_usage(python, fixtures, tmp_path):
    target = command_target([python, str(fixtures / "command_agent.py")], tmp_path)
    turn = run(target, "json").turns[0]
    assert turn.response == "Order 12345 has shipped."
    [call] = turn.tool_calls
    assert (call.name, call.arguments, call.result, call.source) == (
        "get_order",
        {"order_id": "12345"},
        "shipped",
        "command",
    )
    assert [(c.index, c.url, c.title) for c in turn.citations] == [
        (1, "https://example.com/orders", "Orders")
    ]
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (5, 4)


def test_non_zero_exit_is_an_agent_error_with_the_stderr_tail(python, fixtures, tmp_path):
    target = command_target([python, str(fixtures / "command_agent.py")], tmp_path)
    transcript = run(target, "fail", "next")
    error = transcript.turns[0].error
    assert error is not None and error.code == "agentRequestFailed"
    assert "exited with code 3" in error.message
    assert error.message.endswith("starting\nTraceback: KeyError: 'order_id'")
    assert transcript.turns[1].error is not None
    assert transcript.turns[1].error.code == "turnSkipped"


def test_timeout_kills_the_process(python, tmp_path):
    script = "import os, sys, time; open('agent.pid', 'w').write(str(os.getpid())); time.sleep(60)"
    target = command_target([python, "-c", script], tmp_path)
    transcript = run(target, "slow", turn_timeout_s=1.0)
    error = transcript.turns[0].error
    assert error is not None and error.code == "timeout"
    pid = int((tmp_path / "agent.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_missing_program_is_a_systemic_error(tmp_path):
    target = command_target(["definitely-not-a-program-xyz"], tmp_path)
    with pytest.raises(AgentError, match="cannot start the agent command"):
        run(target, "hi")


def test_a_command_is_required(tmp_path):
    with pytest.raises(ConfigError, match=r"agent\.command"):
        make_target("command", AgentDefinition(name="cli", folder=tmp_path))

"""`eval run --interactive`: each prompt is its own small run, numbered on (task_1, task_2…)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.cli import interactive
from agentopt.cli.context import STATE, CliState
from agentopt.workflows.run.inputs import RunOptions


def test_prompts_are_numbered_across_the_session(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter(["What is 2+2?", "4", "Say hi", "", ""])
    monkeypatch.setattr(interactive.typer, "prompt", lambda *a, **k: next(answers))
    monkeypatch.setattr(CliState, "interactive", property(lambda self: True))
    monkeypatch.setattr(STATE, "cwd", project)
    interactive.interactive_loop(
        RunOptions(agent_model="mock:echo", evaluators=["ExactMatch"], outputs=[])
    )
    tasks = [
        json.loads((r / "results.json").read_text())["tasks"][0]
        for r in (project / ".agentopt" / "runs").iterdir()
    ]
    assert {t["name"]: t["query"] for t in tasks} == {
        "task_1": "What is 2+2?",
        "task_2": "Say hi",
    }

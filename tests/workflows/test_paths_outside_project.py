"""Folders agentopt writes to that lead outside the project through a link are refused (issue
14 item 7): the registry (`.azure/.foundry`, its `datasets/`), `.agentopt/` and its runs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture
def suite(tmp_path: Path, generator: Callable[..., ScriptedGenerator]) -> Path:
    project = tmp_path / "shop"
    project.mkdir()
    code, out = cli(
        project, "eval", "generate", "-g", "A store support agent.", "--eval-model",
        generator().model, "--max-samples", "3",
    )  # fmt: skip
    assert code == 0, out
    return project


def edit_dataset(project: Path) -> None:
    (path,) = (project / "datasets").rglob("*.jsonl")
    path.write_text(path.read_text() + json.dumps({"name": "extra", "query": "Hi?"}) + "\n")


def move_out_and_link(folder: Path, elsewhere: Path) -> None:
    shutil.move(str(folder), str(elsewhere))
    folder.symlink_to(elsewhere, target_is_directory=True)


def test_eval_update_refuses_a_registry_linked_outside(suite: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "other-folder"
    move_out_and_link(suite / ".azure" / ".foundry", elsewhere)
    before = sorted(p.name for p in elsewhere.rglob("*"))
    edit_dataset(suite)
    code, out = cli(suite, "eval", "update")
    assert code == 2
    assert "registry folder" in out and "leads outside the project" in out
    assert sorted(p.name for p in elsewhere.rglob("*")) == before  # nothing written there


def test_eval_update_refuses_a_datasets_folder_linked_outside(suite: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "other-datasets"
    move_out_and_link(suite / ".azure" / ".foundry" / "datasets", elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    edit_dataset(suite)
    code, out = cli(suite, "eval", "update")
    assert code == 2 and "leads outside the project" in out
    assert sorted(p.name for p in elsewhere.iterdir()) == before


def test_eval_run_refuses_a_runs_folder_linked_outside(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path.parent / (tmp_path.name + "-runs")
    elsewhere.mkdir()
    (project / ".agentopt").mkdir()
    (project / ".agentopt" / "runs").symlink_to(elsewhere, target_is_directory=True)
    code, out = cli(
        project, "eval", "run", "--prompts", "2+2?", "--expected", "4",
        "--evaluator", "ExactMatch", "--agent-model", "mock:echo",
    )  # fmt: skip
    assert code == 2 and "runs folder" in out and "leads outside the project" in out
    assert list(elsewhere.iterdir()) == []

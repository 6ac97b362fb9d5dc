"""Keeping an old copy never replaces an older one: a file's backup and a set-aside agent
configuration folder each take a name nothing holds yet, even within the same second."""

from __future__ import annotations

from pathlib import Path

from agentopt.core.atomic import backup, free_aside_name
from agentopt.core.files.agent_config import write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition


def test_three_backups_in_one_second_are_three_files(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    kept = []
    for text in ("one", "two", "three"):
        path.write_text(text)
        kept.append(backup(path))
    assert len(set(kept)) == 3
    assert sorted(p.read_text() for p in kept) == ["one", "three", "two"]
    assert all(p.name.startswith("eval.yaml.bak.") for p in kept)


def test_a_folder_set_aside_twice_keeps_both_copies(tmp_path: Path) -> None:
    folder = tmp_path / ".agent_configs" / "baseline"
    for text in ("first", "second", "third"):
        write_agent_config(
            folder, AgentDefinition(name="a", model="m", instructions=text), overwrite=True
        )
    aside = sorted(p for p in folder.parent.iterdir() if p.name.startswith("baseline."))
    assert len(aside) == 2
    assert {(p / "instructions.md").read_text().strip() for p in aside} == {"first", "second"}
    assert (folder / "instructions.md").read_text().strip() == "third"
    assert free_aside_name(folder) not in aside

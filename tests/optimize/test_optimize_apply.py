"""`optimize apply` / `show`: candidates are written in the `.agent_configs` layout and
`--promote` keeps the old baseline (cli.md, files.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import load_agent_config
from agentopt.workflows.optimize import apply_candidate, show_candidate
from tests.optimize.conftest import Models, make_project, optimize, two_phrase_rows

BASE_TEXT = "You are the store's support assistant. Answer briefly."


def optimized(tmp_path: Path) -> tuple[Path, str, str]:
    project = make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 6),
        options={"optimization_config": {"candidate_screening_sample_size": 6}},
    )
    (project / ".agent_configs" / "baseline" / "tools.py").write_text(
        "def ping() -> str:\n    return 'pong'\n"
    )
    outcome = optimize(project, max_candidates=1, seed=1)
    assert outcome.job.best == "cand_01"
    return project, outcome.job.id, outcome.instructions["cand_01"]


def test_apply_writes_the_candidate_as_an_agent_config_folder(
    tmp_path: Path, models: Models
) -> None:
    project, job_id, text = optimized(tmp_path)
    result = apply_candidate(project, "cand_01", None)
    folder = project / ".agent_configs" / "cand_01"
    assert result.written == folder and result.backup is None and not result.promoted
    definition, warnings = load_agent_config(folder)
    assert warnings == []
    assert definition.instructions == text
    assert definition.model == "mock:opt_agent"
    assert definition.config_id == "cand_01"
    # The Python tools module came along, so the folder works on its own.
    assert (folder / "tools.py").is_file() and definition.tools_module == str(folder / "tools.py")
    assert any(line.startswith("+- Include the phrase '") for line in result.instruction_diff)
    # Applying again keeps the first copy aside instead of overwriting it.
    (folder / "instructions.md").write_text("edited by hand\n")
    again = apply_candidate(project, "cand_01", job_id)
    assert again.backup is not None and (again.backup / "instructions.md").read_text() == (
        "edited by hand\n"
    )


def test_promote_backs_up_the_baseline_and_replaces_it(tmp_path: Path, models: Models) -> None:
    project, _, text = optimized(tmp_path)
    result = apply_candidate(project, "cand_01", None, promote=True)
    configs = project / ".agent_configs"
    assert result.promoted and result.baseline_backup is not None
    assert result.baseline_backup.parent == configs
    assert result.baseline_backup.name.startswith("baseline.")
    assert (result.baseline_backup / "instructions.md").read_text().strip() == BASE_TEXT
    baseline, _ = load_agent_config(configs / "baseline")
    assert baseline.instructions == text
    assert (configs / "cand_01" / "instructions.md").is_file()


def test_show_gives_the_full_configuration_and_the_diff(tmp_path: Path, models: Models) -> None:
    project, _, _ = optimized(tmp_path)
    view = show_candidate(project, "cand_01", None)
    assert set(view.files) >= {"metadata.yaml", "instructions.md", "tools.py"}
    assert "+++ cand_01/instructions.md" in view.diff
    assert not any(line.startswith("+++ cand_01/metadata.yaml") for line in view.diff)
    assert view.record.strategy == "rules"


def test_unknown_candidate_lists_the_known_ones(tmp_path: Path, models: Models) -> None:
    project, _, _ = optimized(tmp_path)
    with pytest.raises(ConfigError) as err:
        apply_candidate(project, "cand_09", None)
    assert "cand_09" in str(err.value) and "baseline, cand_01" in str(err.value)
    assert not (project / ".agent_configs" / "cand_09").exists()

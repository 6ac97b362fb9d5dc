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


def _tool(name: str) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": {}},
    }


def tool_job(tmp_path: Path) -> Path:
    """A real job over an agent with two tools it never calls: cand_01 drops one (toolset)
    and is screened out (no better), cand_02 (rules) wins."""
    project = make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 6),
        tools=[_tool("lookup_order"), _tool("unused_tool")],
        tool_mocks={"lookup_order": "ok", "unused_tool": "x"},
    )
    job = optimize(project, max_candidates=2, seed=1, targets=["toolset", "instructions"]).job
    states = {c.id: (c.status, c.strategy, c.star) for c in job.candidates}
    assert states["cand_01"] == ("screened_out", "toolset:-lookup_order", False)
    assert states["cand_02"][0] == "evaluated" and states["cand_02"][2]
    return project


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_tool_drop_is_named_confirmed_and_written_exactly_as_shown(
    tmp_path: Path, models: Models
) -> None:
    from agentopt.workflows.optimize.apply import apply_plan, plan_apply

    project = tool_job(tmp_path)
    live = project / ".agent_configs" / "baseline"
    (live / "notes.txt").write_text("kept: not the optimizer's file\n")  # added after the job
    before = _tree(live)
    plan = plan_apply(project, "cand_01", None, promote=True)
    assert plan.dropped_tools == ["lookup_order"] and plan.added_tools == []
    assert [c.path for c in plan.changes] == ["tool_mocks.json", "tools.json"]
    removed = [line for line in plan.diff if line.startswith("-") and "lookup_order" in line]
    assert removed and not any(x.startswith("+") and "lookup_order" in x for x in plan.diff)
    assert any("screened out" in c for c in plan.concerns)
    assert any("removes the tool(s) lookup_order" in c for c in plan.concerns)

    # Not confirmed: refused, nothing written.
    with pytest.raises(ConfigError) as refused:
        apply_plan(plan)
    assert "--force" in str(refused.value)
    with pytest.raises(ConfigError):
        apply_plan(plan, confirm=lambda question: "lookup_order" in question and False)
    assert _tree(live) == before and not (project / ".agent_configs" / "cand_01").exists()

    asked: list[str] = []
    result = apply_plan(plan, confirm=lambda q: asked.append(q) or True)
    assert len(asked) == 1 and "removes the tool(s) lookup_order" in asked[0]
    assert result.promoted and result.baseline_backup is not None
    assert _tree(result.baseline_backup) == before  # the old baseline, whole
    # The new baseline is the old one with exactly the shown changes, nothing else.
    expected = dict(before)
    for change in plan.changes:
        if change.after is None:
            expected.pop(change.path)
        else:
            expected[change.path] = change.after
    assert _tree(live) == expected
    assert (live / "notes.txt").read_text() == "kept: not the optimizer's file\n"
    defn, _ = load_agent_config(live)
    assert [t["function"]["name"] for t in defn.tools] == ["unused_tool"]


def test_the_cli_prints_every_changed_file_and_needs_force_under_no_prompt(
    tmp_path: Path, models: Models
) -> None:
    from typer.testing import CliRunner

    from agentopt.cli.app import app

    project = tool_job(tmp_path)
    args = ["-C", str(project), "--no-prompt", "optimize", "apply", "--candidate", "cand_01"]
    refused = CliRunner().invoke(app, [*args, "--promote"])
    assert refused.exit_code == 2, refused.output
    out = refused.output
    assert "Changes to the baseline (2 files: tool_mocks.json, tools.json)" in out
    assert "tools.json: removes the tool 'lookup_order'" in out
    assert "--- baseline/tools.json" in out and "+++ candidate/tools.json" in out
    assert "--force" in out
    assert not (project / ".agent_configs" / "cand_01").exists()
    forced = CliRunner().invoke(app, [*args, "--promote", "--force"])
    assert forced.exit_code == 0, forced.output
    assert "Promoted cand_01 to the baseline" in forced.output

    winner = CliRunner().invoke(app, [*args[:-1], "cand_02", "--promote"])
    assert winner.exit_code == 0, winner.output  # the winner needs no confirmation
    assert "instructions.md" in winner.output and "+++ candidate/instructions.md" in winner.output


def test_a_screened_out_candidate_gets_its_folder_from_the_journal_when_asked(
    tmp_path: Path, models: Models
) -> None:
    from agentopt.reports.view.state import ViewState
    from agentopt.workflows.optimize.journal import JobStore

    project = tool_job(tmp_path)
    (job_dir,) = (project / ".agentopt" / "optimize").iterdir()
    candidates = job_dir / "candidates"
    # The run wrote folders for the baseline and the candidate that went on to validation
    # only; cand_01 lost its screening, so its configuration is in the journal alone.
    assert sorted(p.name for p in candidates.iterdir()) == ["baseline", "cand_02"]

    # The view's job page diffs it from the journal, without writing anything.
    texts = ViewState(project / ".agentopt").candidate_texts(job_dir.name, "cand_01")
    assert texts is not None and "lookup_order" not in texts["tools.json"]
    assert "unused_tool" in texts["tools.json"]
    assert not (candidates / "cand_01").exists()

    # `optimize show` (and `apply`) write its folder then: the configuration it was.
    shown = show_candidate(project, "cand_01", None)
    assert (candidates / "cand_01").is_dir()
    assert shown.files == texts
    assert any(line.startswith("-") and "lookup_order" in line for line in shown.diff)

    # A candidate the journal does not hold is still an unknown one, and nothing is written.
    store = JobStore(project, job_dir.name)
    record = store.read_job().candidate("cand_01")
    assert record is not None
    ghost = record.model_copy(update={"id": "cand_09", "number": 9})
    assert store.candidate_folder(ghost) is None
    assert not (candidates / "cand_09").exists()

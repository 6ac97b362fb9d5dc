"""`agentopt optimize …` through the CLI (typer CliRunner, --no-prompt): output, files, exit
codes (cli.md)."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.optimize.conftest import Models, make_project, two_phrase_rows

runner = CliRunner()


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "optimize", *args])
    return result.exit_code, result.output


def improvable(tmp_path: Path) -> Path:
    return make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 8),
        test=two_phrase_rows("test", 4),
        options={"optimization_config": {"candidate_screening_sample_size": 6}},
    )


def test_optimize_prints_plan_live_table_verdict_and_next_step(
    tmp_path: Path, models: Models
) -> None:
    project = improvable(tmp_path)
    code, out = cli(project, "--max-candidates", "1")
    assert code == 0, out
    assert f"Using {project / 'eval.yaml'}" in out.replace("\n", "")
    assert "Optimization plan" in out and "train 6, validation 8, test 4" in out
    lines = out.splitlines()
    assert "  Candidate            Score   Pass  Tokens  Cost     Strategy" in lines
    assert any(re.match(r"  baseline {13}0\.000     0%", line) for line in lines)
    assert any(re.match(r"  cand_01 ★ {12}1\.000   100%", line) for line in lines)
    assert "Outcome: improved" in out
    # Not a terminal: every phase still says when it starts (no silent minute in a CI log).
    assert "  … baseline: evaluating on 8 validation tasks" in lines
    assert any(re.match(r"  … cand_01: screening on \d+ train tasks", line) for line in lines)
    assert any(line.startswith("  … test split: ") for line in lines)
    assert "Test split (4 held-out tasks, evaluated once)" in out
    assert "+## Rules learned from evaluation" in out
    assert "Next: agentopt optimize apply --candidate cand_01" in out
    report = next((project / ".agentopt" / "optimize").glob("*/report.html"))
    assert f"Report: {report}" in out.replace("\n", "")

    code, out = cli(project, "status")
    assert code == 0 and "completed" in out and "cand_01" in out
    code, out = cli(project, "list")
    assert code == 0 and report.parent.name in out and "improved" in out
    code, out = cli(project, "show", "--candidate", "cand_01")
    assert code == 0 and "── instructions.md ──" in out and "+++ cand_01/instructions.md" in out
    code, out = cli(project, "apply", "--candidate", "cand_01", "--promote")
    assert code == 0, out
    assert "Wrote" in out and "Promoted cand_01 to the baseline" in out
    assert "+## Rules learned from evaluation" in out
    assert any(p.name.startswith("baseline.") for p in (project / ".agent_configs").iterdir())


def test_dry_run_prints_the_plan_and_sends_nothing(tmp_path: Path, models: Models) -> None:
    project = improvable(tmp_path)
    code, out = cli(project, "--dry-run", "--budget-calls", "500", "--max-cost", "2")
    assert code == 0, out
    assert "dry run: nothing was sent" in out
    assert "Baseline" in out and "Per candidate" in out and "Estimated total" in out
    assert "--budget-calls 500" in out and "--max-cost $2.00" in out
    assert models["opt_agent"].requests == [] and models["opt_judge"].requests == []
    assert not (project / ".agentopt" / "optimize").exists()


def test_require_improvement_exits_1_when_nothing_beats_the_baseline(
    tmp_path: Path, models: Models
) -> None:
    models.add("opt_bad", lambda req: "No idea.")
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        options={"optimization_config": {"model_search_space": ["mock:opt_bad"]}},
    )
    code, out = cli(project, "--targets", "model", "--require-improvement")
    assert code == 1, out
    assert "Outcome: no_improvement" in out or "No candidate beat the baseline" in out
    assert "gate failed" in out


def test_configuration_errors_name_the_flag_to_set(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path, two_phrase_rows("t", 9))
    (project / "eval.yaml").unlink()
    code, out = cli(project)
    assert code == 2 and "-d/--dataset" in out
    code, out = cli(project, "-d", "data/tasks.jsonl", "--targets", "instructions,typo")
    assert code == 2 and "--targets" in out and "typo" in out
    code, out = cli(project, "-d", "data/tasks.jsonl", "--targets", "tools")
    assert code == 2 and "no function tools" in out
    code, out = cli(project, "-d", "data/tasks.jsonl", "--targets", "model")
    assert code == 2 and "--model-search-space" in out
    code, out = cli(project, "-d", "data/tasks.jsonl", "--optimize-model", "nosuch:model")
    assert code == 2 and "--optimize-model" in out
    code, out = cli(project, "status")
    assert code == 2 and "no optimization job yet" in out


def test_html_report_is_self_contained(tmp_path: Path, models: Models) -> None:
    project = improvable(tmp_path)
    code, out = cli(project, "--max-candidates", "1")
    assert code == 0, out
    html = next((project / ".agentopt" / "optimize").glob("*/report.html")).read_text()
    assert "Content-Security-Policy" in html and "<script" not in html
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert html.count("<svg") == 3  # scores in creation order + two Pareto plots
    assert "<ul class='tree'>" in html and "cand_01" in html
    assert "Instruction diffs" in html and 'class="add"' in html
    assert "&#x27;refund window&#x27;" in html  # text is escaped


def test_a_baseline_that_cannot_be_scored_stops_with_exit_3(tmp_path: Path, models: Models) -> None:
    from agentopt.core.errors import ModelCallError

    def broken(req: object) -> str:
        raise ModelCallError("401: invalid api key", kind="auth", provider="mock", model="x")

    models.add("opt_broken", broken)
    project = make_project(tmp_path, two_phrase_rows("t", 9), model="mock:opt_broken")
    code, out = cli(project)
    assert code == 3, out
    assert "the baseline could not be scored" in out and "invalid api key" in out
    job = next((project / ".agentopt" / "optimize").glob("*/job.json")).read_text()
    assert '"status": "failed"' in job


def test_a_call_budget_stop_exits_3_with_the_job_saved(tmp_path: Path, models: Models) -> None:
    project = improvable(tmp_path)
    code, out = cli(project, "--budget-calls", "20", "--parallel-proposals", "1")
    assert code == 3, out  # cli.md: an early stop on a budget is exit 3, as in eval run
    assert "budget_exhausted" in out or "budget" in out.lower()
    code, out = cli(project, "status")
    assert code == 0 and "stopped: the call or cost budget ran out" in out  # one phrase

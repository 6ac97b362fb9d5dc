"""Errors are their own class in optimize (issue 14 item 8): a candidate whose evaluations fail
is re-run once, then counted and marked incomplete — never scored 0 — in the live table,
`optimize status`, job.json and the report; a job whose decision rests on failed evaluations
exits 3, as eval run does."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import ModelCallError
from tests.optimize.conftest import Models, make_project, two_phrase_rows

runner = CliRunner()


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "optimize", *args])
    return result.exit_code, result.output


def hung_agent(req: object) -> str:
    raise ModelCallError("the agent did not answer within 120 s", kind="timeout", model="slow")


def test_failed_screenings_are_errors_not_zeros_and_the_job_exits_3(
    tmp_path: Path, models: Models
) -> None:
    slow = models.add("opt_slow", hung_agent)
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        options={"optimization_config": {"model_search_space": ["mock:opt_slow"]}},
    )
    code, out = cli(project, "--targets", "model", "--max-candidates", "1", "--max-stalls", "1")
    flat = " ".join(out.split())
    assert code == 3, out
    assert "(incomplete: 3 of 3 screening tasks failed)" in flat  # the live table
    assert "Errors: 3 evaluations failed after a re-run" in flat
    assert "the decision rests on incomplete evaluations" in flat
    assert "screened out" not in flat  # an error is not a low score
    assert len(slow.requests) == 6  # each failed unit was run once more

    job_dir = next((project / ".agentopt" / "optimize").iterdir())
    job = json.loads((job_dir / "job.json").read_text())
    cand = next(c for c in job["candidates"] if c["id"] == "cand_01")
    assert cand["status"] == "incomplete" and cand["screening"]["errors"] == 3
    assert cand["screening"]["child"] is None  # no score, rather than 0.0
    assert job["errors"]["units"] == 3 and job["errors"]["candidates"] == ["cand_01"]
    assert job["errors"]["by_code"] == {"agentTimeout": 3}

    code, status = cli(project, "status")
    assert code == 0 and "Errors" in status and "1 incomplete (errors)" in " ".join(status.split())
    html = (job_dir / "report.html").read_text()
    assert "<b>Errors:</b> 3 evaluations failed" in html and "incomplete, 3 failed" in html


def test_a_tolerated_error_count_does_not_exit_3(tmp_path: Path, models: Models) -> None:
    models.add("opt_slow", hung_agent)
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        options={
            "max_errors": 10,
            "optimization_config": {"model_search_space": ["mock:opt_slow"]},
        },
    )
    code, out = cli(project, "--targets", "model", "--max-candidates", "1", "--max-stalls", "1")
    assert code == 0, out
    assert "Errors: 3 evaluations failed" in " ".join(out.split())  # still shown


def test_optimize_scores_an_empty_answer_as_an_error_with_no_judge_request(
    tmp_path: Path, models: Models
) -> None:
    models.add("opt_blank", lambda req: "   ")
    project = make_project(
        tmp_path,
        two_phrase_rows("t", 9),
        model="mock:opt_blank",
        options={"max_errors": 1000},
    )
    code, out = cli(
        project, "--targets", "instructions", "--max-candidates", "1", "--max-stalls", "1"
    )
    assert code == 3, out  # nothing could be scored: an error, never a 0
    assert "the agent's answer is whitespace only" in out
    assert models["opt_judge"].requests == []  # the judge never saw an empty answer
    assert len(models["opt_blank"].requests) == 6  # 3 validation tasks, each re-run once

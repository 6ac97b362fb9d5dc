"""builtin.task_adherence (one call per task, a verdict per criterion) and rubric scoring."""

from __future__ import annotations

import json

import pytest

from agentopt.contracts.task import Criterion
from agentopt.core.errors import ConfigError, InputError
from agentopt.evaluators import EvalSample

CRITERIA = [
    Criterion(name="states_window", instruction="States the 30-day refund window."),
    Criterion(name="polite", instruction="Is polite."),
    Criterion(name="offers_link", instruction="Offers the returns portal link."),
]
SAMPLE = EvalSample(query="Refund?", response="30 days, thanks!", criteria=CRITERIA)


def verdicts(*rows):
    return json.dumps(
        {"verdicts": [{"name": n, "passed": p, "reason": f"{n} reason"} for n, p in rows]}
    )


def test_one_call_with_a_verdict_per_criterion(harness, judge):
    j = judge(verdicts(("states_window", True), ("polite", True), ("offers_link", False)))
    r = harness.run("builtin.task_adherence", SAMPLE, judge_model=j.model)
    assert j.calls == 1
    for c in CRITERIA:
        assert f"- name: {c.name}\n  check: {c.instruction}" in j.prompt(0)
    assert r.score == pytest.approx(2 / 3) and r.normalized == pytest.approx(2 / 3)
    assert r.status == "fail" and r.threshold == 1.0
    assert [v["passed"] for v in r.details["verdicts"]] == [True, True, False]
    assert r.details["verdicts"][2] == {
        "name": "offers_link",
        "instruction": "Offers the returns portal link.",
        "passed": False,
        "reason": "offers_link reason",
    }
    assert "2/3 criteria passed" in r.reason and "offers_link — offers_link reason" in r.reason


def test_all_criteria_pass(harness, judge):
    j = judge(verdicts(("offers_link", True), ("states_window", True), ("polite", "true")))
    r = harness.run("builtin.task_adherence", SAMPLE, judge_model=j.model)
    assert r.status == "pass" and r.score == 1.0


def test_a_missing_verdict_is_reasked_by_name(harness, judge):
    j = judge(
        verdicts(("states_window", True), ("polite", True)),
        verdicts(("states_window", True), ("polite", True), ("offers_link", True)),
    )
    r = harness.run("builtin.task_adherence", SAMPLE, judge_model=j.model)
    assert j.calls == 2 and r.status == "pass"
    assert "'offers_link'" in j.requests[1].messages[-1].content


def test_non_boolean_verdict_is_not_guessed(harness, judge):
    j = judge(verdicts(("states_window", "maybe"), ("polite", True), ("offers_link", True)))
    r = harness.run("builtin.task_adherence", SAMPLE, judge_model=j.model)
    assert r.status == "error" and r.error.code == "judgeParseFailed" and j.calls == 3


def test_without_criteria_it_judges_against_the_instructions(harness, judge):
    j = judge(verdicts(("follows_instructions", False)))
    sample = EvalSample(query="hi", response="Yo.", instructions="Always greet formally.")
    r = harness.run("builtin.task_adherence", sample, judge_model=j.model)
    assert r.status == "fail" and r.score == 0.0
    assert "Always greet formally." in j.prompt(0)
    assert "follows_instructions" in j.prompt(0)


def test_without_criteria_or_instructions_it_is_missing_input(harness, judge):
    j = judge(verdicts(("x", True)))
    r = harness.run(
        "builtin.task_adherence", EvalSample(query="q", response="r"), judge_model=j.model
    )
    assert r.status == "error" and r.error.code == "missingInput" and j.calls == 0


def test_duplicate_criterion_names_are_told_apart(harness, judge):
    twice = [Criterion(name="c", instruction="One."), Criterion(name="c", instruction="Two.")]
    j = judge(verdicts(("c", True), ("c#2", False)))
    r = harness.run(
        "builtin.task_adherence",
        EvalSample(query="q", response="r", criteria=twice),
        judge_model=j.model,
    )
    assert [v["name"] for v in r.details["verdicts"]] == ["c", "c#2"]
    assert r.score == 0.5


# --- rubric ------------------------------------------------------------------------------------
DIMS = [
    {"id": "refund_accuracy", "description": "States the 30-day window.", "weight": 10},
    {"id": "tone", "description": "Polite and empathetic.", "weight": 4},
    {
        "id": "general_quality",
        "description": "Other quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]


@pytest.fixture
def rubric_file(harness):
    folder = harness.project_dir / "evaluators" / "support-quality"
    folder.mkdir(parents=True)
    path = folder / "rubric_dimensions.json"
    path.write_text(json.dumps(DIMS))
    return path


def dims_reply(*rows):
    return json.dumps(
        {
            "dimensions": [
                {"id": i, "applicable": a, "score": s, "reason": f"{i} r"} for i, a, s in rows
            ]
        }
    )


def test_rubric_math_with_always_applicable(harness, judge, rubric_file):
    # tone does not apply; general_quality is forced to apply although the judge said no
    j = judge(
        dims_reply(("refund_accuracy", True, 5), ("tone", False, 1), ("general_quality", False, 3))
    )
    r = harness.run("support-quality", EvalSample(query="q", response="r"), judge_model=j.model)
    wmean = (5 * 10 + 3 * 5) / 15
    assert r.score == pytest.approx((wmean - 1) / 4, abs=1e-6)
    assert r.normalized == pytest.approx((wmean - 1) / 4)
    assert r.status == "pass" and r.threshold == 0.5
    rows = {d["id"]: d for d in r.details["dimension_scores"]}
    assert rows["tone"] == {
        "id": "tone",
        "score": 1,
        "applicable": False,
        "weight": 4,
        "reason": "tone r",
    }
    assert rows["general_quality"]["applicable"] is True
    assert r.evaluator == "support-quality"


def test_rubric_fails_below_threshold(harness, judge, rubric_file):
    j = judge(
        dims_reply(("refund_accuracy", True, 2), ("tone", True, 3), ("general_quality", True, 2))
    )
    r = harness.run("support-quality", EvalSample(query="q", response="r"), judge_model=j.model)
    assert r.score == pytest.approx(((2 * 10 + 3 * 4 + 2 * 5) / 19 - 1) / 4)
    assert r.status == "fail"


def test_rubric_with_no_applicable_dimension_is_an_error(harness, judge):
    (harness.project_dir / "r.json").write_text(json.dumps(DIMS[:2]))
    j = judge(dims_reply(("refund_accuracy", False, 5), ("tone", False, 5)))
    r = harness.run(
        {"name": "q", "local_uri": "r.json"},
        EvalSample(query="q", response="r"),
        judge_model=j.model,
    )
    assert r.status == "error" and r.score is None and r.normalized is None
    assert r.error.code == "noApplicableDimension"
    assert len(r.details["dimension_scores"]) == 2


def test_rubric_missing_dimension_is_reasked(harness, judge, rubric_file):
    j = judge(
        dims_reply(("refund_accuracy", True, 4)),
        dims_reply(("refund_accuracy", True, 4), ("tone", True, 4), ("general_quality", True, 4)),
    )
    r = harness.run("support-quality", EvalSample(query="q", response="r"), judge_model=j.model)
    assert j.calls == 2 and r.score == pytest.approx(0.75)
    assert "'tone'" in j.requests[1].messages[-1].content


def test_rubric_prompt_marks_always_applicable_and_shows_ground_truth(harness, judge, rubric_file):
    j = judge(
        dims_reply(("refund_accuracy", True, 4), ("tone", True, 4), ("general_quality", True, 4))
    )
    harness.run(
        "support-quality",
        EvalSample(query="q", response="r", ground_truth="Thirty days."),
        judge_model=j.model,
    )
    assert "- id: general_quality (always applies)" in j.prompt(0)
    assert "Thirty days." in j.prompt(0)


def registry_yaml(project, name, version, threshold, dims):
    folder = project / ".azure" / ".foundry" / "evaluators"
    folder.mkdir(parents=True, exist_ok=True)
    body = {
        "name": name,
        "version": str(version),
        "type": "rubric",
        "threshold": threshold,
        "definition": {"dimensions": dims},
    }
    import yaml

    (folder / f"{name}.v{version}.yaml").write_text(yaml.safe_dump(body))


def test_registered_rubric_latest_or_pinned_version(harness, judge):
    registry_yaml(harness.project_dir, "quality", 1, 0.9, DIMS[:1])
    registry_yaml(harness.project_dir, "quality", 2, 0.2, DIMS[:2])
    reply = dims_reply(("refund_accuracy", True, 3), ("tone", True, 3))
    # Version 1 has no "tone": a reply naming it breaks that rubric's schema (its ids).
    j = judge(reply, dims_reply(("refund_accuracy", True, 3)))
    latest = harness.run("quality", EvalSample(query="q", response="r"), judge_model=j.model)
    assert latest.threshold == 0.2 and "- id: tone" in j.prompt(0)
    pinned = harness.run(
        {"name": "quality", "version": "1"},
        EvalSample(query="q", response="r"),
        judge_model=j.model,
    )
    assert pinned.threshold == 0.9 and pinned.status == "fail"
    assert "- id: tone" not in j.prompt(1)
    with pytest.raises(ConfigError, match="no version 7"):
        harness.build({"name": "quality", "version": "7"}, judge_model=j.model)


def test_broken_rubric_file_names_the_problem(harness, judge):
    (harness.project_dir / "bad.json").write_text(
        json.dumps([{"id": "x", "description": "d", "weight": 12}])
    )
    with pytest.raises(InputError) as err:
        harness.build({"name": "q", "local_uri": "bad.json"}, judge_model="mock:x")
    assert "weight" in str(err.value) and "bad.json" in str(err.value)

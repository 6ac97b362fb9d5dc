"""rubric_dimensions.json: what a person editing the rubric by hand sees when it is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files.rubric import (
    RubricDimension,
    dump_rubric,
    load_rubric,
    parse_rubric,
    rubric_problems,
)

GOOD = [
    {"id": "refund_accuracy", "description": "States the 30-day window.", "weight": 10},
    {"id": "tone", "description": "Polite.", "weight": 4},
    {
        "id": "general_quality",
        "description": "Other quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]


def test_load_good_rubric_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "rubric_dimensions.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    dims = load_rubric(path)
    assert [d.id for d in dims] == ["refund_accuracy", "tone", "general_quality"]
    assert dims[2].always_applicable and not dims[0].always_applicable
    assert json.loads(dump_rubric(dims)) == GOOD


@pytest.mark.parametrize(
    ("rows", "location", "message"),
    [
        (
            [{"id": "a", "description": "x", "weight": 12}],
            "[0].weight",
            "expected an integer 1–10, found 12",
        ),
        (
            [{"id": "a", "description": "x", "weight": 0}],
            "[0].weight",
            "expected an integer 1–10, found 0",
        ),
        ([{"id": "a", "description": "x", "weight": "5"}], "[0].weight", 'found "5"'),
        ([{"id": "a", "description": "x", "weight": 2.5}], "[0].weight", "found 2.5"),
        ([{"id": "a", "description": "x", "weight": True}], "[0].weight", "found true (a boolean)"),
        (
            [{"id": "Tone", "description": "x", "weight": 1}],
            "[0].id",
            'matching ^[a-z][a-z0-9_]*$, found "Tone"',
        ),
        ([{"id": "1x", "description": "x", "weight": 1}], "[0].id", 'found "1x"'),
        ([{"description": "x", "weight": 1}], "[0]", 'missing "id"'),
        ([{"id": "a", "weight": 1}], "[0]", 'missing "description"'),
        ([{"id": "a", "description": "", "weight": 1}], "[0].description", "found an empty string"),
        ([{"id": "a", "description": "x"}], "[0]", 'missing "weight"'),
        (
            [{"id": "a", "description": "x", "weight": 1, "always_applicable": "yes"}],
            "[0].always_applicable",
            "expected true or false",
        ),
        (
            [GOOD[0], dict(GOOD[0])],
            "[1].id",
            'duplicate id "refund_accuracy" (already used by [0])',
        ),
        (["tone"], "[0]", 'found "tone"'),
        ([], "", "expected at least one rubric dimension"),
        ({"tone": 4}, "", "expected a list of rubric dimensions, found a mapping"),
    ],
)
def test_errors_name_index_key_expected_and_found(rows, location, message) -> None:
    with pytest.raises(InputError) as info:
        parse_rubric(rows, "evaluators/q/rubric_dimensions.json")
    [problem] = info.value.problems
    assert problem.file == "evaluators/q/rubric_dimensions.json"
    assert problem.location == location
    assert message in problem.message


def test_every_problem_is_reported_not_only_the_first() -> None:
    rows = [
        {"id": "ok", "description": "x", "weight": 3},
        {"id": "Bad", "description": "x", "weight": 3},
        {"id": "c", "description": "x", "weight": 12},
    ]
    with pytest.raises(InputError) as info:
        parse_rubric(rows, "r.json")
    assert [p.location for p in info.value.problems] == ["[1].id", "[2].weight"]
    assert "r.json:[2].weight: expected an integer 1–10, found 12" in str(info.value)


@pytest.mark.parametrize("alias", ["dimension_id", "rubric_id"])
def test_id_aliases_are_read(alias: str) -> None:
    [dim] = parse_rubric([{alias: "tone", "description": "Polite.", "weight": 2}], "r.json")
    assert dim.id == "tone"


def test_unknown_key_warns_with_did_you_mean() -> None:
    rows = [{"id": "tone", "description": "Polite.", "wieght": 2, "weight": 2}]
    problems = rubric_problems(rows, "r.json")
    [warning] = problems
    assert warning.severity == "warning"
    assert warning.location == "[0].wieght"
    assert 'did you mean "weight"?' in warning.message


def test_invalid_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "rubric_dimensions.json"
    path.write_text('[\n  {"id": "a",\n  "weight": }\n]', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_rubric(path)
    assert info.value.problems[0].location.startswith("line 3")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_rubric(tmp_path / "nope.json")


def test_dimensions_wrapper_is_accepted() -> None:
    dims = parse_rubric({"dimensions": GOOD}, "x.yaml")
    assert len(dims) == 3 and isinstance(dims[0], RubricDimension)

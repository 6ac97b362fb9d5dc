"""Discovery order, the starter file, and ad-hoc prompts."""

from __future__ import annotations

import json

import jsonschema
import pytest

from agentopt.core.errors import ConfigError, InputError
from agentopt.datasets import (
    STARTER_QUESTION,
    dataset_from_prompts,
    discover_dataset,
    discovery_candidates,
    load_dataset,
    official_schema,
    write_starter_file,
)

ORDER = [
    "prompts.json",
    "evals.json",
    "tests.json",
    "evals/prompts.json",
    "evals/evals.json",
    "evals/tests.json",
]


def test_discovery_order(tmp_path):
    assert [p.relative_to(tmp_path).as_posix() for p in discovery_candidates(tmp_path)] == ORDER
    assert discover_dataset(tmp_path) is None
    for name in reversed(ORDER):
        target = tmp_path / name
        target.parent.mkdir(exist_ok=True)
        target.write_text("{}")
        assert discover_dataset(tmp_path) == target


def test_discovery_ignores_folders_named_like_files(tmp_path):
    (tmp_path / "prompts.json").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "tests.json").write_text("{}")
    assert discover_dataset(tmp_path) == tmp_path / "evals" / "tests.json"


def test_starter_question_text():
    assert STARTER_QUESTION == "Create a starter evals file with sample prompts?"  # + [Y/n]


def test_starter_file_is_a_valid_document_with_three_prompts(tmp_path):
    path = write_starter_file(tmp_path)
    assert path == tmp_path / "evals" / "evals.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(official_schema()).validate(document)
    ds = load_dataset(path, strict=True)
    assert len(ds.tasks) == 3 and all(t.ground_truth for t in ds.tasks)
    assert discover_dataset(tmp_path) == path


def test_starter_file_never_overwrites(tmp_path):
    existing = tmp_path / "evals" / "evals.json"
    existing.parent.mkdir()
    existing.write_text("mine")
    with pytest.raises(InputError) as info:
        write_starter_file(tmp_path)
    assert info.value.problems[0].file == str(existing)
    assert existing.read_text() == "mine"


def test_prompts_become_tasks():
    ds = dataset_from_prompts(["What is 2+2?", "Capital of France?"], ["4", "Paris"])
    assert ds.format == "adhoc"
    assert [(t.name, t.query, t.ground_truth) for t in ds.tasks] == [
        ("task_1", "What is 2+2?", "4"),
        ("task_2", "Capital of France?", "Paris"),
    ]
    assert (
        ds.sha256
        == dataset_from_prompts(["What is 2+2?", "Capital of France?"], ["4", "Paris"]).sha256
    )
    assert ds.sha256 != dataset_from_prompts(["What is 2+2?"]).sha256
    assert dataset_from_prompts(["hi"]).tasks[0].ground_truth is None


@pytest.mark.parametrize(
    ("prompts", "expected", "flag", "fragments"),
    [
        (["a", "b"], ["x"], "--expected", ["expected 2 values", "found 1"]),
        (["a"], ["x", "y"], "--expected", ["expected 1 value ", "found 2"]),
        ([], None, "--prompts", ["at least one prompt"]),
        (["a", " "], None, "--prompts", ["prompt 2", "empty"]),
    ],
)
def test_bad_adhoc_prompts(prompts, expected, flag, fragments):
    with pytest.raises(ConfigError) as info:
        dataset_from_prompts(prompts, expected)
    (problem,) = info.value.problems
    assert problem.location == flag
    for fragment in fragments:
        assert fragment in problem.message

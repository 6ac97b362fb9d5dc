"""Legacy M365 files are upgraded in place after a backup; --no-upgrade leaves them alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentopt.datasets import load_dataset, newest_known_version, validate_dataset

ARRAY = [
    {"prompt": "What is Graph?", "expected_response": "An API."},
    {"prompt": "Où est Zürich ? 日本", "expected_response": "En Suisse."},
]
LISTS = {"prompts": ["What is Graph?", "Hi"], "expected_responses": ["An API.", "Hello."]}


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak.*"))


@pytest.mark.parametrize(("content", "shape"), [(ARRAY, "array"), (LISTS, "prompts")])
def test_legacy_file_is_backed_up_then_rewritten(write, content, shape):
    path = write("prompts.json", content)
    original = path.read_bytes()
    ds = load_dataset(path)

    (backup,) = _backups(path)
    assert re.fullmatch(r"prompts\.json\.bak\.\d{14}", backup.name)
    assert backup.read_bytes() == original
    assert ds.upgrade is not None
    assert (ds.upgrade.path, ds.upgrade.backup, ds.upgrade.shape) == (str(path), str(backup), shape)

    rewritten = json.loads(path.read_text(encoding="utf-8"))
    assert rewritten["schemaVersion"] == newest_known_version()
    assert [i["prompt"] for i in rewritten["items"]] == [t.query for t in ds.tasks]
    assert ds.document == rewritten
    assert ds.format == "m365"
    assert ds.tasks[0].ground_truth == "An API."

    again = load_dataset(path, strict=True)
    assert again.upgrade is None and again.tasks == ds.tasks
    assert len(_backups(path)) == 1


def test_unicode_survives_the_upgrade(write):
    path = write("prompts.json", ARRAY)
    load_dataset(path)
    assert "Où est Zürich ? 日本" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("content", [ARRAY, LISTS])
def test_no_upgrade_reads_without_rewriting(write, content):
    path = write("prompts.json", content)
    original = path.read_bytes()
    ds = load_dataset(path, upgrade=False)
    assert path.read_bytes() == original
    assert _backups(path) == []
    assert ds.upgrade is not None and ds.upgrade.backup is None
    assert len(ds.tasks) == 2
    (warning,) = [w.message for w in ds.warnings if "legacy" in w.message]
    assert "left unchanged (--no-upgrade)" in warning
    assert "loading it upgrades" not in warning  # it said it would upgrade the file it kept


def test_validate_never_rewrites(write):
    path = write("prompts.json", ARRAY)
    original = path.read_bytes()
    problems = validate_dataset(path)
    assert [p.severity for p in problems] == ["warning"]
    assert path.read_bytes() == original and _backups(path) == []


def test_sha256_is_of_the_file_on_disk(write):
    import hashlib

    path = write("prompts.json", ARRAY)
    ds = load_dataset(path)
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_mismatched_lengths_are_a_clear_error_and_nothing_is_written(write, load_errors):
    path = write("prompts.json", {"prompts": ["a", "b", "c"], "expected_responses": ["x"]})
    original = path.read_bytes()
    (error,) = load_errors(path)
    assert error.location == "expected_responses"
    assert "expected 3 entries" in error.message and "found 1" in error.message
    assert path.read_bytes() == original and _backups(path) == []


def test_prompt_lists_without_expected_responses(write):
    ds = load_dataset(write("prompts.json", {"prompts": ["a", "b"]}), upgrade=False)
    assert [(t.query, t.ground_truth) for t in ds.tasks] == [("a", None), ("b", None)]


LEGACY_ERRORS = [
    ([], "", ["empty list"]),
    ([{"prompt": "a"}, "b"], "[1]", ['{"prompt": "..."}', 'the text "b"']),
    (
        [{"prompt": "a"}, {"expected_response": "b"}],
        "[1]",
        ['"prompt"', 'keys "expected_response"'],
    ),
    (
        [{"prompt": "a", "expected_response": 3}],
        "[0].expected_response",
        ["expected text", "the number 3"],
    ),
    ({"prompts": "a"}, "prompts", ["non-empty list", 'the text "a"']),
    ({"prompts": ["a", ""]}, "prompts[1]", ["non-empty text", "an empty string"]),
    (
        {"prompts": ["a"], "expected_responses": [None]},
        "expected_responses[0]",
        ["expected text", "null"],
    ),
]


@pytest.mark.parametrize(("content", "where", "fragments"), LEGACY_ERRORS)
def test_bad_legacy_files_name_the_legacy_location(write, load_errors, content, where, fragments):
    path = write("prompts.json", content)
    original = path.read_bytes()
    errors = load_errors(path)
    assert errors[0].location == where
    for fragment in fragments:
        assert fragment in errors[0].message, errors[0].message
    assert path.read_bytes() == original and _backups(path) == []


def test_other_root_keys_of_the_prompt_lists_shape_are_carried_over(write):
    path = write("prompts.json", {**LISTS, "description": "old notes"})
    load_dataset(path)
    assert json.loads(path.read_text(encoding="utf-8"))["description"] == "old notes"


def test_unwritable_legacy_file_is_a_clear_error(write, load_errors, tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    path = write("ro/prompts.json", ARRAY)
    original = path.read_bytes()
    (tmp_path / "ro").chmod(0o555)
    try:
        (error,) = load_errors(path)
        assert "--no-upgrade" in error.message
        assert path.read_bytes() == original
        assert len(load_dataset(path, upgrade=False).tasks) == 2
    finally:
        (tmp_path / "ro").chmod(0o755)

"""M365 eval documents (files.md §4.2): conformance with the official examples and samples,
mapping into tasks, compat vs strict, schemaVersion limits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentopt.datasets import EvaluatorRef, load_dataset, newest_known_version, validate_dataset

EXAMPLES = Path("schema/v1/examples")
SAMPLES = Path("samples")

# Every invalid example → the key path its first error must name.
INVALID_PATHS = {
    "allowed-tools-empty-identifier.json": "items[0].allowed_tools[0]",
    "custom-evaluator-name-not-identifier.json": 'items[0].evaluators["1bad_name"]',
    "empty-items.json": "items",
    "error-result-with-score.json": "items[0].scores.relevance.score",
    "invalid-semver.json": "schemaVersion",
    "missing-error-on-error.json": "items[0].scores.relevance.error",
    "missing-schema-version.json": "schemaVersion",
    "multi-turn-empty-turns.json": "items[0].turns",
    "multi-turn-has-both-prompt-and-turns.json": "items[0]",
    "multi-turn-missing-prompt.json": "items[0].turns[0].prompt",
    "multi-turn-typo-in-turn.json": "items[0].turns[0].expeceted_response",
    "retrieval-query-missing-capability.json": "items[0].evaluators.RetrievalQuery.capability",
    "retrieval-query-missing-selector.json": "items[0].evaluators.RetrievalQuery.selector",
    "retrieval-query-threshold-override.json": "items[0].evaluators.RetrievalQuery.threshold",
    "retrieval-result-missing-assertions.json": "items[0].evaluators.RetrievalResult",
    "wrong-type.json": "items",
}
LEGACY_SAMPLES = {
    "example_prompts.json",
    "example_prompts_alt.json",
    "prompts_ambiguity.json",
    "prompts_security_injection.json",
    "prompts_tool_use_negatives.json",
}


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.json"))


@pytest.mark.parametrize("strict", [False, True])
def test_every_valid_example_loads(m365, strict):
    folder = m365 / EXAMPLES / "valid"
    assert _names(folder), "no valid examples found"
    for name in _names(folder):
        path = folder / name
        before = path.read_bytes()
        ds = load_dataset(path, strict=strict)
        document = json.loads(before)
        assert ds.format == "m365" and ds.document == document, name
        assert len(ds.tasks) == len(document["items"]), name
        assert [t.index for t in ds.tasks] == list(range(len(ds.tasks)))
        assert len({t.name for t in ds.tasks}) == len(ds.tasks), name
        assert path.read_bytes() == before


@pytest.mark.parametrize("strict", [False, True])
def test_every_invalid_example_is_rejected_naming_the_key_path(m365, load_errors, strict):
    folder = m365 / EXAMPLES / "invalid"
    assert set(_names(folder)) == set(INVALID_PATHS), "update INVALID_PATHS for new examples"
    for name, key_path in INVALID_PATHS.items():
        errors = load_errors(folder / name, strict=strict)
        assert errors[0].location == key_path, (name, [str(e) for e in errors])
        assert errors[0].file == str(folder / name)
        for error in errors:
            assert "expected" in error.message or "unknown key" in error.message, str(error)
            assert "is not valid under any of the given schemas" not in error.message
            assert len(error.message) < 300


def test_invalid_messages_read_plainly(m365, load_errors):
    folder = m365 / EXAMPLES / "invalid"

    def first(name: str) -> str:
        return load_errors(folder / name)[0].message

    assert 'did you mean "expected_response"' in first("multi-turn-typo-in-turn.json")
    assert "found both" in first("multi-turn-has-both-prompt-and-turns.json")
    assert '"1bad_name"' in first("custom-evaluator-name-not-identifier.json")
    assert '"version-one"' in first("invalid-semver.json")
    assert "expected a list" in first("wrong-type.json")
    assert '"expected_items", "min_expected_count"' in first(
        "retrieval-result-missing-assertions.json"
    )


def test_every_sample_loads_in_compat_mode(m365, tmp_path):
    """Legacy-shaped samples are upgraded in place (here: in a copy), the rest load as is."""
    folder = m365 / SAMPLES
    assert set(_names(folder)) >= LEGACY_SAMPLES
    for name in _names(folder):
        path = Path(shutil.copy(folder / name, tmp_path / name))
        original = path.read_bytes()
        ds = load_dataset(path)
        assert ds.tasks, name
        if name in LEGACY_SAMPLES:
            assert ds.upgrade is not None and ds.upgrade.backup, name
            assert Path(ds.upgrade.backup).read_bytes() == original
            assert json.loads(path.read_bytes())["schemaVersion"] == newest_known_version()
            again = load_dataset(path, strict=True)
            assert again.upgrade is None and again.tasks == ds.tasks
        else:
            assert ds.upgrade is None and path.read_bytes() == original, name
            assert load_dataset(path, strict=True).tasks == ds.tasks


def test_single_turn_items_map_to_tasks(m365):
    ds = load_dataset(m365 / SAMPLES / "complex.json")
    assert ds.default_evaluators == [EvaluatorRef(name="Relevance"), EvaluatorRef(name="Coherence")]
    first, second = ds.tasks
    assert first.query == "What is Microsoft Graph?"
    assert first.ground_truth == "A unified API endpoint for Microsoft services."
    assert first.evaluators == [
        EvaluatorRef(name="Citations", options={"citation_format": "mixed"})
    ]
    assert first.evaluators_mode == "extend"
    assert second.evaluators_mode == "replace"
    assert [e.name for e in second.evaluators or []] == ["Citations", "ExactMatch"]
    assert second.evaluators[1].options == {"case_sensitive": False}  # type: ignore[index]


def test_threads_map_to_multi_turn_tasks(m365):
    ds = load_dataset(m365 / EXAMPLES / "valid" / "multi-turn-with-evaluators.json")
    (task,) = ds.tasks
    assert task.name == "Expense Policy Flow"
    assert task.description.startswith("Test that agent handles")  # type: ignore[union-attr]
    assert task.is_multi_turn and len(task.turns) == 3
    assert task.evaluators is None
    assert task.turns[0].evaluators is None and task.turns[0].evaluators_mode == "extend"
    assert task.turns[1].evaluators == [EvaluatorRef(name="Groundedness", options={"threshold": 4})]
    assert task.turns[2].evaluators_mode == "replace"
    assert task.turns[2].ground_truth.startswith("For expenses exceeding")  # type: ignore[union-attr]


def test_output_fields_are_kept_in_extra(m365):
    ds = load_dataset(m365 / EXAMPLES / "valid" / "comprehensive.json")
    document = json.loads((m365 / EXAMPLES / "valid" / "comprehensive.json").read_text())
    item = document["items"][0]
    assert ds.tasks[0].extra["response"] == item["response"]
    assert ds.tasks[0].extra["scores"] == item["scores"]
    assert ds.tasks[0].turns[0].context == item["context"]
    assert ds.name == document["metadata"]["name"]


def _doc(*items: dict, **root: object) -> dict:
    return {"schemaVersion": "1.6.0", "items": list(items), **root}


def test_compat_keys_accepted_and_kept_but_rejected_in_strict(write, load_errors):
    item = {"prompt": "p", "testId": "T-7", "category": "core", "notes": "n", "name": "first"}
    path = write("evals.json", _doc(item, {"prompt": "q"}, description="from the Learn docs"))
    ds = load_dataset(path)
    task = ds.tasks[0]
    assert (task.name, task.category) == ("first", "core")
    assert task.extra == {"testId": "T-7", "category": "core", "notes": "n", "name": "first"}
    assert ds.tasks[1].name == "task_2"
    assert ds.warnings == []
    errors = load_errors(path, strict=True)
    assert sorted(e.location for e in errors) == [
        "items[0].category",
        "items[0].name",
        "items[0].notes",
        "items[0].testId",
    ]
    assert all("accepted without --strict" in e.message for e in errors)


def test_compat_tolerates_exactly_those_keys(write, load_errors):
    doc = _doc(
        {"prompt": "p", "testId": "ok", "tesId": "typo"},
        {"name": "thread", "turns": [{"prompt": "a", "notes": "not tolerated in turns"}]},
        {"prompt": "x", "name": 5},
    )
    errors = load_errors(write("evals.json", doc))
    assert [e.location for e in errors] == [
        "items[0].tesId",
        "items[1].turns[0].notes",
        "items[2].name",
    ]
    assert 'did you mean "testId"' not in errors[0].message  # testId is not a schema key
    assert "expected text, found the number 5" in errors[2].message


def test_test_id_names_the_task_when_no_name(write):
    ds = load_dataset(write("e.json", _doc({"prompt": "p", "testId": 42})))
    assert ds.tasks[0].name == "42"


def test_repeated_thread_names_are_made_unique(write):
    thread = {"name": "flow", "turns": [{"prompt": "hi"}]}
    ds = load_dataset(write("e.json", _doc(thread, thread, thread)))
    assert [t.name for t in ds.tasks] == ["flow", "flow (2)", "flow (3)"]
    assert ds.document["items"][1]["name"] == "flow"  # type: ignore[index]


def test_unknown_root_key_warns_with_did_you_mean(write):
    ds = load_dataset(write("e.json", _doc({"prompt": "p"}, default_evaluator={"Relevance": {}})))
    (warning,) = ds.warnings
    assert warning.location == "default_evaluator"
    assert 'did you mean "default_evaluators"' in warning.message
    assert ds.default_evaluators is None


@pytest.mark.parametrize(
    ("version", "fragments"),
    [
        ("2.0.0", ["major version 1", '"2.0.0"']),
        ("0.9.0", ["major version 1", '"0.9.0"']),
        ("1.x", ['expected a version like "1.', '"1.x"']),
        (1.2, ["expected text", "the number 1.2"]),
    ],
)
def test_unsupported_schema_versions(write, load_errors, version, fragments):
    (error,) = load_errors(write("e.json", {"schemaVersion": version, "items": [{"prompt": "p"}]}))
    assert error.location == "schemaVersion"
    for fragment in fragments:
        assert fragment in error.message


@pytest.mark.parametrize("version", ["1.7.5", "1.8.0", "1.9.0", "1.10.0", "1.11.0", "1.11.3"])
def test_every_known_minor_and_patch_loads_without_warning(write, version):
    path = write("e.json", _doc({"prompt": "p"}) | {"schemaVersion": version})
    assert load_dataset(path).warnings == []
    assert validate_dataset(path, strict=True) == []


def test_a_version_part_of_thousands_of_digits_is_read_without_a_traceback(write):
    """Found by the loader fuzz (seed 202): "1.0.999…" with 5,000 nines made `int()` raise
    (Python refuses more than 4,300 digits). Such a part is not read as a number: the
    document loads as one without a version it knows, and no warning claims one."""
    doc = _doc({"prompt": "p"}) | {"schemaVersion": "1.0." + "9" * 5000}
    ds = load_dataset(write("e.json", doc))
    assert [t.query for t in ds.tasks] == ["p"]
    assert not [w for w in ds.warnings if w.location == "schemaVersion"]


def test_a_newer_minor_is_read_in_compat_mode_with_one_warning(write):
    doc = _doc({"prompt": "p", "future_key": 1}) | {"schemaVersion": "1.99.0"}
    ds = load_dataset(write("e.json", doc))
    assert [t.query for t in ds.tasks] == ["p"]
    notes = [w for w in ds.warnings if w.location == "schemaVersion"]
    assert len(notes) == 1 and "compat mode" in notes[0].message and '"1.99.0"' in notes[0].message
    # the key the newer minor added is kept and named, not refused
    assert any(w.location == "items[0].future_key" for w in ds.warnings)
    assert ds.tasks[0].extra["future_key"] == 1
    # --strict validates against the newest shipped schema: the unknown key is an error there
    strict = validate_dataset(write("e.json", doc), strict=True)
    assert [p.location for p in strict if p.severity == "error"] == ["items[0].future_key"]


def test_allowed_tools_resolve_like_evaluators_mode(m365):
    ds = load_dataset(m365 / EXAMPLES / "valid" / "allowed-tools.json")
    plain, extended, replaced, thread = ds.tasks
    assert plain.turns[0].allowed_tools == ["github_orgs_get"]
    docs_search = "learnmicro_microsoft_docs_search"
    assert extended.turns[0].allowed_tools == ["github_orgs_get", docs_search]
    assert replaced.turns[0].allowed_tools == []
    assert thread.turns[0].allowed_tools == [docs_search]
    assert thread.turns[1].allowed_tools == ["github_orgs_get"]
    # no list anywhere: no restriction
    assert load_dataset(m365 / SAMPLES / "starter.json").tasks[0].turns[0].allowed_tools is None


def test_captured_responses_and_tags_map_to_turns(write):
    doc = _doc(
        {"prompt": "p", "response": "captured", "tags": ["smoke"]},
        {"turns": [{"prompt": "a", "response": "ra"}, {"prompt": "b"}], "tags": ["t"]},
    )
    single, thread = load_dataset(write("e.json", doc | {"schemaVersion": "1.10.0"})).tasks
    assert single.turns[0].response == "captured" and single.tags == ["smoke"]
    assert [t.response for t in thread.turns] == ["ra", None] and thread.tags == ["t"]


def test_newest_known_version_loads(write):
    assert load_dataset(
        write("e.json", _doc({"prompt": "p"}) | {"schemaVersion": newest_known_version()})
    )


def test_all_errors_reported_with_paths(write):
    doc = _doc(
        {"prompt": ""},
        {"prompt": "ok", "evaluators_mode": "merge"},
        {
            "turns": [
                {"prompt": "a"},
                {"prompt": "b", "evaluators": {"Relevance": {"threshold": 9}}},
            ]
        },
        "text",
    )
    problems = validate_dataset(write("e.json", doc))
    assert [(p.location, p.severity) for p in problems] == [
        ("items[0].prompt", "error"),
        ("items[1].evaluators_mode", "error"),
        ("items[2].turns[1].evaluators.Relevance.threshold", "error"),
        ("items[3]", "error"),
    ]
    assert "≤ 5" in problems[2].message and "the number 9" in problems[2].message


def test_document_that_is_not_an_object_of_the_right_kind(write, load_errors):
    (error,) = load_errors(write("e.json", {"title": "no items here", "questions": []}))
    assert error.location == ""
    assert "schemaVersion" in error.message and 'keys "title", "questions"' in error.message

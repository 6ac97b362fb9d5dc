"""Foundry task JSONL (files.md §4.1): fields, aliases, and every error naming its line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.datasets import Criterion, EvaluatorRef, load_dataset, validate_dataset


def test_full_record_loads_every_field(write, jsonl):
    path = write(
        "tasks.jsonl",
        jsonl(
            {
                "name": "refund",
                "query": "Can I return shoes after 40 days?",
                "ground_truth": "No, the window is 30 days.",
                "criteria": [
                    {"name": "window", "instruction": "States the 30-day window."},
                    "Is polite.",
                ],
                "category": "edge",
                "tags": ["refund", "policy"],
                "metadata": {"source": "faq"},
                "tool_mocks": {"lookup_order": {"status": "delivered"}},
                "desired_num_turns": 3,
            }
        ),
    )
    ds = load_dataset(path)
    assert ds.format == "jsonl"
    (task,) = ds.tasks
    assert task.name == "refund"
    assert task.query == "Can I return shoes after 40 days?"
    assert task.ground_truth == "No, the window is 30 days."
    assert task.criteria == [
        Criterion(name="window", instruction="States the 30-day window."),
        Criterion(name="criterion_2", instruction="Is polite."),
    ]
    assert (task.category, task.tags, task.metadata) == (
        "edge",
        ["refund", "policy"],
        {"source": "faq"},
    )
    assert task.tool_mocks == {"lookup_order": {"status": "delivered"}}
    assert task.desired_num_turns == 3
    assert task.line == 1 and task.index == 0
    assert ds.warnings == []


@pytest.mark.parametrize("query_key", ["query", "prompt", "question"])
@pytest.mark.parametrize("truth_key", ["ground_truth", "groundTruth", "expected_response"])
def test_aliases(write, jsonl, query_key, truth_key):
    ds = load_dataset(write("a.jsonl", jsonl({query_key: "Q?", truth_key: "A."})))
    assert (ds.tasks[0].query, ds.tasks[0].ground_truth) == ("Q?", "A.")


def test_blank_lines_skipped_names_generated_and_lines_kept(write):
    text = '\n{"query": "one"}\n   \n{"name": "two", "query": "two"}\n{"query": "three"}\n\n'
    ds = load_dataset(write("a.jsonl", text))
    assert [t.name for t in ds.tasks] == ["task_1", "two", "task_3"]
    assert [t.line for t in ds.tasks] == [2, 4, 5]
    assert [t.index for t in ds.tasks] == [0, 1, 2]


def test_generated_name_never_collides_with_an_explicit_one(write, jsonl):
    ds = load_dataset(write("a.jsonl", jsonl({"query": "a"}, {"name": "task_1", "query": "b"})))
    names = [t.name for t in ds.tasks]
    assert len(set(names)) == 2 and "task_1" in names


def test_multi_turn_task(write, jsonl):
    record = {
        "name": "trip",
        "turns": [
            {"prompt": "I'm going to Seattle.", "expected_response": "Happy to help."},
            {
                "query": "Bring a jacket?",
                "ground_truth": "Yes.",
                "evaluators": {"Groundedness": {"threshold": 4}},
                "evaluators_mode": "replace",
            },
        ],
        "criteria": ["Remembers the city."],
    }
    (task,) = load_dataset(write("a.jsonl", jsonl(record))).tasks
    assert task.is_multi_turn and len(task.turns) == 2
    assert task.turns[1].ground_truth == "Yes."
    assert task.turns[1].evaluators == [EvaluatorRef(name="Groundedness", options={"threshold": 4})]
    assert task.turns[1].evaluators_mode == "replace"
    # Task-level criteria are conversation checks: judged after the last turn.
    assert task.turns[-1].criteria == [
        Criterion(name="criterion_1", instruction="Remembers the city.")
    ]


def test_unknown_keys_warn_once_per_key_with_did_you_mean_and_are_kept(write, jsonl):
    path = write(
        "a.jsonl",
        jsonl({"query": "a", "categroy": "x"}, {"query": "b", "categroy": "y", "answer": "z"}),
    )
    ds = load_dataset(path)
    assert ds.tasks[0].extra == {"categroy": "x"}
    assert ds.tasks[1].extra == {"categroy": "y", "answer": "z"}
    by_key = {w.message.split('"')[1]: w for w in ds.warnings}
    assert set(by_key) == {"categroy", "answer"}
    assert all(w.severity == "warning" and w.file == str(path) for w in ds.warnings)
    assert by_key["categroy"].location == "line 1"
    assert 'did you mean "category"' in by_key["categroy"].message
    assert "1 more line" in by_key["categroy"].message
    assert 'did you mean "ground_truth"' in by_key["answer"].message


def test_foundry_sample_loads_with_warnings_for_its_own_keys(reference, tmp_path):
    sample = reference / "azd/foundry-samples"
    src = sample / "samples_python_enterprise-agent-tutorial_1-idea-to-prototype_questions.jsonl"
    path = Path(shutil.copy(src, tmp_path / "questions.jsonl"))
    ds = load_dataset(path)
    assert len(ds.tasks) == 12
    first = json.loads(src.read_text(encoding="utf-8").splitlines()[0])
    assert ds.tasks[0].query == first["question"]
    assert ds.tasks[0].extra["test_type"] == first["test_type"]
    assert {w.message.split('"')[1] for w in ds.warnings} >= {"test_type", "expected_source"}


def test_unicode_is_kept(write, jsonl):
    ds = load_dataset(
        write(
            "ü.jsonl", jsonl({"name": "日本", "query": "¿Qué tal? 👋", "ground_truth": "Très bien"})
        )
    )
    assert (ds.tasks[0].name, ds.tasks[0].query, ds.tasks[0].ground_truth) == (
        "日本",
        "¿Qué tal? 👋",
        "Très bien",
    )


def test_numeric_ground_truth_is_read_as_text(write, jsonl):
    assert (
        load_dataset(write("a.jsonl", jsonl({"query": "2+2?", "ground_truth": 4})))
        .tasks[0]
        .ground_truth
        == "4"
    )


# (line content, expected line, fragments the message must contain: expected and found)
ERROR_CASES = [
    ("not json", "line 2", ["expected a JSON object", "invalid JSON"]),
    ("[1, 2]", "line 2", ["expected a JSON object", "a list of 2 items"]),
    ('{"ground_truth": "x"}', "line 2", ['"query"', '"turns"', 'keys "ground_truth"']),
    ('{"query": 5}', "line 2", ["query:", "expected text", "the number 5"]),
    ('{"query": "   "}', "line 2", ["query:", "non-empty", "blank"]),
    ('{"query": "q", "prompt": "p"}', "line 2", ['"query" and "prompt"', "keep only one"]),
    ('{"query": "q", "tags": "a,b"}', "line 2", ["tags:", "list of strings", 'the text "a,b"']),
    ('{"query": "q", "metadata": [1]}', "line 2", ["metadata:", "an object", "a list of 1 item"]),
    ('{"query": "q", "category": 3}', "line 2", ["category:", "expected text", "the number 3"]),
    ('{"query": "q", "desired_num_turns": 21}', "line 2", ["desired_num_turns", "1 to 20", "21"]),
    ('{"query": "q", "desired_num_turns": true}', "line 2", ["desired_num_turns", "boolean true"]),
    (
        '{"query": "q", "criteria": "be nice"}',
        "line 2",
        ["criteria:", "expected a list", 'the text "be nice"'],
    ),
    (
        '{"query": "q", "criteria": [{"name": "x"}]}',
        "line 2",
        ["criteria[0].instruction", "found nothing"],
    ),
    ('{"query": "q", "criteria": [7]}', "line 2", ["criteria[0]", "the number 7"]),
    (
        '{"query": "q", "criteria": ["a", {"name": "criterion_1", "instruction": "b"}]}',
        "line 2",
        ["duplicate criterion name"],
    ),
    ('{"turns": []}', "line 2", ["turns:", "non-empty list", "an empty list"]),
    (
        '{"turns": [{"expected_response": "x"}]}',
        "line 2",
        ["turns[0]", '"prompt"', 'keys "expected_response"'],
    ),
    ('{"turns": ["hi"]}', "line 2", ["turns[0]", "turn object", 'the text "hi"']),
    (
        '{"turns": [{"prompt": "a"}], "query": "b"}',
        "line 2",
        ["query:", "not allowed beside turns"],
    ),
    ('{"name": "", "query": "q"}', "line 2", ["name:", "non-empty", "an empty string"]),
    (
        '{"query": "q", "evaluators_mode": "merge"}',
        "line 2",
        ['"extend" or "replace"', 'the text "merge"'],
    ),
]


@pytest.mark.parametrize(("line", "where", "fragments"), ERROR_CASES)
def test_bad_line_names_file_line_expected_and_found(write, load_errors, line, where, fragments):
    path = write("bad.jsonl", '{"query": "fine"}\n' + line + "\n")
    errors = load_errors(path)
    assert [e.location for e in errors] == [where] * len(errors)
    assert all(e.file == str(path) for e in errors)
    text = " ".join(e.message for e in errors)
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in {text!r}"
    assert str(path) in str(errors[0]) and where in str(errors[0])


def test_too_many_turns(write, jsonl, load_errors):
    errors = load_errors(
        write("a.jsonl", jsonl({"turns": [{"prompt": str(n)} for n in range(21)]}))
    )
    assert "at most 20 turns, found 21" in errors[0].message


def test_duplicate_names_name_both_lines(write, jsonl, load_errors):
    path = write(
        "a.jsonl",
        jsonl(
            {"name": "x", "query": "a"}, {"name": "y", "query": "b"}, {"name": "x", "query": "c"}
        ),
    )
    (error,) = load_errors(path)
    assert error.location == "line 3"
    assert "line 1" in error.message and '"x"' in error.message and "unique" in error.message


def test_every_later_duplicate_names_the_first_line_and_generated_names_avoid_given_ones(
    write, jsonl, load_errors
):
    records = [
        {"name": "x", "query": "a"},
        {"query": "b"},  # task_2 is given below, and task_2_2 too
        {"name": "x", "query": "c"},
        {"name": "task_2", "query": "d"},
        {"name": "task_2_2", "query": "e"},
        {"name": "x", "query": "f"},
    ]
    path = write("a.jsonl", jsonl(*records))
    errors = load_errors(path)
    assert [(e.location, "line 1" in e.message) for e in errors] == [
        ("line 3", True),
        ("line 6", True),
    ]
    del records[2], records[-1]
    ds = load_dataset(write("b.jsonl", jsonl(*records)))
    assert [t.name for t in ds.tasks] == ["x", "task_2_3", "task_2", "task_2_2"]


@pytest.mark.parametrize("named", [True, False], ids=["named", "unnamed"])
def test_loading_holds_no_name_objects_per_task(monkeypatch, named):
    """A load's peak beyond the file's text and the packed tasks' JSON (in a temporary file
    past `SPILL_BYTES`) grows ~36 bytes a task (the packed tasks' ends, the names' hashes and
    lines); every name as a string, with a dict of first lines, took ~140 (16 MB at 100,000
    tasks, the peak of a whole run). Unnamed tasks too: each was read back, named and packed
    again beside the first copy (~190 bytes a task)."""
    import tracemalloc

    from agentopt.contracts import packed_tasks
    from agentopt.datasets.jsonl import load_jsonl

    monkeypatch.setattr(packed_tasks, "SPILL_BYTES", 1 << 15)  # as 100,000 tasks' JSON does

    def text(n: int) -> str:
        if not named:
            return "".join(f'{{"query": "item {i}"}}\n' for i in range(n))
        return "".join(f'{{"name": "t{i}", "query": "item {i}"}}\n' for i in range(n))

    load_jsonl(text(10), "warm")
    peaks = []
    for n in (1_000, 8_000):
        given = text(n)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tasks, log = load_jsonl(given, "tasks.jsonl")
            peaks.append(tracemalloc.get_traced_memory()[1] - base)
        finally:
            tracemalloc.stop()
        assert not log.errors and len(tasks) == n
    per_task = (peaks[1] - peaks[0]) / 7_000
    assert per_task < 64, f"{per_task:.0f} bytes a task"


def test_every_problem_is_collected_not_only_the_first(write, load_errors):
    path = write("a.jsonl", 'oops\n{"query": "ok"}\n{"query": 1}\n[]\n')
    assert [e.location for e in load_errors(path)] == ["line 1", "line 3", "line 4"]


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(write, load_errors, content):
    (error,) = load_errors(write("a.jsonl", content))
    assert "empty file" in error.message and "expected" in error.message


def test_pretty_printed_document_in_jsonl_gets_a_hint(write, load_errors):
    path = write(
        "a.jsonl", json.dumps({"schemaVersion": "1.2.0", "items": [{"prompt": "x"}]}, indent=2)
    )
    messages = " ".join(e.message for e in load_errors(path))
    assert ".json extension" in messages


def test_validate_returns_errors_and_warnings_without_raising(write):
    path = write("a.jsonl", '{"query": "a", "extra_key": 1}\n{"query": 2}\n')
    problems = validate_dataset(path)
    assert [(p.severity, p.location) for p in problems] == [
        ("warning", "line 1"),
        ("error", "line 2"),
    ]


PLAIN_ROWS = [
    {"name": "refund", "query": "Can I return shoes?", "ground_truth": "Within 30 days."},
    {"query": "Where is my order?"},
    {"ground_truth": "", "query": "Say nothing", "name": "t-2"},
    {"name": "ünïcode", "query": "Grüße — 你好", "ground_truth": "☃"},
]


def test_plain_records_load_as_the_general_reader_loads_them(write, jsonl, monkeypatch):
    """The reader's short road for {name, query, ground_truth} rows gives the very tasks the
    general one gives: same fields, same fields set (a unit replay keys on their JSON)."""
    from agentopt.contracts.packed_tasks import task_json
    from agentopt.datasets import foundry

    path = write("tasks.jsonl", jsonl(*PLAIN_ROWS))
    fast = load_dataset(path).tasks
    monkeypatch.setattr(foundry, "_plain_task", lambda *_: None)
    general = load_dataset(path).tasks
    assert [t.name for t in fast] == ["refund", "task_2", "t-2", "ünïcode"]
    assert [task_json(t) for t in fast] == [task_json(t) for t in general]
    assert [t.model_dump() for t in fast] == [t.model_dump() for t in general]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"name": "  ", "query": "q"}, "expected a non-empty task name"),
        ({"name": "a", "query": ""}, "expected non-empty text"),
        ({"name": "a", "query": "q", "ground_truth": ["x"]}, "expected text, found"),
    ],
)
def test_plain_looking_records_the_short_road_refuses_are_checked_in_full(
    write, jsonl, row, message
):
    path = write("tasks.jsonl", jsonl(row))
    with pytest.raises(InputError, match=message) as info:
        load_dataset(path)
    assert "line 1" in str(info.value)


def test_a_number_as_the_expected_answer_is_still_read_as_its_text(write, jsonl):
    path = write("tasks.jsonl", jsonl({"name": "a", "query": "q", "ground_truth": 42}))
    assert load_dataset(path).tasks[0].ground_truth == "42"
